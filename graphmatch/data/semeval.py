"""SemEval-2010 Task 8: the organisers' files as a :class:`~graphmatch.data.relation.RelationDataset`.

``train`` and ``dev`` come from ``TRAIN_FILE.TXT`` (8,000 examples; ``dev_size`` of them, drawn
with a fixed seed, are held out as dev), ``test`` from ``TEST_FILE_FULL.TXT`` (2,717, ids
8001–10717), located under the data root (``data_dir``, ``$GRAPHMATCH_DATA`` or a checked
download). The file format is read by :func:`graphmatch.data.relation_formats.read_semeval_file`.
"""

from __future__ import annotations

import os
from pathlib import Path

from graphmatch.data.relation import SPLITS, RelationDataset, dev_ids
from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.data.relation_formats import RelationExample, read_semeval_file
from graphmatch.datafiles import CACHE_DIR, locate
from graphmatch.graphs.relation import DEFAULT_MAX_DISTANCE, DEFAULT_MAX_LENGTH

TRAIN_FILE = "semeval2010_task8/TRAIN_FILE.TXT"
TEST_FILE = "semeval2010_task8/TEST_FILE_FULL.TXT"
LABEL_INDEX = {name: i for i, name in enumerate(LABELS)}

__all__ = ["LABEL_INDEX", "SPLITS", "RelationExample", "SemEval2010Task8", "dev_ids", "read_semeval_file"]


class SemEval2010Task8(RelationDataset):
    r"""SemEval-2010 Task 8 as relation sentence graphs; ``label_names`` are the 19 labels.

    Args:
        root (str, optional): cache folder for processed graphs (default
            ``$GRAPHMATCH_CACHE/processed/semeval2010_task8``).
        split (str): ``"train"``, ``"dev"`` or ``"test"``. (default: ``"train"``)
        data_dir (str, optional): the data root holding ``semeval2010_task8/``.
        train_file, test_file (str, optional): files in the organisers' format to use instead of
            ``TRAIN_FILE.TXT`` / ``TEST_FILE_FULL.TXT`` (e.g. a small sample set).
        **kwargs: the options of :class:`~graphmatch.data.relation.RelationDataset`
            (``max_distance``, ``max_length``, ``dev_size``, ``split_seed``, ``min_freq``,
            ``markers``, ``position_anchor``, ``tokenization``, ``pretrained``).
    """

    def __init__(
        self,
        root: str | os.PathLike | None = None,
        split: str = "train",
        data_dir: str | os.PathLike | None = None,
        max_distance: int = DEFAULT_MAX_DISTANCE,
        max_length: int = DEFAULT_MAX_LENGTH,
        train_file: str | os.PathLike | None = None,
        test_file: str | os.PathLike | None = None,
        **kwargs,
    ):
        root = Path(root) if root is not None else CACHE_DIR / "processed" / "semeval2010_task8"
        super().__init__(
            root, split,
            train_file=train_file if train_file is not None else locate(TRAIN_FILE, data_dir),
            test_file=test_file if test_file is not None else locate(TEST_FILE, data_dir),
            format="semeval", max_distance=max_distance, max_length=max_length, **kwargs,
        )  # fmt: skip
