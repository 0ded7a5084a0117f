"""SemEval-2010 Task 8: the organisers' files as a :class:`~graphmatch.data.relation.RelationDataset`.

``train`` and ``dev`` come from ``TRAIN_FILE.TXT`` (8,000 examples; ``dev_size`` of them, drawn
with a fixed seed, are held out as dev), ``test`` from ``TEST_FILE_FULL.TXT`` (2,717, ids
8001–10717), located under the data root (``root``, ``$GRAPHMATCH_DATA`` or a checked
download). The file format is read by :func:`graphmatch.data.relation_formats.read_semeval_file`.
"""

from __future__ import annotations

import os

from graphmatch.data.relation import SPLITS, RelationDataset, dev_ids
from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.data.relation_formats import RelationExample, read_semeval_file
from graphmatch.io.datafiles import locate

TRAIN_FILE = "semeval2010_task8/TRAIN_FILE.TXT"
TEST_FILE = "semeval2010_task8/TEST_FILE_FULL.TXT"
LABEL_INDEX = {name: i for i, name in enumerate(LABELS)}

__all__ = ["LABEL_INDEX", "SPLITS", "RelationExample", "SemEval2010Task8", "dev_ids", "read_semeval_file"]


class SemEval2010Task8(RelationDataset):
    r"""SemEval-2010 Task 8 as relation sentence graphs; ``label_names`` are the 19 labels.

    Args:
        split (str): ``"train"``, ``"dev"`` or ``"test"``. (default: ``"train"``)
        root (str, optional): the data root holding ``semeval2010_task8/``.
        cache (str, optional): folder of processed graphs (default
            ``$GRAPHMATCH_CACHE/processed/semeval2010_task8``).
        train_file, test_file (str, optional): files in the organisers' format to use instead of
            ``TRAIN_FILE.TXT`` / ``TEST_FILE_FULL.TXT`` (e.g. a small sample set).
        **kwargs: the arguments of :class:`~graphmatch.data.relation.RelationDataset`
            (``options``, ``dev_size``, ``split_seed``, ``min_freq``, ``pretrained``, ...).
    """

    family = "semeval2010_task8"

    def __init__(
        self,
        split: str = "train",
        root: str | os.PathLike | None = None,
        cache: str | os.PathLike | None = None,
        train_file: str | os.PathLike | None = None,
        test_file: str | os.PathLike | None = None,
        **kwargs,
    ):
        super().__init__(
            split,
            train_file=train_file if train_file is not None else locate(TRAIN_FILE, root),
            test_file=test_file if test_file is not None else locate(TEST_FILE, root),
            format="semeval", root=root, cache=cache, **kwargs,
        )  # fmt: skip
