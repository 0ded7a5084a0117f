"""Checkpoints: what graphmatch stores in them, reading them back with clear errors, and the
atomic writer Lightning saves them with.

A graphmatch checkpoint is a Lightning checkpoint whose ``"graphmatch"`` entry holds the task
name, the resolved configuration, the label names, the task's extra state (vocabularies),
the evaluation history, the random-number-generator states and the training time so far. The
model weights are Lightning's ``state_dict`` with the prefix ``model.``.
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

META = "graphmatch"
PREFIX = "model."


def find_checkpoint(run_or_ckpt: str | os.PathLike, which: str = "best") -> Path:
    """``run_or_ckpt`` itself if it is a file, else ``<run folder>/<which>.ckpt``."""
    path = Path(run_or_ckpt)
    if path.is_file():
        return path
    if path.is_dir():
        ckpt = path / f"{which}.ckpt"
        if ckpt.is_file():
            return ckpt
        raise FileNotFoundError(f"run folder {path} has no {which}.ckpt")
    raise FileNotFoundError(f"no run folder or checkpoint at {path}")


#: how a file written by ``torch.save`` starts: a zip archive (the default) or a legacy pickle
TORCH_FILE_MAGIC = (b"PK\x03\x04", b"\x80")


def refused_global(err: BaseException) -> str | None:
    """The Python global (``os.system``) a ``weights_only`` load refused, from torch's message; ``None``
    for any other failure."""
    found = re.search(r"unsupported GLOBAL ([\w.]+)|global: GLOBAL ([\w.]+)|global ([\w.]+) was not an allowed",
                      str(err), re.IGNORECASE)
    return next(name for name in found.groups() if name) if found else None


def unreadable(path: str | os.PathLike, err: BaseException, what: str = "is not a readable checkpoint") -> str:
    """One line for a checkpoint ``torch.load`` refused: the pickle global it names (nothing was
    run), else ``what`` and the first line of the error."""
    name = refused_global(err)
    if name is not None:
        return (f"{path} is refused: it names the Python global {name}, which a checkpoint may not hold "
                "(loading it could run code); nothing was run")
    reason = (str(err).strip().splitlines() or [""])[0][:200]
    return f"{path} {what} ({type(err).__name__}: {reason})"


def read_checkpoint(path: str | os.PathLike) -> dict[str, Any]:
    """Load a checkpoint on the CPU; a file that is not a graphmatch checkpoint is a ValueError
    (one line, whatever torch says)."""
    with open(path, "rb") as f:
        head = f.read(4)
    if not head.startswith(TORCH_FILE_MAGIC):
        raise ValueError(f"{path} is not a checkpoint (a torch.save file); give a run folder or its best.ckpt")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - any unpickling failure means the same to the user
        raise ValueError(unreadable(path, err)) from err
    if not isinstance(ckpt, dict) or META not in ckpt or "state_dict" not in ckpt:
        raise ValueError(f"{path} is not a graphmatch checkpoint (no {META!r} entry); was it written by another tool?")
    return ckpt


def model_state(ckpt: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """The model's weights from a checkpoint (Lightning's ``model.`` prefix removed)."""
    return {k[len(PREFIX) :]: v for k, v in ckpt["state_dict"].items() if k.startswith(PREFIX)}


def check_state_dict(model: torch.nn.Module, state: Mapping[str, torch.Tensor], source: str) -> None:
    """Raise a ValueError naming the differences when ``state`` does not fit ``model`` exactly;
    ``state`` has the current parameter names (an older checkpoint's upgraded by its task:
    :meth:`Task.upgrade_state_dict <graphmatch.tasks.base.Task.upgrade_state_dict>`)."""
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    shapes = [
        f"{k}: checkpoint {tuple(state[k].shape)} vs model {tuple(own[k].shape)}"
        for k in own
        if k in state and hasattr(state[k], "shape") and tuple(state[k].shape) != tuple(own[k].shape)
    ]
    if missing or unexpected or shapes:
        parts = []
        if missing:
            parts.append(f"missing {len(missing)} (e.g. {', '.join(missing[:3])})")
        if unexpected:
            parts.append(f"unexpected {len(unexpected)} (e.g. {', '.join(unexpected[:3])})")
        if shapes:
            parts.append(f"shape mismatch {len(shapes)} (e.g. {'; '.join(shapes[:3])})")
        raise ValueError(
            f"checkpoint {source} does not fit the model built from its configuration: {'; '.join(parts)}. "
            "It comes from an incompatible model or graphmatch version; nothing was loaded."
        )


def rng_states() -> dict[str, Any]:
    """The states of Python's, NumPy's and torch's (CPU and CUDA) generators, as tensors and
    plain values (so that ``torch.load(weights_only=True)`` reads them)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    version, internal, gauss = random.getstate()
    states: dict[str, Any] = {
        "python": [version, torch.tensor(internal, dtype=torch.int64), gauss],
        "numpy": [name, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: Mapping[str, Any]) -> None:
    """Restore what :func:`rng_states` returned."""
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(int(i) for i in internal.tolist()), gauss))
    name, keys, pos, has_gauss, cached = states["numpy"]
    np.random.set_state((name, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
