"""Metrics of any task over the rows a task's ``decode`` returns (:mod:`graphmatch.metrics`):
accuracy, the positive class's F1 and macro-F1."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

Row = dict[str, Any]


def labelled(rows: Iterable[Row]) -> list[Row]:
    """The rows with a gold label; a ``ValueError`` when there is none."""
    out = [r for r in rows if r.get("gold") is not None]
    if not out:
        raise ValueError("no labelled rows to evaluate (every row has gold=None)")
    return out


def f1_of(tp: int, n_pred: int, n_gold: int) -> float:
    """F1 (a fraction) of ``tp`` true positives, ``n_pred`` predictions, ``n_gold`` gold items; 0 if undefined."""
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def accuracy(rows: Sequence[Row]) -> float:
    """Share of correct predictions; for tagging rows (lists of tags), of correct tags."""
    rows = labelled(rows)
    if isinstance(rows[0]["gold"], (list, tuple)):
        pairs = [(p, g) for r in rows for p, g in zip(r["pred"], r["gold"], strict=True)]
    else:
        pairs = [(r["pred"], r["gold"]) for r in rows]
    return 100.0 * sum(p == g for p, g in pairs) / len(pairs)


def f1(rows: Sequence[Row], positive: str = "1") -> float:
    """F1 of the positive class (label ``"1"`` by default, as in LCQMC and BQ).

    .. math::
        F_1 = \\frac{2PR}{P + R}, \\quad P = \\frac{TP}{TP + FP}, \\quad R = \\frac{TP}{TP + FN}
    """
    rows = labelled(rows)
    pred = [str(r["pred"]) == positive for r in rows]
    gold = [str(r["gold"]) == positive for r in rows]
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    return 100.0 * f1_of(tp, sum(pred), sum(gold))


def per_class_f1(rows: Sequence[Row]) -> dict[Any, float]:
    """F1 of every class that is predicted or gold, in sorted order: a float sum over them must
    not depend on the order of a set, which changes with the process's hash seed."""
    rows = labelled(rows)
    tp: Counter[Any] = Counter()
    n_pred: Counter[Any] = Counter()
    n_gold: Counter[Any] = Counter()
    for r in rows:
        n_pred[r["pred"]] += 1
        n_gold[r["gold"]] += 1
        tp[r["gold"]] += r["pred"] == r["gold"]
    return {c: f1_of(tp[c], n_pred[c], n_gold[c]) for c in sorted(set(n_pred) | set(n_gold), key=str)}


def macro_f1(rows: Sequence[Row]) -> float:
    """Unweighted mean of the per-class F1 over every class that is predicted or gold."""
    per_class = per_class_f1(rows)
    return 100.0 * sum(per_class.values()) / len(per_class)
