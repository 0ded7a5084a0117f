"""The README's promise: "a mistake on the command line ... is one line on stderr and exit code 2",
with nothing written and nothing lost, held over crafted and mistaken inputs (issue 44).

Each row of ``CASES`` is a ``Case``: ``make(s)`` sets the case up in the test's working folder
``s.tmp`` (a copy of a trained toy run is at ``s.run``; ``s.plant_module()`` writes an
``evilmod.py`` that would create ``s.marker`` if imported) and returns the command line; the error
line must hold ``message`` (``{run}`` and ``{tmp}`` filled in). The test checks exit 2, one line on
stderr and no traceback, that no file under ``s.tmp`` was added, changed or removed, and that
``s.marker`` was never made. Add a row for every new refusal.
"""

from __future__ import annotations

import hashlib
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphmatch.cli.main import main

ENGINE_TESTS = Path(__file__).resolve().parents[1] / "engine"
sys.path.insert(0, str(ENGINE_TESTS))  # the toy task (tests/engine/toy_task.py) and its recipes
from engine_helpers import TOY_QUICK  # noqa: E402


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny trained toy run (1 epoch, hidden 8), copied by each test."""
    from graphmatch.engine import train

    return train(TOY_QUICK, ["train.epochs=1", "model.hidden=8"], tmp_path_factory.mktemp("runs") / "toy")


@dataclass
class Setup:
    tmp: Path
    run: Path
    monkeypatch: pytest.MonkeyPatch

    @property
    def marker(self) -> Path:
        return self.tmp / "MODULE_RAN"

    def plant_module(self) -> None:
        """``evilmod.py`` in the working folder (importable), creating :attr:`marker` if imported."""
        (self.tmp / "evilmod.py").write_text(f"open({str(self.marker)!r}, 'w').close()\n", encoding="utf-8")
        self.monkeypatch.syspath_prepend(str(self.tmp))

    def set_run_task(self, task: str) -> Path:
        """The run's task changed to ``task`` in its ``config.yaml`` and its checkpoints."""
        import torch

        from graphmatch.engine.runs import read_yaml, write_yaml
        from graphmatch.engine.runs.checkpoint import META

        config = read_yaml(self.run / "config.yaml")
        write_yaml(self.run / "config.yaml", {**config, "task": task})
        for ckpt in self.run.glob("*.ckpt"):
            state = torch.load(ckpt, map_location="cpu", weights_only=True)
            state[META]["config"]["task"] = task
            torch.save(state, ckpt)
        return self.run

    def text(self, name: str, content: str = "自然语言\t处理\n") -> Path:
        (self.tmp / name).write_text(content, encoding="utf-8")
        return self.tmp / name


@dataclass
class Case:
    make: Callable[[Setup], list[str]]
    message: str


def _recipe(s: Setup, task: str) -> list[str]:
    s.plant_module()
    recipe = s.text("r.yaml", f"base: {TOY_QUICK}\ntask: {task}\n")
    return ["train", str(recipe), "--out", str(s.tmp / "new")]


def _data_file_as_predictions(s: Setup) -> list[str]:
    import toy_task

    kg = s.text("kg.spo", "a\tb\tc\n")
    s.monkeypatch.setattr(toy_task.ToyTask, "input_files", lambda self: {"kg": str(kg)})
    return ["evaluate", str(s.run), "--predictions", str(kg)]


CASES: dict[str, Case] = {
    # --- nothing a command writes overwrites what it reads or what the run holds
    "predict --output over the checkpoint": Case(
        lambda s: ["predict", str(s.run), "--input", str(s.text("in.tsv")), "--output", str(s.run / "best.ckpt")],
        "--output {run}/best.ckpt is a checkpoint"),
    "predict --output over a checkpoint elsewhere": Case(
        lambda s: ["predict", str(s.run), "--input", str(s.text("in.tsv")), "--output", str(s.tmp / "x.ckpt")],
        "--output {tmp}/x.ckpt is a checkpoint"),
    "predict --output over its input": Case(
        lambda s: ["predict", str(s.run), "--input", str(s.text("in.tsv")), "--output", str(s.tmp / "in.tsv")],
        "--output {tmp}/in.tsv is the input file"),
    "predict --output over the run's config": Case(
        lambda s: ["predict", str(s.run), "--input", str(s.text("in.tsv")), "--output", str(s.run / "config.yaml")],
        "--output {run}/config.yaml is inside the run folder {run}"),
    "evaluate --predictions over the checkpoint": Case(
        lambda s: ["evaluate", str(s.run), "--predictions", str(s.run / "best.ckpt")],
        "--predictions {run}/best.ckpt is a checkpoint"),
    "evaluate --predictions over the run's config": Case(
        lambda s: ["evaluate", str(s.run / "best.ckpt"), "--predictions", str(s.run / "config.yaml")],
        "--predictions {run}/config.yaml is inside the run folder {run}"),
    "evaluate --split dev --predictions over the test split's file": Case(
        lambda s: ["evaluate", str(s.run), "--split", "dev", "--predictions", str(s.run / "predictions_test.jsonl")],
        "is inside the run folder {run}, which holds what the run keeps; write it elsewhere, or its "
        "predictions_dev.jsonl"),
    "evaluate --predictions over an input file": Case(
        _data_file_as_predictions, "--predictions {tmp}/kg.spo is the input file"),
    # --- a run folder names no module that gets imported (S2)
    "predict: a run's task names a module and a built-in task": Case(
        lambda s: (s.plant_module(), ["predict", str(s.set_run_task("evilmod:kbert")), "文本"])[1],
        "task 'evilmod:kbert': 'kbert' is a graphmatch task; write task: kbert"),
    "evaluate: a run's task names a module": Case(
        lambda s: (s.plant_module(), ["evaluate", str(s.set_run_task("evilmod:evil"))])[1],
        "task 'evilmod:evil' is not a registered task"),
    "train --resume: a run's task names a module": Case(
        lambda s: (s.plant_module(), ["train", "--resume", str(s.set_run_task("evilmod:evil"))])[1],
        "a module that a run folder or checkpoint names is never imported"),
    "a recipe's module:name of a built-in task": Case(
        lambda s: _recipe(s, "evilmod:kbert"), "'kbert' is a graphmatch task; write task: kbert"),
    "a recipe's task that is no module name": Case(
        lambda s: _recipe(s, "evil mod:x"), "task 'evil mod:x' is neither a task name nor 'package.module:name'"),
}


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != "evilmod.py" and "__pycache__" not in p.parts}


@pytest.mark.parametrize("name", list(CASES))
def test_a_mistake_is_one_line_exit_2_and_nothing_written(name: str, toy_run: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    s = Setup(tmp_path, tmp_path / "run", monkeypatch)
    shutil.copytree(toy_run, s.run)
    case = CASES[name]
    argv = case.make(s)
    before = _snapshot(tmp_path)
    capsys.readouterr()
    assert main(argv) == 2, capsys.readouterr().err
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert case.message.format(run=s.run, tmp=tmp_path) in err, err
    assert not s.marker.exists(), "a module named by a file was imported"
    assert _snapshot(tmp_path) == before  # nothing written, nothing lost


def test_evaluate_writes_its_own_split_file_in_the_run_whole(toy_run: Path, tmp_path: Path) -> None:
    """``--predictions RUN/predictions_<split>.jsonl`` is the command's own file: replaced whole
    (no scratch folder left), the other split's file untouched."""
    run = tmp_path / "run"
    shutil.copytree(toy_run, run)
    test_rows = (run / "predictions_test.jsonl").read_bytes()
    assert main(["evaluate", str(run), "--split", "dev", "--predictions", str(run / "predictions_dev.jsonl")]) == 0
    assert len((run / "predictions_dev.jsonl").read_text(encoding="utf-8").splitlines()) == 64
    assert (run / "predictions_test.jsonl").read_bytes() == test_rows
    assert not list(run.glob(".predictions-*"))
