"""Evaluation metrics over the rows a task's ``decode`` returns.

Every metric takes the list of rows (``{"pred": ..., "gold": ..., "prob": float, ...}``) of a
whole split and returns a percentage in ``[0, 100]``, as the papers report them. Rows whose
``gold`` is ``None`` (unlabelled input) are ignored. A task names its metrics in
``Task.metrics``; :func:`compute` evaluates them by name from :data:`METRICS`.

The metrics live by family: :mod:`~graphmatch.metrics.generic` (accuracy, F1, macro-F1),
:mod:`~graphmatch.metrics.relation` (the "no relation" labels left out, and SemEval-2010 Task
8's official scorer, :mod:`~graphmatch.metrics.semeval`) and :mod:`~graphmatch.metrics.ner`
(BIO spans). The engine imports this package only, never a family's module.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from graphmatch.metrics.generic import Row, accuracy, f1, macro_f1
from graphmatch.metrics.ner import bio_spans, ner_f1
from graphmatch.metrics.relation import (
    micro_f1,
    micro_precision,
    micro_recall,
    pr_auc,
    pr_auc_top1,
    relation_f1,
    semeval2010,
)
from graphmatch.metrics.semeval import score_files, semeval_official_score, semeval_scores

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


__all__ = ["METRICS", "TAKES_NEGATIVE", "Row", "accuracy", "bio_spans", "compute", "f1", "macro_f1", "micro_f1",
           "micro_precision", "micro_recall", "ner_f1", "pr_auc", "pr_auc_top1", "relation_f1", "score_files",
           "semeval2010", "semeval_official_score", "semeval_scores"]
