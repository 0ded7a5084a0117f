"""Every documented command is a test: the ``bash`` and ``python`` blocks of README.md and
docs/*.md run as written, in order, one test per doc, each in an empty folder of its own outside
the checkout, with the wheel installed in a fresh venv and the real data in ``$GRAPHMATCH_DATA``.

Training is shortened with ``GRAPHMATCH_SHORTEN=1`` (docs/engine.md), a run trains once per
session whichever doc names it first, and placeholders name the run just made
(``tests/doc_shim.py``); the inputs a command reads as ``sentences.txt`` and the like are written
first (:data:`INPUTS`). The wheel and venv are made once per session, for all xdist workers, and
the cache is the suite's own ``$GRAPHMATCH_CACHE``, reused as a user's is. Each ``graphmatch``
command is a process of its own, forked from a server in the wheel's venv that has imported
torch, PyG and Lightning once (``tests/forkserver.py``); graphmatch itself is imported from
the wheel afresh by every command; ``python`` blocks run as ``python -c`` runs them, forked from
the same server. A block that cannot run here is marked in the Markdown right before it, visibly,
with its reason:
``<!-- doc-test: skip "needs a GPU" -->``; each skipped block is listed as a warning, and a
marker without a reason, or with no block after it, fails.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import forkserver
import pytest
from doc_shim import children_cpu, lock_file
from wheel_install import REPO, outside_env

from graphmatch.io.datafiles import CACHE_DIR

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!--\s*doc-test:\s*skip\b(.*?)-->\s*$")
LANGUAGES = ("bash", "python")
#: text a reader replaces by hand → what the test puts there
PATHS = {"/path/to/data": "{data}", "path/to/data": "{data}"}
#: files the commands read, as a reader would write them
INPUTS = {
    "sentences.txt": "洗手间很干净，离火车站很近\n这家酒店的服务很好\n",
    "marked_sentences.txt": "The <e1>company</e1> fabricates plastic <e2>chairs</e2>.\n"
                            "<e1>马明</e1>出生于<e2>广州</e2>。\n",
    "pairs.tsv": "南京市长江大桥\t长江大桥在南京\n今天天气很好\t今天天气不错\n",
    "lines.tsv": "这本书很好看\n房间太小了\n",
    "proposed.txt": "1\tCause-Effect(e1,e2)\n2\tOther\n",
    "key.txt": "1\tCause-Effect(e1,e2)\n2\tComponent-Whole(e2,e1)\n",
}
BLOCK_TIMEOUT = 600


@dataclass(frozen=True)
class Block:
    """One fenced block of a doc: where it is, its language and code, and why it is skipped."""

    where: str
    language: str
    code: str
    skip: str | None


def collect(path: Path) -> list[Block]:
    """The ``bash``/``python`` blocks of one Markdown file; a bad marker is a ValueError."""
    lines, blocks, marker = path.read_text(encoding="utf-8").splitlines(), [], None
    name, i = (path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else path.name), 0
    while i < len(lines):
        found = MARKER.match(lines[i].strip())
        fence = FENCE.match(lines[i])
        if found:
            reason = re.fullmatch(r'\s*"([^"]*\S[^"]*)"\s*', found.group(1))
            if reason is None:
                raise ValueError(f'{name}:{i + 1}: a doc-test marker needs a reason: <!-- doc-test: skip "why" -->')
            marker = (i + 1, reason.group(1))
        elif fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            if fence.group(1) in LANGUAGES:
                blocks.append(Block(f"{name}:{i + 1}", fence.group(1), "\n".join(lines[i + 1:end]) + "\n",
                                    marker[1] if marker else None))
            elif marker:
                raise ValueError(f"{name}:{marker[0]}: the doc-test marker is before a {fence.group(1) or 'text'} "
                                 f"block, which is not run")
            marker, i = None, end
        elif marker and lines[i].strip():
            raise ValueError(f"{name}:{marker[0]}: a doc-test marker must be right before its block")
        i += 1
    if marker:
        raise ValueError(f"{name}:{marker[0]}: a doc-test marker with no block after it")
    return blocks


#: the docs with a block to run, one test each
RUN_DOCS = [doc for doc in DOCS if any(not block.skip for block in collect(doc))]


def test_markers_have_reasons_and_blocks(tmp_path):
    blocks = [b for doc in DOCS for b in collect(doc)]
    assert len(blocks) > 30 and {b.language for b in blocks} == set(LANGUAGES)
    skipped = [b for b in blocks if b.skip]
    for block in skipped:
        warnings.warn(f"doc-test skipped {block.where}: {block.skip}", stacklevel=1)
    assert len(skipped) <= 17  # commands that need what no CI has (GPUs, the network, undistributed files)
    bad = tmp_path / "bad.md"
    for text, error in [('<!-- doc-test: skip -->\n```bash\nls\n```\n', "needs a reason"),
                        ('<!-- doc-test: skip " " -->\n```bash\nls\n```\n', "needs a reason"),
                        ('<!-- doc-test: skip "long" -->\n\ntext\n```bash\nls\n```\n', "right before"),
                        ('<!-- doc-test: skip "long" -->\n```text\nls\n```\n', "not run"),
                        ('```bash\nls\n```\n<!-- doc-test: skip "long" -->\n', "no block after it")]:
        bad.write_text(text)
        with pytest.raises(ValueError, match=error):
            collect(bad)


@pytest.fixture(scope="session")
def installed(tmp_path_factory, shared_data, installed_wheel) -> tuple[Path, dict[str, str]]:
    """The session's folder outside the checkout (one for all xdist workers) and the
    environment of a user with the wheel (the run's :func:`installed_wheel`)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "doc-commands"
    root.mkdir(exist_ok=True)
    _, venv, _ = installed_wheel
    shim = root / "shim"
    with lock_file(root / "install.lock"):
        if not (root / "installed").is_file():
            shim.mkdir(exist_ok=True)
            (shim / "graphmatch").write_text(f"#!/bin/sh\nexec {venv}/bin/python {REPO}/tests/doc_shim.py "
                                             f'{venv}/bin/graphmatch "$@"\n')
            (shim / "graphmatch").chmod(0o755)
            (root / "installed").touch()
    env = outside_env(CACHE_DIR)
    env.update(GRAPHMATCH_DATA=str(shared_data), GRAPHMATCH_SHORTEN="1", MPLBACKEND="Agg",
               GRAPHMATCH_DOC_TEST_RUNS=str(root), PATH=f"{shim}:{venv / 'bin'}:{env['PATH']}")
    return root, env


@pytest.fixture(scope="session")
def commands(installed, installed_wheel) -> Iterator[tuple[Path, dict[str, str]]]:
    """:func:`installed` with this worker's fork server (``tests/forkserver.py``) running
    the documented ``graphmatch`` commands."""
    root, env = installed
    name = f"forkserver-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"
    server = forkserver.start(installed_wheel[1] / "bin" / "python", root / f"{name}.sock", env, root / f"{name}.log")
    try:
        yield root, {**env, "GRAPHMATCH_DOC_TEST_FORKSERVER": str(root / f"{name}.sock")}
    finally:
        server.terminate()
        server.wait(timeout=30)


def _run(block: Block, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    code = block.code
    for text, value in PATHS.items():
        code = code.replace(text, value.format(data=env["GRAPHMATCH_DATA"]))
    if block.language == "python":  # python -c CODE, forked from the server
        return forkserver.forked_run(env["GRAPHMATCH_DOC_TEST_FORKSERVER"], [code], env, work, BLOCK_TIMEOUT, "code")
    return subprocess.run(["bash", "-euo", "pipefail", "-c", code], cwd=work, env=env, capture_output=True,
                          text=True, timeout=BLOCK_TIMEOUT)


@pytest.mark.slow
@pytest.mark.parametrize("doc", RUN_DOCS, ids=[doc.name for doc in RUN_DOCS])
def test_documented_commands_run(doc, commands):
    """The doc's blocks, in order, in an empty folder of its own (a reader following that doc)."""
    root, env = commands
    work = root / "work" / doc.stem
    work.mkdir(parents=True)
    for name, text in INPUTS.items():
        (work / name).write_text(text, encoding="utf-8")
    shutil.copytree(REPO / "datasets" / "samples" / "relation_zh", work / "my")  # "your own corpus"
    failed = []
    for block in collect(doc):
        if block.skip:
            continue
        start, cpu = time.perf_counter(), children_cpu()
        done = _run(block, work, env)
        print(f"doc-test {block.where}: {time.perf_counter() - start:.1f} s, {children_cpu() - cpu:.1f} s CPU, "
              f"exit {done.returncode}")
        if done.returncode != 0:
            failed.append(f"{block.where} ({block.language}) exit {done.returncode}:\n{block.code}"
                          f"--- stderr:\n{done.stderr[-2500:]}")
    assert not failed, "documented commands that fail as written:\n\n" + "\n\n".join(failed)
