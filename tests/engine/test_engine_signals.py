"""A real ``graphmatch train`` process stopped by SIGTERM or SIGINT: one line, exit 128 + the
signal's number, a resumable ``last.ckpt``, and ``--resume`` ends as an uninterrupted run."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import lightning.pytorch as pl
import pytest
import torch
from engine_helpers import HERE, TOY

from graphmatch.engine import train
from graphmatch.engine.runs.checkpoint import read_checkpoint
from graphmatch.engine.training.signals import TrainingStopped

ROOT = HERE.parents[1]
SETS = ["model.dropout=0.3", "train.epochs=3", "train.threads=1", "train.keep_last=true"]  # last.ckpt compared too


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_saves_a_checkpoint_and_resume_finishes_the_run(tmp_path: Path, signum: int, command) -> None:
    straight = train(TOY, SETS, tmp_path / "straight")
    broken = tmp_path / "broken"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]), "TOY_STEP_DELAY": "0.15"}
    proc = command(["train", str(TOY), "--out", str(broken), "--set", *SETS], env)
    deadline = time.monotonic() + 120
    while not (broken / "last.ckpt").is_file() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the end of epoch 1 (8 steps) writes the first checkpoint
    assert proc.poll() is None, "the run ended before it could be stopped"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    name = signal.Signals(signum).name
    lines = err.strip().splitlines()
    assert re.fullmatch(rf"graphmatch train: stopped by {name} at epoch \d step (\d+); resume with: "
                        rf"graphmatch train --resume {re.escape(str(broken))}", lines[-1]), err
    step = int(re.search(r"step (\d+)", lines[-1]).group(1))
    assert 8 <= step < 24 and read_checkpoint(broken / "last.ckpt")["global_step"] == step
    assert not (broken / "COMPLETE").exists() and not (broken / "metrics.json").exists()

    assert train(resume=broken) == broken
    a, b = read_json(straight / "metrics.json"), read_json(broken / "metrics.json")
    for key in ("dev", "test", "best_step", "epochs", "steps"):
        assert a[key] == b[key], key
    assert read_json(straight / "history.json") == read_json(broken / "history.json")


class SignalAt(pl.Callback):
    """Sends ``signum`` to this process at the start of the training batch after ``step`` steps
    (``during_eval=False``), or at the start of evaluation batch ``batch`` of the dev evaluation
    after ``step`` steps; counts the evaluation batches that run afterwards."""

    def __init__(self, step: int, during_eval: bool = False, batch: int = 0, signum: int = signal.SIGTERM):
        self.step, self.during_eval, self.batch, self.signum = step, during_eval, batch, signum
        self.sent = False
        self.batches_after = 0

    def on_train_batch_start(self, trainer: pl.Trainer, *args: object) -> None:
        if not self.during_eval and not self.sent and trainer.global_step == self.step:
            self.sent = True
            os.kill(os.getpid(), self.signum)

    def on_validation_batch_end(self, *args: object) -> None:
        self.batches_after += self.sent

    def on_validation_batch_start(self, trainer: pl.Trainer, module: object, batch: object, batch_idx: int,
                                  *args: object) -> None:
        if self.during_eval and trainer.global_step == self.step and batch_idx == self.batch:
            self.sent = True
            os.kill(os.getpid(), self.signum)


def assert_same_run(a: Path, b: Path) -> None:
    ma, mb = read_json(a / "metrics.json"), read_json(b / "metrics.json")
    for key in ("dev", "test", "best_step", "best_epoch", "epochs", "steps"):
        assert ma[key] == mb[key], key
    assert read_json(a / "history.json") == read_json(b / "history.json")
    for name in ("best.ckpt", "last.ckpt"):
        sa, sb = read_checkpoint(a / name)["state_dict"], read_checkpoint(b / name)["state_dict"]
        assert all(torch.equal(sa[k], sb[k]) for k in sa), name


@pytest.mark.parametrize(("sets", "at"), [
    ([], SignalAt(7)),  # the step that ends epoch 1, whose dev evaluation follows
    ([], SignalAt(15)),  # the same at the end of epoch 2, a last.ckpt of step 8 in the folder
    ([], SignalAt(16, during_eval=True, batch=1)),  # in the middle of the evaluation after step 16
    (["train.val_every_steps=5"], SignalAt(10, during_eval=True, batch=2)),  # a mid-epoch evaluation
])
def test_a_signal_next_to_a_dev_evaluation_resumes_with_that_evaluation(tmp_path: Path, sets: list[str],
                                                                         at: SignalAt) -> None:
    """Stopped during a dev evaluation, or after the step one follows, a run stops at once (no
    further evaluation batch) and ``--resume`` evaluates first: history, selection and weights
    are those of an uninterrupted run (today the evaluation of that step was skipped)."""
    straight = train(TOY, [*SETS, *sets], tmp_path / "straight")
    broken = tmp_path / "broken"
    with pytest.raises(TrainingStopped) as stopped:
        train(TOY, [*SETS, *sets], broken, callbacks=[at])
    assert at.sent and at.batches_after == 0
    assert stopped.value.step == read_checkpoint(broken / "last.ckpt")["global_step"] == at.step + (not at.during_eval)
    assert train(resume=broken) == broken
    assert_same_run(straight, broken)


@pytest.mark.parametrize(("sets", "at"), [
    ([], SignalAt(23)),  # the last step, whose dev evaluation follows
    (["train.val_every_steps=5"], SignalAt(23)),  # the same, evaluated although 24 is not a multiple of 5
    (["train.val_every_steps=5"], SignalAt(24, during_eval=True, batch=1)),  # in that last evaluation
])
def test_a_signal_at_the_last_evaluation_resumes_from_the_last_checkpoint(tmp_path: Path, sets: list[str],
                                                                          at: SignalAt) -> None:
    straight = train(TOY, [*SETS, *sets], tmp_path / "straight")
    broken = tmp_path / "broken"
    with pytest.raises(TrainingStopped) as stopped:
        train(TOY, [*SETS, *sets], broken, callbacks=[at])
    saved = read_checkpoint(broken / "last.ckpt")["global_step"]
    assert at.batches_after == 0 and saved == (16 if not sets else 20)
    assert str(stopped.value) == (f"stopped by SIGTERM at epoch 3 step 24, at the last dev evaluation; resume with: "
                                  f"graphmatch train --resume {broken} (it trains again from last.ckpt, step {saved})")
    assert train(resume=broken) == broken
    assert_same_run(straight, broken)


def test_a_run_resumed_in_an_evaluation_can_be_stopped_and_resumed_again(tmp_path: Path) -> None:
    """The loop counters of a run resumed from an evaluation are in step again: a later stop
    resumes exactly too (without that, the next resume would evaluate once more)."""
    straight = train(TOY, SETS, tmp_path / "straight")
    broken = tmp_path / "broken"
    with pytest.raises(TrainingStopped):
        train(TOY, SETS, broken, callbacks=[SignalAt(8, during_eval=True)])
    with pytest.raises(TrainingStopped):
        train(resume=broken, callbacks=[SignalAt(20)])
    assert read_checkpoint(broken / "last.ckpt")["global_step"] == 21
    with pytest.raises(TrainingStopped):
        train(resume=broken, callbacks=[SignalAt(23)])  # the last step: stopped before its evaluation
    assert train(resume=broken) == broken
    assert_same_run(straight, broken)


def test_a_signal_during_a_slow_dev_evaluation_stops_the_process_within_seconds(tmp_path: Path, command) -> None:
    """A real process whose dev evaluation takes 4 x 3 s: SIGTERM in it ends the process within
    a few seconds (one evaluation batch), with the one line and 128 + 15."""
    run, mark = tmp_path / "run", tmp_path / "evaluating"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]), "TOY_EVAL_DELAY": "3",
           "TOY_EVAL_MARK": str(mark)}
    proc = command(["train", str(TOY), "--out", str(run), "--set", *SETS], env)
    deadline = time.monotonic() + 120
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be stopped"
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    waited = time.monotonic() - sent
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1].startswith("graphmatch train: stopped by SIGTERM at epoch 1 step 8; ")
    assert waited < 8, f"the process went on for {waited:.1f} s after SIGTERM"  # a whole evaluation: 12 s


@pytest.mark.parametrize(("moment", "signum"), [("datasets", signal.SIGTERM), ("datasets", signal.SIGINT),
                                                ("results", signal.SIGTERM), ("results", signal.SIGINT)])
def test_a_signal_outside_fit_stops_with_the_resume_line_and_no_lock(tmp_path: Path, moment: str, signum: int,
                                                                     capsys, command) -> None:
    """A real process signalled while its graphs are built, or after its last dev evaluation
    (while the results are written): the "stopped … resume with" line, 128 + the signal's number,
    no ``.owner.lock``, a folder that ``evaluate`` calls incomplete (refusing it when it saved
    nothing), and ``--resume`` ends as an uninterrupted run."""
    import toy_task  # noqa: F401  - the run's task, registered before it is resumed here

    from graphmatch.cli.main import main

    run = tmp_path / "run"
    name = signal.Signals(signum).name
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)]), "TOY_SIGNAL_AT": moment,
           "TOY_SIGNAL": name}
    proc = command.run(["train", str(TOY), "--out", str(run), "--set", *SETS], env, timeout=300)
    assert proc.returncode == 128 + signum, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    if moment == "datasets":
        assert last == (f"graphmatch train: stopped by {name} while preparing the data and model; resume with: "
                        f"graphmatch train --resume {run}"), proc.stderr
        assert sorted(p.name for p in run.iterdir()) == ["config.yaml"]
    else:
        assert last == (f"graphmatch train: stopped by {name} at epoch 3 step 24, after the last dev evaluation; "
                        f"resume with: graphmatch train --resume {run} (it evaluates the selected checkpoint again "
                        "and writes the results)"), proc.stderr
        assert read_checkpoint(run / "last.ckpt")["global_step"] == 24 and (run / "best.ckpt").is_file()
    assert "Traceback" not in proc.stderr
    assert not (run / ".owner.lock").exists() and not (run / "COMPLETE").exists()
    capsys.readouterr()
    assert main(["evaluate", str(run)]) == (2 if moment == "datasets" else 0)  # best.ckpt: evaluated, with a warning
    assert "is incomplete (interrupted: no COMPLETE marker)" in capsys.readouterr().err

    assert train(resume=run) == run
    assert (run / "COMPLETE").is_file() and not (run / ".owner.lock").exists()
    straight = train(TOY, SETS, tmp_path / "straight")
    for key in ("dev", "test", "best_step", "epochs", "steps"):
        assert read_json(straight / "metrics.json")[key] == read_json(run / "metrics.json")[key], key


class SignalAtFitEnd(pl.Callback):
    """Sends SIGTERM to this process when Lightning's fit ends (after the last dev evaluation and
    its checkpoints, before ``fit`` returns)."""

    def on_fit_end(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        if trainer.state.fn == "fit":
            os.kill(os.getpid(), signal.SIGTERM)


def test_a_signal_as_fit_ends_stops_before_the_results(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with pytest.raises(TrainingStopped) as stopped:
        train(TOY, SETS, run, callbacks=[SignalAtFitEnd()])
    assert stopped.value.phase == "results" and stopped.value.step == 24
    assert "after the last dev evaluation; resume with" in str(stopped.value)
    assert not (run / ".owner.lock").exists() and not (run / "metrics.json").exists()
    assert train(resume=run) == run and (run / "COMPLETE").is_file()


def test_a_signal_while_claiming_is_raised_once_the_claim_is_held(tmp_path: Path, monkeypatch) -> None:
    """A signal while the folder is claimed is only recorded, then stops the run, which gives the
    claim back (a handler raising inside the claim could leave the lock behind)."""
    from graphmatch.engine.runs import folder as run_folder

    real = run_folder.claim_folder

    def claim_and_signal(*args, **kwargs):
        claimed = real(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
        assert (claimed[0] / ".owner.lock").is_file()  # not raised yet
        return claimed

    monkeypatch.setattr(run_folder, "claim_folder", claim_and_signal)
    run = tmp_path / "run"
    with pytest.raises(TrainingStopped) as stopped:
        train(TOY, SETS, run)
    assert stopped.value.phase == "build" and stopped.value.exit_status == 128 + signal.SIGINT
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml"]


def test_a_run_continued_from_a_checkpoint_and_stopped_while_preparing_names_the_checkpoint(
        tmp_path: Path, monkeypatch) -> None:
    done = train(TOY, SETS, tmp_path / "done")
    monkeypatch.setenv("TOY_SIGNAL_AT", "datasets")
    new = tmp_path / "new"
    with pytest.raises(TrainingStopped) as stopped:
        train(resume=done / "best.ckpt", run_dir=new)
    assert str(stopped.value) == (f"stopped by SIGTERM while preparing the data and model; resume with: graphmatch "
                                  f"train --resume {done / 'best.ckpt'} --out {new}")
    assert not new.exists() or not any(new.iterdir())
