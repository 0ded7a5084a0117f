"""What a run says while it runs and when it cannot go on, on the toy task: one line per epoch,
bars on stderr and results on stdout, a dev evaluation at the last step, epochs counted from 1,
and one line (exit 2) for a full disk or a damaged ``last.ckpt``, with what is saved kept."""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from pathlib import Path

import pytest
import torch
import toy_task
from engine_helpers import TOY, TOY_QUICK, Crash, Terminal

from graphmatch.cli.main import main
from graphmatch.engine import train
from graphmatch.engine.runs.checkpoint import META, read_checkpoint


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_one_line_per_epoch_on_stderr_without_bars(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    assert main(["train", str(TOY_QUICK), "--set", "train.progress=false", "--out", str(run)]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.startswith("epoch ")]
    pattern = (r"epoch (\d)/2 \(step (\d+)\): dev accuracy [\d.]+ \(best [\d.]+, step \d+\), train loss [\d.]+; "
               r"[\d.]+ s, [\d.]+ s in all")
    assert [re.fullmatch(pattern, line).groups() for line in lines] == [("1", "4"), ("2", "8")], captured.err
    assert not [line for line in captured.out.splitlines() if line.startswith("epoch")]


def test_progress_bars_go_to_stderr_and_results_alone_to_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    terminal = Terminal()  # bars are drawn on a terminal only
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["train", str(TOY_QUICK), "--set", "train.epochs=1", "train.progress=true", "--out", str(run)]) == 0
    captured = capsys.readouterr()
    assert "it/s" in terminal.getvalue() or "Epoch 0" in terminal.getvalue()  # the bars are there, on stderr
    assert [line.split(":")[0] for line in captured.out.splitlines()] == ["run folder", "dev", "test"]
    terminal.seek(0)
    terminal.truncate(0)
    assert main(["evaluate", str(run), "--set", "train.progress=true"]) == 0
    captured = capsys.readouterr()
    assert "Testing" in terminal.getvalue()
    assert all(re.fullmatch(r"test \w+\t[\d.]+", line) for line in captured.out.splitlines()), captured.out


@pytest.mark.parametrize(("sets", "steps"), [
    (["train.val_every_steps=5"], [5, 10, 15, 20, 25, 30, 32]),  # 32 steps: the last 2 were never scored
    (["train.val_every_steps=300"], [32]),  # fewer steps than the interval: dev was never evaluated at all
    (["train.max_steps=12"], [8, 12]),  # the budget ends in the middle of epoch 2
])
def test_the_last_step_is_always_evaluated_on_dev(tmp_path: Path, sets: list[str], steps: list[int]) -> None:
    run = train(TOY, sets, tmp_path / "run")
    history = read_json(run / "history.json")
    assert [h["step"] for h in history] == steps
    metrics = read_json(run / "metrics.json")
    best = max(history, key=lambda h: h["dev"]["accuracy"])  # the first best
    assert metrics["best_step"] == best["step"] and metrics["steps"] == steps[-1]


def test_dev_and_test_are_scored_with_the_selected_checkpoint(tmp_path: Path) -> None:
    """A run whose best dev step (24) is not its last (32): metrics.json's dev and test figures are
    the selected checkpoint's (read once for both), not the last step's weights."""
    from graphmatch.engine import evaluate

    run = train(TOY, ["model.dropout=0.3", "train.val_every_steps=2", "optim.lr=0.3", "train.keep_last=true"],
                tmp_path / "run")
    metrics = read_json(run / "metrics.json")
    assert (metrics["best_step"], metrics["steps"]) == (24, 32)
    assert evaluate(run / "best.ckpt", "dev") == pytest.approx(metrics["dev"])
    assert evaluate(run / "best.ckpt", "test") == pytest.approx(metrics["test"])
    assert evaluate(run / "last.ckpt", "test") != pytest.approx(metrics["test"])  # the last step scores otherwise


def test_a_run_that_never_evaluates_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    original = toy_task.ToyTask.datasets

    def no_training_graphs(self):
        return {**original(self), "train": toy_task.ToySplit([], "toy-empty")}

    monkeypatch.setattr(toy_task.ToyTask, "datasets", no_training_graphs)
    assert main(["train", str(TOY_QUICK), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("graphmatch train: error: no checkpoint was selected: dev was never evaluated: the training "
                       "split has no samples (look at the training file and data.limit.train)")


def test_epochs_count_from_1_in_history_and_summary(tmp_path: Path) -> None:
    run = train(TOY_QUICK, [], tmp_path / "run")
    history = read_json(run / "history.json")
    assert [(h["epoch"], h["step"]) for h in history] == [(1, 4), (2, 8)]
    metrics = read_json(run / "metrics.json")
    best = next(h for h in history if h["step"] == metrics["best_step"])
    assert metrics["best_epoch"] == best["epoch"]
    assert f"(epoch {best['epoch']})" in (run / "summary.md").read_text(encoding="utf-8")


def test_a_run_folder_whose_history_counted_from_0_resumes_counting_from_1(tmp_path: Path) -> None:
    straight = train(TOY_QUICK, ["train.epochs=3"], tmp_path / "straight")
    old = tmp_path / "old"
    with pytest.raises(RuntimeError, match="simulated crash"):
        train(TOY_QUICK, ["train.epochs=3"], old, callbacks=[Crash(at_epoch=2)])
    ckpt = torch.load(old / "last.ckpt", weights_only=True)
    ckpt[META]["version"] = 1  # as the previous release wrote it: epochs from 0
    ckpt[META]["history"] = [{**h, "epoch": h["epoch"] - 1} for h in ckpt[META]["history"]]
    torch.save(ckpt, old / "last.ckpt")
    assert train(resume=old) == old
    assert read_json(old / "history.json") == read_json(straight / "history.json")
    assert [h["epoch"] for h in read_json(old / "history.json")] == [1, 2, 3]


def _run_with_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_step: int) -> tuple[Path, int, str]:
    """``graphmatch train`` whose checkpoint writes raise ENOSPC (after half a file) from step ``at_step`` on."""
    save = torch.save

    def full_disk(obj, f, *args, **kwargs):
        if isinstance(f, str | os.PathLike) and isinstance(obj, dict) and obj.get("global_step", -1) >= at_step:
            Path(f).write_bytes(b"PK\x03\x04 half a checkpoint")
            raise OSError(errno.ENOSPC, "No space left on device")
        return save(obj, f, *args, **kwargs)

    monkeypatch.setattr(torch, "save", full_disk)
    run = tmp_path / "run"
    code = main(["train", str(TOY), "--set", "model.dropout=0.3", "--out", str(run)])
    monkeypatch.setattr(torch, "save", save)
    return run, code, run.as_posix()


def test_a_full_disk_keeps_the_last_checkpoint_and_says_how_to_go_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    straight = train(TOY, ["model.dropout=0.3"], tmp_path / "straight")
    run, code, _ = _run_with_a_full_disk(tmp_path, monkeypatch, at_step=16)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "Traceback" not in "\n".join(err)
    assert re.fullmatch(
        rf"graphmatch train: error: no space left on the disk while writing {run}/(best|last)\.ckpt: it needs about "
        rf"[\d.]+ KB, [\d.]+ (KB|MB|GB) free on that disk; the last good checkpoint {run}/last\.ckpt is kept; free "
        rf"some space, then continue with: graphmatch train --resume {run}", err[-1]), err[-1]
    assert not [p.name for p in run.iterdir() if p.name.startswith(".")]  # no temporary file left
    assert read_checkpoint(run / "last.ckpt")["global_step"] == 8 and read_checkpoint(run / "best.ckpt")
    assert main(["train", "--resume", str(run)]) == 0  # space freed: the run ends as if nothing happened
    for key in ("dev", "test", "best_step", "steps"):
        assert read_json(run / "metrics.json")[key] == read_json(straight / "metrics.json")[key], key


def test_a_full_disk_before_the_first_checkpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run, code, _ = _run_with_a_full_disk(tmp_path, monkeypatch, at_step=0)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].endswith(f"no checkpoint had been saved yet; free some space, then continue with: "
                                          f"graphmatch train --resume {run}")
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml", "inputs.json"]


def test_resuming_from_a_truncated_last_ckpt_is_one_line_offering_best(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    with pytest.raises(RuntimeError, match="simulated crash"):
        train(TOY_QUICK, [], run, callbacks=[Crash(at_epoch=1)])
    last = run / "last.ckpt"
    last.write_bytes(last.read_bytes()[: last.stat().st_size // 2])  # a copy cut short, a full disk
    capsys.readouterr()
    assert main(["train", "--resume", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"graphmatch train: error: {last} cannot be read: it is truncated or "
                                               "damaged (")
    assert err[0].endswith(f"; its best.ckpt is there: evaluate it with: graphmatch evaluate {run}, or train "
                           f"again from its weights into a new folder with: graphmatch train --resume "
                           f"{run}/best.ckpt --out NEW_FOLDER")
    assert main(["evaluate", str(run)]) == 0  # what the line offers works
    assert main(["train", "--resume", str(run / "best.ckpt"), "--out", str(tmp_path / "new")]) == 0
    assert (tmp_path / "new" / "COMPLETE").is_file()
