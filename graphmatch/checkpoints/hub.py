"""HuggingFace hub ids as ``model.pretrained``: the local snapshot of a model, the cache first and
``HF_HUB_OFFLINE`` honoured."""

from __future__ import annotations

import os
import re
from pathlib import Path

#: files a hub snapshot needs (weights in one format: safetensors when the repo has them)
_HUB_PATTERNS = ["*.json", "*.txt", "model.safetensors*", "pytorch_model.bin*"]
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def hub_cache() -> Path:
    """The HuggingFace hub cache folder, as ``huggingface_hub`` finds it (read when called)."""
    env = os.environ
    cache = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if cache:
        return Path(cache).expanduser()
    home = env.get("HF_HOME") or os.path.join(env.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def is_hub_id(name: str) -> bool:
    """Whether ``name`` can be a HuggingFace hub model id (``bert-base-chinese``, ``hfl/chinese-roberta-wwm-ext``)."""
    return bool(_HUB_ID.match(name)) and ".." not in name


def hub_snapshot(name: str, key: str = "model.pretrained") -> Path:
    """The local snapshot folder of hub model ``name`` (``huggingface_hub.snapshot_download``: the
    cache first; no download with ``HF_HUB_OFFLINE=1``). Not cached and not reachable: one-line
    :class:`FileNotFoundError` naming the id and the cache folder."""
    from huggingface_hub import snapshot_download

    cache, offline = hub_cache(), _hub_offline()
    try:
        return Path(snapshot_download(name, cache_dir=str(cache), local_files_only=offline,
                                      allow_patterns=_HUB_PATTERNS))
    except Exception as err:  # not cached, offline, no network, no such repository
        why = "HF_HUB_OFFLINE is set" if offline else f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"
        raise FileNotFoundError(f"{key} {name!r}: no local folder of that name, and the HuggingFace hub model "
                                f"{name!r} is not in the cache {cache} and cannot be downloaded ({why})") from err
