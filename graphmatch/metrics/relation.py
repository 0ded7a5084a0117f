"""Relation metrics: corpora with a "no relation" label are scored with that label left out:
macro-F1 (:func:`relation_f1`), micro precision, recall and F1 (:func:`micro_precision`,
:func:`micro_recall`, :func:`micro_f1`) and the area under the precision-recall curve, over
every (row, relation) pair (:func:`pr_auc`, which reads each row's ``probs``) or over the
predicted relations (:func:`pr_auc_top1`, which reads ``prob``); SemEval-2010 Task 8 by its
official scorer (:func:`semeval2010`, :mod:`graphmatch.metrics.semeval`). The "no relation"
labels are the task's (:meth:`~graphmatch.tasks.base.Task.negative_labels`), which
:func:`~graphmatch.metrics.compute` gives every metric that takes ``negative``; called alone,
such a metric leaves out none unless told.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from graphmatch.metrics.generic import Row, f1_of, labelled, per_class_f1
from graphmatch.metrics.semeval import semeval_official_score


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
    per_class = {c: f for c, f in per_class_f1(rows).items() if c not in negative}
    return 100.0 * sum(per_class.values()) / len(per_class) if per_class else 0.0


def _micro_counts(rows: Sequence[Row], negative: Iterable[str]) -> tuple[int, int, int]:
    """``(tp, n_pred, n_gold)`` of the relation labels: predictions and gold labels that are not
    ``negative``, and predictions equal to such a gold label."""
    negative = set(negative)
    rows = labelled(rows)
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
    return 100.0 * f1_of(*_micro_counts(rows, negative))


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
    rows = labelled(rows)
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
    rows = labelled(rows)
    ranked = [r for r in rows if r["pred"] not in negative]
    return _pr_area([r["prob"] for r in ranked], [r["pred"] == r["gold"] for r in ranked],
                    sum(r["gold"] not in negative for r in rows))


def semeval2010(rows: Sequence[Row]) -> float:
    """The official SemEval-2010 Task 8 score: (9+1)-way macro-F1 with directionality
    (see :mod:`graphmatch.metrics.semeval`)."""
    rows = labelled(rows)
    return semeval_official_score([r["pred"] for r in rows], [r["gold"] for r in rows])
