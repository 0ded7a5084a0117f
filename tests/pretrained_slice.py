"""A pretrained encoder's folder cut to its first layers, for end-to-end tests of what does not
depend on depth (its tokenizer, its embedding table, loading, training, a run folder) at a
fraction of the full encoder's cost."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from safetensors import safe_open
from safetensors.torch import save_file

_LAYER = re.compile(r"(?:^|\.)layer\.(\d+)\.")


def slice_layers(source: Path, dest: Path, layers: int) -> Path:
    """``dest``: the HuggingFace BERT folder ``source`` with only its first ``layers`` layers
    (``config.json``'s ``num_hidden_layers`` and the tensors of ``model.safetensors``); every other
    file is copied as it is. Written under a temporary name and renamed, so a folder that exists
    is whole."""
    part = dest.with_name(dest.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True)
    for f in source.iterdir():
        if f.is_file() and f.name not in ("config.json", "model.safetensors"):
            shutil.copy(f, part / f.name)
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    assert config["num_hidden_layers"] >= layers, config["num_hidden_layers"]
    (part / "config.json").write_text(json.dumps({**config, "num_hidden_layers": layers}, indent=2))
    with safe_open(source / "model.safetensors", "pt") as weights:
        names = list(weights.keys())  # not iterable itself
        kept = {name: weights.get_tensor(name) for name in names
                if (found := _LAYER.search(name)) is None or int(found.group(1)) < layers}
        save_file(kept, part / "model.safetensors", metadata=weights.metadata())
    part.rename(dest)
    return dest
