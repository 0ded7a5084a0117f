"""Evaluation metrics over the rows a task's ``decode`` returns.

Every metric takes the list of rows (``{"pred": ..., "gold": ..., "prob": float, ...}``) of a
whole split and returns a percentage in ``[0, 100]``, as the papers report them. Rows whose
``gold`` is ``None`` (unlabelled input) are ignored. A task names its metrics in
``Task.metrics``; :func:`compute` evaluates them by name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from graphmatch.data.relation_formats import NEGATIVE_LABELS
from graphmatch.engine.semeval import semeval_official_score

Row = dict[str, Any]


def _labelled(rows: Iterable[Row]) -> list[Row]:
    out = [r for r in rows if r.get("gold") is not None]
    if not out:
        raise ValueError("no labelled rows to evaluate (every row has gold=None)")
    return out


def _f1(tp: int, n_pred: int, n_gold: int) -> float:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def accuracy(rows: Sequence[Row]) -> float:
    """Share of correct predictions; for tagging rows (lists of tags), of correct tags."""
    rows = _labelled(rows)
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
    rows = _labelled(rows)
    pred = [str(r["pred"]) == positive for r in rows]
    gold = [str(r["gold"]) == positive for r in rows]
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    return 100.0 * _f1(tp, sum(pred), sum(gold))


def _per_class_f1(rows: Sequence[Row]) -> dict[Any, float]:
    """F1 of every class that is predicted or gold."""
    rows = _labelled(rows)
    tp: Counter[Any] = Counter()
    n_pred: Counter[Any] = Counter()
    n_gold: Counter[Any] = Counter()
    for r in rows:
        n_pred[r["pred"]] += 1
        n_gold[r["gold"]] += 1
        tp[r["gold"]] += r["pred"] == r["gold"]
    return {c: _f1(tp[c], n_pred[c], n_gold[c]) for c in set(n_pred) | set(n_gold)}


def macro_f1(rows: Sequence[Row]) -> float:
    """Unweighted mean of the per-class F1 over every class that is predicted or gold."""
    per_class = _per_class_f1(rows)
    return 100.0 * sum(per_class.values()) / len(per_class)


def relation_f1(rows: Sequence[Row], negative: Iterable[str] = NEGATIVE_LABELS) -> float:
    """Macro-F1 over the relation labels, the "no relation" labels left out: the unweighted mean
    of the per-label F1 over every label that is predicted or gold and not in ``negative``
    (default :data:`~graphmatch.data.relation_formats.NEGATIVE_LABELS`). A negative example
    predicted as a relation still costs that relation's precision, and a relation predicted as
    negative its recall. Labels are compared as written, so directions stay distinct.

    .. math::
        F = \\frac{1}{|\\mathcal{R}|} \\sum_{r \\in \\mathcal{R}} \\frac{2 P_r R_r}{P_r + R_r},
        \\qquad \\mathcal{R} = (\\text{gold} \\cup \\text{predicted}) \\setminus \\text{negative}
    """
    negative = set(negative)
    per_class = {c: f for c, f in _per_class_f1(rows).items() if c not in negative}
    return 100.0 * sum(per_class.values()) / len(per_class) if per_class else 0.0


def bio_spans(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """Spans ``(type, start, end)`` (end exclusive) of a BIO tag sequence, conlleval style.

    ``B-X`` starts a span; ``I-X`` continues the open span only when it is of type ``X``,
    otherwise it starts a new one; ``O`` (or any tag without a ``B-``/``I-`` prefix) closes it.
    """
    spans: set[tuple[str, int, int]] = set()
    kind: str | None = None
    start = 0
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, typ = tag.partition("-")
        inside = prefix == "I" and typ == kind and kind is not None
        if kind is not None and not inside:
            spans.add((kind, start, i))
            kind = None
        if prefix in ("B", "I") and typ and not inside:
            kind, start = typ, i
    return spans


def ner_f1(rows: Sequence[Row]) -> float:
    """Micro F1 over exactly matching entity spans (type and boundaries), as conlleval.

    Each row's ``pred`` and ``gold`` are equally long lists of BIO tags.
    """
    rows = _labelled(rows)
    tp = n_pred = n_gold = 0
    for i, r in enumerate(rows):
        if len(r["pred"]) != len(r["gold"]):
            raise ValueError(f"row {i}: {len(r['pred'])} predicted tags for {len(r['gold'])} gold tags")
        pred, gold = bio_spans(r["pred"]), bio_spans(r["gold"])
        tp += len(pred & gold)
        n_pred += len(pred)
        n_gold += len(gold)
    return 100.0 * _f1(tp, n_pred, n_gold)


def semeval2010(rows: Sequence[Row]) -> float:
    """The official SemEval-2010 Task 8 score: (9+1)-way macro-F1 with directionality
    (see :mod:`graphmatch.engine.semeval`)."""
    rows = _labelled(rows)
    return semeval_official_score([r["pred"] for r in rows], [r["gold"] for r in rows])


METRICS: dict[str, Callable[..., float]] = {
    "accuracy": accuracy,
    "f1": f1,
    "macro_f1": macro_f1,
    "ner_f1": ner_f1,
    "relation_f1": relation_f1,
    "semeval2010": semeval2010,
}


def compute(names: Iterable[str | tuple[str, Mapping[str, Any]]], rows: Sequence[Row]) -> dict[str, float]:
    """``{name: value}`` for each metric; an empty dict when no row is labelled. A metric is a
    name, or ``(name, options)`` with keyword arguments for it (e.g.
    ``("relation_f1", {"negative": ["no_relation"]})``)."""
    specs = [(n, {}) if isinstance(n, str) else (n[0], dict(n[1])) for n in names]
    unknown = [n for n, _ in specs if n not in METRICS]
    if unknown:
        raise KeyError(f"unknown metric(s) {unknown}; known metrics: {', '.join(METRICS)}")
    if not any(r.get("gold") is not None for r in rows):
        return {}
    return {n: float(METRICS[n](rows, **options)) for n, options in specs}
