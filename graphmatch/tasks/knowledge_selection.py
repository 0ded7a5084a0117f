"""``data.select`` as the tasks that hang KG branches share it (K-BERT, relation): the branch
selection over the pretrained checkpoint's own embeddings, and the report line of what it kept
(``docs/knowledge_selection.md``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphmatch.graphs.branch_selection import BranchSelection
from graphmatch.pretrained import Pretrained, resolve_pretrained
from graphmatch.tasks.keys import BranchSelect
from graphmatch.tasks.sentence_embedder import SentenceEmbedder


def branch_selection(select: BranchSelect, pretrained: Pretrained, progress: bool = True,
                     prefix: str = "") -> BranchSelection | None:
    """``select``'s branch selection, scoring with the mean-pooled embeddings of ``pretrained``
    (:class:`~graphmatch.tasks.sentence_embedder.SentenceEmbedder`; a run's stored encoder: its
    original checkpoint, whose weights it lacks) of every text after ``prefix`` (K-BERT's
    ``data.text_prefix``), or ``None`` for ``by: none``."""
    if select.by == "none":
        return None
    source = pretrained.source if pretrained.stored else None
    checkpoint = resolve_pretrained(source) if source is not None else pretrained
    embed = SentenceEmbedder(checkpoint, progress=progress, prefix=prefix)
    return BranchSelection(embed, select.top_k, select.threshold, key=embed.key)


def selection_lines(by: str, datasets: Mapping[str, Any]) -> list[str]:
    """The report line of a selection: the candidate branches each split kept, and a few it
    dropped (the datasets' ``selection_report``); none without one."""
    reports = {split: ds.selection_report for split, ds in datasets.items()
               if ds is not None and getattr(ds, "selection_report", None)}
    if not reports:
        return []
    parts = [f"{split} kept {r['kept']:,} of {r['candidates']:,} candidates "
             f"({100 * r['kept'] / max(r['candidates'], 1):.1f} %)" for split, r in reports.items()]
    dropped = next(iter(reports.values()))["dropped"][:3]
    examples = "; ".join(f"{d['word']} → {d['value']} ({d['score']:.2f})" for d in dropped)
    return [f"knowledge selection ({by}): " + "; ".join(parts) + (f"; dropped e.g. {examples}" if examples else "")]


__all__ = ["branch_selection", "selection_lines"]
