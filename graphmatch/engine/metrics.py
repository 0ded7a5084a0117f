"""Evaluation metrics over the rows a task's ``decode`` returns.

Every metric takes the list of rows (``{"pred": ..., "gold": ..., "prob": float, ...}``) of a
whole split and returns a percentage in ``[0, 100]``, as the papers report them. Rows whose
``gold`` is ``None`` (unlabelled input) are ignored. A task names its metrics in
``Task.metrics``; :func:`compute` evaluates them by name.

Relation corpora with a "no relation" label are scored with that label left out: macro-F1
(:func:`relation_f1`), micro precision, recall and F1 (:func:`micro_precision`,
:func:`micro_recall`, :func:`micro_f1`) and the area under the precision-recall curve, over
every (row, relation) pair (:func:`pr_auc`, which reads each row's ``probs``) or over the
predicted relations (:func:`pr_auc_top1`, which reads ``prob``). The "no relation" labels are
the task's (:meth:`~graphmatch.tasks.base.Task.negative_labels`), which :func:`compute` gives
every metric that takes ``negative``; called alone, such a metric leaves out none unless told.
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

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
    """F1 of every class that is predicted or gold, in sorted order: a float sum over them must
    not depend on the order of a set, which changes with the process's hash seed."""
    rows = _labelled(rows)
    tp: Counter[Any] = Counter()
    n_pred: Counter[Any] = Counter()
    n_gold: Counter[Any] = Counter()
    for r in rows:
        n_pred[r["pred"]] += 1
        n_gold[r["gold"]] += 1
        tp[r["gold"]] += r["pred"] == r["gold"]
    return {c: _f1(tp[c], n_pred[c], n_gold[c]) for c in sorted(set(n_pred) | set(n_gold), key=str)}


def macro_f1(rows: Sequence[Row]) -> float:
    """Unweighted mean of the per-class F1 over every class that is predicted or gold."""
    per_class = _per_class_f1(rows)
    return 100.0 * sum(per_class.values()) / len(per_class)


def relation_f1(rows: Sequence[Row], negative: Iterable[str] = ()) -> float:
    """Macro-F1 over the relation labels, the "no relation" labels left out: the unweighted mean
    of the per-label F1 over every label that is predicted or gold and not in ``negative``
    (the task's :meth:`~graphmatch.tasks.base.Task.negative_labels`). A negative example
    predicted as a relation still costs that relation's precision, and a relation predicted as
    negative its recall. Labels are compared as written, so directions stay distinct.

    .. math::
        F = \\frac{1}{|\\mathcal{R}|} \\sum_{r \\in \\mathcal{R}} \\frac{2 P_r R_r}{P_r + R_r},
        \\qquad \\mathcal{R} = (\\text{gold} \\cup \\text{predicted}) \\setminus \\text{negative}
    """
    negative = set(negative)
    per_class = {c: f for c, f in _per_class_f1(rows).items() if c not in negative}
    return 100.0 * sum(per_class.values()) / len(per_class) if per_class else 0.0


def _micro_counts(rows: Sequence[Row], negative: Iterable[str]) -> tuple[int, int, int]:
    """``(tp, n_pred, n_gold)`` of the relation labels: predictions and gold labels that are not
    ``negative``, and predictions equal to such a gold label."""
    negative = set(negative)
    rows = _labelled(rows)
    n_pred = sum(r["pred"] not in negative for r in rows)
    n_gold = sum(r["gold"] not in negative for r in rows)
    tp = sum(r["pred"] == r["gold"] and r["gold"] not in negative for r in rows)
    return tp, n_pred, n_gold


def micro_precision(rows: Sequence[Row], negative: Iterable[str] = ()) -> float:
    """Micro precision over the relation labels: of the rows predicted as a relation (a label
    not in ``negative``, :math:`\\mathcal{N}`), the share whose gold label is that relation; 0
    when none is predicted.

    .. math::
        P = \\frac{|\\{i : \\hat y_i = y_i \\notin \\mathcal{N}\\}|}{|\\{i : \\hat y_i \\notin \\mathcal{N}\\}|}
    """
    tp, n_pred, _ = _micro_counts(rows, negative)
    return 100.0 * tp / n_pred if n_pred else 0.0


def micro_recall(rows: Sequence[Row], negative: Iterable[str] = ()) -> float:
    """Micro recall over the relation labels: of the rows whose gold label is a relation, the
    share predicted as exactly that relation. 0 when no gold label is a relation.

    .. math::
        R = \\frac{|\\{i : \\hat y_i = y_i \\notin \\mathcal{N}\\}|}{|\\{i : y_i \\notin \\mathcal{N}\\}|}
    """
    tp, _, n_gold = _micro_counts(rows, negative)
    return 100.0 * tp / n_gold if n_gold else 0.0


def micro_f1(rows: Sequence[Row], negative: Iterable[str] = ()) -> float:
    """Micro-F1 over the relation labels, the negative labels ``negative`` left out (the task's
    :meth:`~graphmatch.tasks.base.Task.negative_labels`): the figure papers on Chinese
    relation corpora (SanWen, FinRE, ...) and TACRED report. A prediction counts as positive
    when its label is not negative, and as a true positive when it equals a gold label that is
    not negative; a wrong relation costs both precision and recall.

    .. math::
        F_1 = \\frac{2PR}{P + R}, \\qquad P, R \\text{ as in } \\texttt{micro\\_precision}, \\texttt{micro\\_recall}
    """
    return 100.0 * _f1(*_micro_counts(rows, negative))


def _pr_area(scores: Sequence[float], hits: Sequence[bool], n_gold: int) -> float:
    """Trapezoid area under the precision-recall curve of pairs ranked by descending ``scores``
    (``hits`` marks the correct ones), recall out of ``n_gold``; tied scores make one point."""
    if not n_gold or not len(scores):
        return 0.0
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    ranked = np.asarray(scores, dtype=float)[order]
    tp = np.cumsum(np.asarray(hits, dtype=bool)[order])
    cut = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])  # the last pair of each distinct score
    recall, precision = tp[cut] / n_gold, tp[cut] / (cut + 1)
    return float(100.0 * np.sum(np.diff(recall) * (precision[1:] + precision[:-1]) / 2))


def pr_auc(
    rows: Sequence[Row], negative: Iterable[str] = (), labels: Sequence[str] | None = None
) -> float:
    """Area under the precision-recall curve of the relation labels, as distant-supervision
    papers (OpenNRE's evaluation) report it: every pair (row :math:`i`, relation :math:`r \\notin
    \\mathcal{N}`) is ranked by the predicted probability :math:`p_i(r)`; a pair is a hit when
    :math:`y_i = r`. Cutting the ranking after each distinct probability :math:`\\theta_k` gives
    the points

    .. math::
        P_k = \\frac{|\\{(i, r) : p_i(r) \\ge \\theta_k, y_i = r\\}|}{|\\{(i, r) : p_i(r) \\ge \\theta_k\\}|},
        \\qquad R_k = \\frac{|\\{(i, r) : p_i(r) \\ge \\theta_k, y_i = r\\}|}{|\\{i : y_i \\notin \\mathcal{N}\\}|},
        \\qquad \\text{AUC} = \\sum_{k=2}^{K} (R_k - R_{k-1}) \\frac{P_k + P_{k-1}}{2}.

    The trapezoid rule over these points, starting at the first cut (no point is added at
    recall 0), is what the papers' code computes (``sklearn.metrics.auc(recall, precision)``),
    so the figure compares with theirs; average precision, :math:`\\sum_k (R_k - R_{k-1}) P_k`,
    would be the more conservative estimate but not the published one. Tied probabilities form
    one point, so the figure does not depend on the order of the rows (the papers' code cuts
    between tied pairs in input order; without ties both agree).

    Each row needs ``probs``: a mapping label → probability, or a list of probabilities in the
    order of ``labels``. Gold relations the ``probs`` do not name count as never retrieved.
    """
    negative = set(negative)
    rows = _labelled(rows)
    scores: list[float] = []
    hits: list[bool] = []
    for i, r in enumerate(rows):
        probs = r.get("probs")
        if probs is None:
            raise ValueError(f"pr_auc needs every row's 'probs' (the probability of each label); row {i} has none")
        if not isinstance(probs, Mapping):
            if labels is None or len(labels) != len(probs):
                raise ValueError(f"row {i}: 'probs' is a list of {len(probs)}; pr_auc then needs labels= as long")
            probs = dict(zip(labels, probs, strict=True))
        for label, p in probs.items():
            if label not in negative:
                scores.append(p)
                hits.append(r["gold"] == label)
    return _pr_area(scores, hits, sum(r["gold"] not in negative for r in rows))


def pr_auc_top1(rows: Sequence[Row], negative: Iterable[str] = ()) -> float:
    """Area under the precision-recall curve of the predicted relations, as the reference code
    of the Chinese corpora SanWen and FinRE (Li et al., 2019, MG-Lattice) computes it: only the
    rows predicted as a relation are ranked, by ``prob`` (the probability of ``pred``), a hit
    being a correct prediction; recall is out of the rows whose gold label is a relation. The
    curve and its area are those of :func:`pr_auc` with :math:`p_i(r)` replaced by ``prob`` for
    :math:`r = \\hat y_i` and pairs with :math:`r \\ne \\hat y_i` left out; the curve ends at
    (:func:`micro_recall`, :func:`micro_precision`). Needs only ``pred``, ``gold`` and ``prob``.
    """
    negative = set(negative)
    rows = _labelled(rows)
    ranked = [r for r in rows if r["pred"] not in negative]
    return _pr_area([r["prob"] for r in ranked], [r["pred"] == r["gold"] for r in ranked],
                    sum(r["gold"] not in negative for r in rows))


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
    "micro_f1": micro_f1,
    "micro_precision": micro_precision,
    "micro_recall": micro_recall,
    "ner_f1": ner_f1,
    "pr_auc": pr_auc,
    "pr_auc_top1": pr_auc_top1,
    "relation_f1": relation_f1,
    "semeval2010": semeval2010,
}


#: the metrics that leave out a task's negative labels (their ``negative`` argument)
TAKES_NEGATIVE = frozenset(name for name, fn in METRICS.items() if "negative" in inspect.signature(fn).parameters)


def compute(names: Iterable[str | tuple[str, Mapping[str, Any]]], rows: Sequence[Row],
            negative: Iterable[str] = ()) -> dict[str, float]:
    """``{name: value}`` for each metric; an empty dict when no row is labelled. A metric is a
    name, or ``(name, options)`` with keyword arguments for it (e.g.
    ``("relation_f1", {"negative": ["no_relation"]})``). ``negative`` (the task's
    :meth:`~graphmatch.tasks.base.Task.negative_labels`) goes to every metric of
    :data:`TAKES_NEGATIVE` whose options do not name their own."""
    specs = [(n, {}) if isinstance(n, str) else (n[0], dict(n[1])) for n in names]
    unknown = [n for n, _ in specs if n not in METRICS]
    if unknown:
        raise KeyError(f"unknown metric(s) {unknown}; known metrics: {', '.join(METRICS)}")
    if not any(r.get("gold") is not None for r in rows):
        return {}
    default = {"negative": list(negative)}
    return {n: float(METRICS[n](rows, **{**(default if n in TAKES_NEGATIVE else {}), **options}))
            for n, options in specs}
