"""One data file cut into train, dev and test (``data.split``), the same cut every time.

With :math:`n` data lines, ``dev`` and ``test`` are each a count or a fraction :math:`f` of the
file (:math:`\\max(1, \\operatorname{round}(f n))` lines); a permutation :math:`\\pi` of
:math:`0..n-1` drawn with NumPy's PCG64 from ``seed`` gives test :math:`\\pi_{0..t-1}`, dev
:math:`\\pi_{t..t+d-1}` and train the rest, each kept in file order. The cut depends only on
:math:`n` and the seed, so ``evaluate`` and ``resume`` read the splits a run trained on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

SPLITS = ("train", "dev", "test")


def split_sizes(n: int, dev: int | float, test: int | float, where: str | os.PathLike = "") -> dict[str, int]:
    """Lines of each split of ``n`` (a one-line ValueError naming ``data.split`` and the file
    ``where`` when nothing is left to train on)."""
    def count(part: int | float) -> int:
        return part if isinstance(part, int) else max(1, round(part * n))

    sizes = {"dev": count(dev), "test": count(test)}
    sizes = {"train": n - sizes["dev"] - sizes["test"], **sizes}
    if sizes["train"] < 1:
        raise ValueError(f"{where}: data.split takes {sizes['dev']} dev and {sizes['test']} test lines of its "
                         f"{n} data lines, leaving none to train on")
    return sizes


def split_rows(n: int, split: str, dev: int | float, test: int | float, seed: int,
               where: str | os.PathLike = "") -> np.ndarray:
    """The indices (in file order) of ``split``'s lines among ``n`` data lines."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    sizes = split_sizes(n, dev, test, where)
    order = np.random.default_rng(seed).permutation(n)
    start = {"test": 0, "dev": sizes["test"], "train": sizes["test"] + sizes["dev"]}[split]
    return np.sort(order[start:start + sizes[split]])


def split_line(where: str | os.PathLike, n: int, split: Mapping[str, Any]) -> str:
    """The one line saying how a file was cut: ``FILE: data.split (seed 1): train 8, dev 1, test 1 lines``."""
    sizes = split_sizes(n, split["dev"], split["test"], where)
    return (f"{where}: data.split (seed {split['seed']}): "
            + ", ".join(f"{name} {sizes[name]:,}" for name in SPLITS) + " lines")
