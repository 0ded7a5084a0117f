"""End to end through the engine's Python API on the toy task: run folders, selection on dev,
a single test evaluation, resuming, early stopping, seeds and the errors users meet."""

from __future__ import annotations

import json
import math
from pathlib import Path

import lightning.pytorch as pl
import pytest
import torch
import toy_task
from engine_helpers import TOY, TOY_QUICK, Crash, Recorder

from graphmatch.engine import evaluate, load, predict, resolve, train
from graphmatch.engine.runner import build_trainer
from graphmatch.engine.runs import read_yaml
from graphmatch.engine.runs.checkpoint import META, read_checkpoint
from graphmatch.io.datafiles import DataFileMissing
from graphmatch.metrics import accuracy


def read_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_run_folder(trained_run) -> None:
    run_dir, _ = trained_run
    for name in (
        "config.yaml",
        "best.ckpt",
        "metrics.json",
        "predictions_dev.jsonl",
        "predictions_test.jsonl",
        "curve.png",
        "summary.md",
        "history.json",
        "COMPLETE",
    ):
        assert (run_dir / name).is_file(), name
    assert not list(run_dir.glob(".*")), "temporary files left behind"
    assert not (run_dir / "last.ckpt").exists()  # removed once complete (train.keep_last: false)
    best = read_checkpoint(run_dir / "best.ckpt")
    assert "optimizer_states" not in best and "callbacks" not in best  # the weights (and graphmatch's entry) only
    assert read_yaml(run_dir / "config.yaml") == resolve(TOY)
    metrics = read_json(run_dir / "metrics.json")
    assert metrics["epochs"] == 4 and metrics["steps"] == 4 * 8  # 128 samples / 16
    assert metrics["samples"] == {"train": 128, "dev": 64, "test": 64}
    assert (run_dir / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = (run_dir / "summary.md").read_text()
    assert f"{metrics['test']['accuracy']:.2f}" in summary and "curve.png" in summary


def test_model_learns(trained_run) -> None:
    metrics = read_json(trained_run[0] / "metrics.json")
    assert metrics["dev"]["accuracy"] >= 80 and metrics["test"]["accuracy"] >= 75  # chance is ~50


def test_checkpoint_is_selected_on_dev_and_test_runs_once(trained_run) -> None:
    run_dir, recorder = trained_run
    metrics = read_json(run_dir / "metrics.json")
    history = read_json(run_dir / "history.json")
    assert [h["step"] for h in history] == [8, 16, 24, 32]
    dev_scores = [h["dev"]["accuracy"] for h in history]
    best = dev_scores.index(max(dev_scores))  # first best: later ties do not replace it
    assert metrics["best_step"] == history[best]["step"]
    assert metrics["dev"] == history[best]["dev"]  # dev re-evaluated with the selected weights
    assert all("test" not in h for h in history)
    assert recorder.tests == 1 and recorder.fn_at_test == ["test"]  # once, after fitting
    for split in ("dev", "test"):
        rows = read_rows(run_dir / f"predictions_{split}.jsonl")
        assert [r["index"] for r in rows] == list(range(64))
        assert accuracy(rows) == pytest.approx(metrics[split]["accuracy"])


def test_learning_rates_warm_up_then_decay_per_group(trained_run) -> None:
    lrs = trained_run[1].lrs
    assert len(lrs) == 32
    rest = [s["rest"] for s in lrs]
    assert all(s["encoder"] == pytest.approx(s["rest"] / 2) for s in lrs)  # encoder_lr 1e-2 vs lr 2e-2
    peak = rest.index(max(rest))
    assert rest[0] == 0.0 and peak == 3  # warm-up over 10 % of 32 steps = 3 steps
    assert all(a > b for a, b in zip(rest[peak:], rest[peak + 1 :], strict=False))  # linear decay
    assert max(rest) == pytest.approx(0.02)


def test_evaluate_load_predict(trained_run) -> None:
    run_dir, _ = trained_run
    metrics = read_json(run_dir / "metrics.json")
    assert evaluate(run_dir, "test") == pytest.approx(metrics["test"])
    assert evaluate(run_dir / "best.ckpt", "dev") == pytest.approx(metrics["dev"])
    before = torch.get_rng_state()
    task, model = load(run_dir)
    assert torch.equal(torch.get_rng_state(), before)  # built without drawing weights, then loaded
    assert not model.training
    state = read_checkpoint(run_dir / "best.ckpt")["state_dict"]
    assert model.state_dict().keys() == {k.removeprefix("model.") for k in state}
    assert all(torch.equal(v, state[f"model.{k}"]) for k, v in model.state_dict().items())
    row = predict(run_dir, "一二三四")
    assert row["label"] in task.label_names() and 0.5 <= row["prob"] <= 1 and row["gold"] is None
    with pytest.warns(FutureWarning, match="'pred' is now 'label'"):  # the previous release's name
        assert row["pred"] == row["label"] and row.get("pred") == row["label"]
    assert "pred" not in row and row.get("missing") is None


def test_trainer_options() -> None:
    config = resolve(TOY, ["optim.clip=0.5", "train.patience=2", "train.val_every_steps=5"])
    trainer = build_trainer(config, Path("unused"), "accuracy")
    assert trainer.gradient_clip_val == 0.5 and trainer.gradient_clip_algorithm == "norm"
    assert trainer.val_check_interval == 5 and trainer.check_val_every_n_epoch is None
    assert trainer.early_stopping_callback.patience == 2
    assert trainer.checkpoint_callback.monitor == "dev/accuracy"
    assert torch.get_num_threads() >= 1


class GradNorms(pl.Callback):
    """The global gradient norm after each optimiser step (the gradients it stepped with) and
    whether the optimiser was fused."""

    def __init__(self) -> None:
        self.norms: list[float] = []
        self.fused: set[bool] = set()

    def on_train_batch_end(self, trainer: pl.Trainer, module: pl.LightningModule, *args) -> None:
        grads = [p.grad.norm() for p in module.parameters() if p.grad is not None]
        self.norms.append(float(torch.stack(grads).norm()))
        self.fused.add(bool(trainer.optimizers[0].defaults.get("fused")))


@pytest.mark.parametrize("fused", [True, False])
def test_clip_bounds_the_gradient_norm_in_bf16(tmp_path: Path, fused: bool) -> None:
    """``optim.clip`` under bf16-mixed, with the fused optimiser (which Lightning's own clipping
    refuses under mixed precision) and without."""
    clip = 1e-3
    sets = ["train.precision=bf16-mixed", f"optim.fused={str(fused).lower()}", "train.epochs=1"]
    free, clipped = GradNorms(), GradNorms()
    train(TOY_QUICK, sets, tmp_path / "free", callbacks=[free])
    train(TOY_QUICK, [*sets, f"optim.clip={clip}"], tmp_path / "clipped", callbacks=[clipped])
    assert free.fused == clipped.fused == {fused}
    assert min(free.norms) > 10 * clip and max(clipped.norms) <= clip * (1 + 1e-4)


@pytest.mark.parametrize(
    "every",
    [
        [],  # dev after every epoch: last.ckpt is the end of epoch 2
        ["train.val_every_steps=3"],  # last.ckpt at step 15, in the middle of epoch 2 (8 batches an epoch)
    ],
)
def test_resumed_run_equals_uninterrupted(tmp_path: Path, every: list[str]) -> None:
    # dropout: the resumed run must continue the random stream
    sets = ["model.dropout=0.3", "train.epochs=4", "train.keep_last=true", *every]
    straight = train(TOY, sets, tmp_path / "straight")
    broken = tmp_path / "broken"
    with pytest.raises(RuntimeError, match="simulated crash"):
        train(TOY, sets, broken, callbacks=[Crash(at_epoch=2)])
    assert read_checkpoint(broken / "last.ckpt")["global_step"] == (15 if every else 16)
    assert not (broken / "COMPLETE").exists()
    assert not (broken / "metrics.json").exists()
    with pytest.warns(UserWarning, match=rf"incomplete.*evaluating its best.ckpt.*graphmatch train --resume {broken}$"):
        so_far = evaluate(broken, "dev")  # the best of what was trained, said to be so
    best_step = read_checkpoint(broken / "best.ckpt")["global_step"]
    assert so_far == next(h["dev"] for h in read_json(straight / "history.json") if h["step"] == best_step)
    with pytest.raises(ValueError, match="differs from the run's configuration in model.dropout"):
        train(TOY, ["train.epochs=4", "train.keep_last=true", *every], resume=broken)
    assert train(resume=broken) == broken
    a, b = read_json(straight / "metrics.json"), read_json(broken / "metrics.json")
    for key in ("dev", "test", "best_step", "epochs", "steps"):
        assert a[key] == b[key], key
    assert read_json(straight / "history.json") == read_json(broken / "history.json")
    for name in ("best.ckpt", "last.ckpt"):
        sa, sb = read_checkpoint(straight / name)["state_dict"], read_checkpoint(broken / name)["state_dict"]
        assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa), name


def test_early_stopping_and_evaluation_every_n_steps(tmp_path: Path) -> None:
    # a learning rate too small to change anything: dev never improves, patience 1 stops after 2 checks
    run = train(
        TOY_QUICK,
        ["optim.lr=1e-12", "optim.encoder_lr=null", "train.patience=1", "train.epochs=10", "train.val_every_steps=3"],
        tmp_path / "es",
    )
    history = read_json(run / "history.json")
    assert [h["step"] for h in history] == [3, 6]
    assert read_json(run / "metrics.json")["steps"] == 6


def test_several_seeds_give_mean_and_std(tmp_path: Path) -> None:
    run = train(TOY_QUICK, ["train.epochs=1"], tmp_path / "seeds", seeds=2)
    agg = read_json(run / "metrics.json")
    assert agg["seeds"] == [7, 8] and (run / "COMPLETE").is_file()
    values = [read_json(run / f"seed-{s}" / "metrics.json")["test"]["accuracy"] for s in (7, 8)]
    stats = agg["test"]["accuracy"]
    assert stats["values"] == values
    assert stats["mean"] == pytest.approx(sum(values) / 2)
    assert stats["std"] == pytest.approx(abs(values[0] - values[1]) / math.sqrt(2))
    assert "±" in (run / "summary.md").read_text() and (run / "curve.png").is_file()
    # resuming a finished multi-seed folder does nothing
    assert train(resume=run) == run


def test_bad_input_errors(tmp_path: Path, trained_run) -> None:
    with pytest.raises(DataFileMissing, match="toy/missing.tsv"):
        train(TOY_QUICK, ["data.file=toy/missing.tsv"], tmp_path / "nodata")
    assert not (tmp_path / "nodata" / "COMPLETE").exists()
    with pytest.raises(ValueError, match=r"already exists and is not empty.*--resume"):
        train(TOY_QUICK, [], trained_run[0])
    with pytest.raises(ValueError, match="did you mean 'train.epochs'"):
        train(TOY_QUICK, ["train.epoch=1"])


def test_incompatible_checkpoints(tmp_path: Path, trained_run) -> None:
    ckpt = torch.load(trained_run[0] / "best.ckpt", weights_only=True)
    ckpt[META]["config"]["model"]["hidden"] = 32  # the weights are hidden=16
    torch.save(ckpt, tmp_path / "other.ckpt")
    with pytest.raises(ValueError, match=r"does not fit the model.*shape mismatch.*incompatible model"):
        load(tmp_path / "other.ckpt")
    torch.save({"state_dict": {}}, tmp_path / "foreign.ckpt")
    with pytest.raises(ValueError, match="not a graphmatch checkpoint"):
        load(tmp_path / "foreign.ckpt")
    (tmp_path / "garbage.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"garbage.ckpt is not a checkpoint \(a torch.save file\)"):
        evaluate(tmp_path / "garbage.ckpt")
    (tmp_path / "broken.ckpt").write_bytes(b"PK\x03\x04 a truncated archive")
    with pytest.raises(ValueError, match="broken.ckpt is not a readable checkpoint"):
        evaluate(tmp_path / "broken.ckpt")
    with pytest.raises(FileNotFoundError, match="no run folder or checkpoint"):
        load(tmp_path / "nothing")
    # resuming from a checkpoint of another model size is refused before anything is loaded
    with pytest.raises(ValueError, match="does not fit the model"):
        train(resume=tmp_path / "other.ckpt", run_dir=tmp_path / "resumed")


def test_max_steps_shorter_than_an_epoch_still_selects_on_dev(tmp_path: Path) -> None:
    # 128 training samples in batches of 16: 8 steps per epoch; stop after 3
    run = train(TOY, ["train.max_steps=3"], run_dir=tmp_path / "run")
    metrics = read_json(run / "metrics.json")
    assert (run / "best.ckpt").is_file() and "accuracy" in metrics["dev"]
    assert read_checkpoint(run / "best.ckpt")["global_step"] == 3


def test_threads_are_set_for_the_run_only(tmp_path: Path) -> None:
    """``train.threads`` applies while a run trains or evaluates; the caller's count comes back."""
    seen: list[int] = []

    class Threads(pl.Callback):
        def on_train_batch_start(self, *args: object) -> None:
            seen.append(torch.get_num_threads())

    before = torch.get_num_threads()
    want = before + 1
    run = train(TOY_QUICK, [f"train.threads={want}", "train.progress=false"], tmp_path / "run", callbacks=[Threads()])
    assert seen and set(seen) == {want}
    assert torch.get_num_threads() == before
    evaluate(run, split="dev", overrides=[f"train.threads={want}", "train.progress=false"])
    assert torch.get_num_threads() == before


def test_layer_decay_trains_each_encoder_layer_at_its_rate(tmp_path: Path, monkeypatch) -> None:
    recorder = Recorder()
    sets = ["model.encoder_layers=3", "optim.layer_decay=0.5", "train.epochs=1"]
    train(TOY_QUICK, sets, tmp_path / "run", callbacks=[recorder])
    assert len(recorder.lrs) == 4
    for step in recorder.lrs:  # warm-up and decay scale every group alike
        assert step["encoder.2"] == pytest.approx(step["rest"] / 2)  # encoder_lr 1e-2 vs lr 2e-2
        assert step["encoder.1"] == pytest.approx(step["encoder.2"] / 2)
        assert step["encoder.0_no_decay"] == pytest.approx(step["encoder.2"] / 4)
    # a task that lists no encoder layers is refused before anything is trained or written
    monkeypatch.setattr(toy_task.ToyTask, "encoder_layers", lambda self, model: [])
    with pytest.raises(ValueError, match="optim.layer_decay needs a task"):
        train(TOY_QUICK, ["optim.layer_decay=0.5"], tmp_path / "nolayers")
    assert not (tmp_path / "nolayers").exists()


def _as_previous_release(config: dict) -> dict:
    """A configuration as the previous release wrote it: sample limits under train."""
    old = json.loads(json.dumps(config))
    limit = old["data"].pop("limit")
    old["train"]["limit_train"], old["train"]["limit_eval"] = limit["train"], limit["test"]
    return old


def test_a_run_folder_of_the_previous_release_still_loads(tmp_path: Path, recwarn) -> None:
    from graphmatch.engine.runs import write_yaml

    run = train(TOY_QUICK, ["train.epochs=1", "train.progress=false"], tmp_path / "old")
    expected = evaluate(run, "dev")
    ckpt = torch.load(run / "best.ckpt", weights_only=True)
    ckpt[META]["config"] = _as_previous_release(ckpt[META]["config"])
    torch.save(ckpt, run / "best.ckpt")
    write_yaml(run / "config.yaml", _as_previous_release(read_yaml(run / "config.yaml")))
    assert resolve(read_yaml(run / "config.yaml"), stored=True) == resolve(TOY_QUICK, ["train.epochs=1",
                                                                                      "train.progress=false"])
    assert evaluate(run, "dev") == expected  # model keys compared under their current names
    task, _ = load(run)
    assert task.data.limit.train == 64
    assert train(resume=run) == run  # complete: nothing to do, but its configuration was read
    assert not [w for w in recwarn if "deprecated" in str(w.message)]  # a stored configuration is not the user's


class _FirstWeights(pl.Callback):
    """The head's weights when training starts."""

    def on_train_start(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        self.head = module.model.head.weight.detach().clone()


def test_keep_last_and_training_again_from_a_weights_only_best(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    kept = train(TOY_QUICK, ["train.keep_last=true"], tmp_path / "kept")
    assert "optimizer_states" in read_checkpoint(kept / "last.ckpt")  # resumable, kept on request
    best = read_checkpoint(kept / "best.ckpt")
    assert "optimizer_states" not in best
    assert evaluate(kept, "dev") == pytest.approx(read_json(kept / "metrics.json")["dev"])  # best.ckpt, as before
    capsys.readouterr()
    first = _FirstWeights()
    again = train(None, ["train.keep_last=false"], tmp_path / "again", resume=kept / "best.ckpt", callbacks=[first])
    assert "holds the weights only (no optimiser state): training starts from them" in capsys.readouterr().err
    assert torch.equal(first.head, best["state_dict"]["model.head.weight"])  # from best's weights, at step 0
    assert read_json(again / "metrics.json")["steps"] == read_json(kept / "metrics.json")["steps"]
    assert not (again / "last.ckpt").exists() and (again / "COMPLETE").is_file()  # keep_last: a runtime key


def test_keep_last_bad_value_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from graphmatch.cli.main import main

    assert main(["train", str(TOY_QUICK), "--out", str(tmp_path / "run"), "--set", "train.keep_last=sometimes"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "train.keep_last" in err[0], err
