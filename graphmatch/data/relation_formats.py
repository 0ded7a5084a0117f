"""File formats of relation-classification data (pure Python, no torch).

SemEval-2010 Task 8: 19 labels, ``Other`` and each of nine relations in both directions.
"""

from __future__ import annotations

SEMEVAL_RELATIONS = (
    "Cause-Effect",
    "Component-Whole",
    "Content-Container",
    "Entity-Destination",
    "Entity-Origin",
    "Instrument-Agency",
    "Member-Collection",
    "Message-Topic",
    "Product-Producer",
)
#: the 19 labels of SemEval-2010 Task 8 (what its official scorer accepts): ``Other`` and each
#: relation in both directions
SEMEVAL_LABELS = ("Other",) + tuple(f"{r}({d})" for r in SEMEVAL_RELATIONS for d in ("e1,e2", "e2,e1"))
