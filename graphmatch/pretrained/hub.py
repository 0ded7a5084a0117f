"""HuggingFace hub ids as ``model.pretrained``: the local snapshot of a model, the cache first and
``HF_HUB_OFFLINE`` honoured. Every request to the hub has connect, read, write and pool timeouts
of :func:`hub_timeout` seconds (``$GRAPHMATCH_HUB_TIMEOUT``, default 30): ``huggingface_hub``
sends its first look-up (the repository's files) with none, so a network that accepts and never
answers would hold a run forever."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: files a hub snapshot needs (weights in one format: safetensors when the repo has them)
_HUB_PATTERNS = ["*.json", "*.txt", "model.safetensors*", "pytorch_model.bin*"]
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")
#: the environment variable of :func:`hub_timeout`
TIMEOUT_ENV = "GRAPHMATCH_HUB_TIMEOUT"
DEFAULT_TIMEOUT_S = 30.0


def hub_timeout() -> float:
    """Seconds a hub request may wait to connect or for the next bytes: ``$GRAPHMATCH_HUB_TIMEOUT``
    (a positive number), else 30. A bad value is a one-line ValueError naming the variable."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value < float("inf"):
        raise ValueError(f"{TIMEOUT_ENV}={text!r}: give the hub's timeout in seconds, a positive number")
    return value


@contextlib.contextmanager
def bounded_requests(seconds: float) -> Iterator[None]:
    """While the block runs, each request of ``huggingface_hub``'s shared session that has no
    timeout of its own (connect, read, write, pool) gets ``seconds`` (a request hook, removed
    afterwards)."""
    from huggingface_hub import get_session

    def bound(request: Any) -> None:
        limits = dict(request.extensions.get("timeout") or {})
        request.extensions["timeout"] = {k: seconds if limits.get(k) is None else limits[k]
                                         for k in ("connect", "read", "write", "pool")}

    session = get_session()
    hooks = session.event_hooks
    session.event_hooks = {**hooks, "request": [*hooks.get("request", []), bound]}
    try:
        yield
    finally:
        hooks = session.event_hooks
        session.event_hooks = {**hooks, "request": [h for h in hooks.get("request", []) if h is not bound]}


def _timed_out(err: BaseException) -> bool:
    """Whether ``err`` or an error that led to it is a network timeout."""
    seen: set[int] = set()
    cause: BaseException | None = err
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if "Timeout" in type(cause).__name__ or isinstance(cause, TimeoutError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


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
    cache first; no download with ``HF_HUB_OFFLINE=1``; requests bounded by :func:`hub_timeout`).
    Not cached and not reachable: one-line :class:`FileNotFoundError` naming the id and the cache
    folder (and the timeout when the hub did not answer in time)."""
    from huggingface_hub import snapshot_download

    cache, offline, timeout = hub_cache(), _hub_offline(), hub_timeout()
    try:
        with bounded_requests(timeout):
            return Path(snapshot_download(name, cache_dir=str(cache), local_files_only=offline,
                                          allow_patterns=_HUB_PATTERNS, etag_timeout=timeout))
    except Exception as err:  # not cached, offline, no network, no such repository
        if offline:
            why = "HF_HUB_OFFLINE is set"
        elif _timed_out(err):
            why = f"the hub did not answer within {timeout:g} s; {TIMEOUT_ENV} sets the limit"
        else:
            why = f"{type(err).__name__}: {(str(err).splitlines() or [''])[0]}"
        raise FileNotFoundError(f"{key} {name!r}: no local folder of that name, and the HuggingFace hub model "
                                f"{name!r} is not in the cache {cache} and cannot be downloaded ({why})") from err
