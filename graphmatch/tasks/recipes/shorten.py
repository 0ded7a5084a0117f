"""``GRAPHMATCH_SHORTEN=1``: every recipe resolved for a new run trains for a moment.

Meant for testing commands (``tests/test_doc_commands.py`` runs every command of the docs with
it): one epoch over at most :data:`TRAIN_BATCHES` training batches of at most :data:`BATCH_SIZE`,
at most :data:`EVAL_SAMPLES` dev and test samples (for tasks that declare ``data.limit``), dev
evaluated at the end of the epoch, and at most :data:`MAX_SEEDS` seeds. The shortened values are
what the run folder's ``config.yaml`` records, so a shortened run is never mistaken for a full one.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

ENV = "GRAPHMATCH_SHORTEN"
TRAIN_BATCHES = 2
BATCH_SIZE = 16
EVAL_SAMPLES = 8
MAX_SEEDS = 2


def enabled() -> bool:
    """Whether ``$GRAPHMATCH_SHORTEN`` asks for shortened runs (set, and not ``0``/``false``/empty)."""
    return os.environ.get(ENV, "").strip().lower() not in ("", "0", "false", "no")


def _at_most(value: int | float | None, cap: int) -> int:
    return cap if value is None or isinstance(value, float) or value > cap else value


def shorten(config: dict[str, Any]) -> dict[str, Any]:
    """``config`` (resolved) cut to a moment's training, in place, with one warning; unchanged
    when :func:`enabled` is false."""
    if not enabled():
        return config
    train = config["train"]
    train.update(epochs=1, max_steps=None, val_every_steps=None, patience=None)
    limits = config["data"].get("limit")
    if isinstance(limits, dict):
        train["batch_size"] = min(train["batch_size"], BATCH_SIZE)
        limits["train"] = _at_most(limits.get("train"), TRAIN_BATCHES * train["batch_size"])
        for split in ("dev", "test"):
            limits[split] = _at_most(limits.get(split), EVAL_SAMPLES)
    warnings.warn(f"{ENV} is set: 1 epoch of at most {TRAIN_BATCHES} batches of {BATCH_SIZE}, {EVAL_SAMPLES} dev and "
                  f"test samples, {MAX_SEEDS} seeds (for testing commands, not for results)", stacklevel=2)
    return config


def seeds(count: int) -> int:
    """The number of seeds a shortened run trains: at most :data:`MAX_SEEDS`."""
    return min(count, MAX_SEEDS) if enabled() else count
