"""Named-entity metrics over BIO tag sequences, as conlleval computes them."""

from __future__ import annotations

from collections.abc import Sequence

from graphmatch.metrics.generic import Row, f1_of, labelled


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
    rows = labelled(rows)
    tp = n_pred = n_gold = 0
    for i, r in enumerate(rows):
        if len(r["pred"]) != len(r["gold"]):
            raise ValueError(f"row {i}: {len(r['pred'])} predicted tags for {len(r['gold'])} gold tags")
        pred, gold = bio_spans(r["pred"]), bio_spans(r["gold"])
        tp += len(pred & gold)
        n_pred += len(pred)
        n_gold += len(gold)
    return 100.0 * f1_of(tp, n_pred, n_gold)
