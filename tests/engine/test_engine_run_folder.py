"""The run-folder policy on its own (ranks, the folder handshake, new / resumed / nothing saved),
the evaluation trainer, and the engine's modules importing only each other's public names."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest
import torch
from engine_helpers import TOY, Terminal
from lightning.pytorch.callbacks import ModelCheckpoint

import graphmatch
from graphmatch.engine import resolve
from graphmatch.engine.runs import folder as run_folder
from graphmatch.engine.training.trainer import build_trainer

LAUNCH_VARS = ("RANK", "SLURM_PROCID", "LOCAL_RANK", "NODE_RANK", "WORLD_SIZE", run_folder.RUN_DIR_ENV)


@pytest.fixture
def launcher(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """A process no launcher started; the test sets what a launcher would."""
    for var in LAUNCH_VARS:
        monkeypatch.setenv(var, "")  # remembered, so that what the test sets is undone after it
        monkeypatch.delenv(var)
    return monkeypatch


@pytest.mark.parametrize("env,rank", [({}, 0), ({"RANK": "3"}, 3), ({"SLURM_PROCID": "1"}, 1),
                                      ({"LOCAL_RANK": "1"}, 1), ({"LOCAL_RANK": "0", "NODE_RANK": "2"}, 2)])
def test_env_rank(launcher, env: dict[str, str], rank: int) -> None:
    for var, value in env.items():
        launcher.setenv(var, value)
    assert run_folder.env_rank() == rank


def test_rank_zero_announces_its_folder_and_the_others_follow(launcher, tmp_path: Path) -> None:
    config = resolve(TOY)
    chosen = run_folder.choose_folder(config, tmp_path / "out")
    assert chosen == tmp_path / "out" and run_folder.os.environ[run_folder.RUN_DIR_ENV] == str(chosen.resolve())
    launcher.setenv("LOCAL_RANK", "1")  # a process Lightning launched: rank 0's folder, whatever it is given
    assert run_folder.choose_folder(config, tmp_path / "elsewhere") == chosen.resolve()
    assert run_folder.choose_folder(config, None) == chosen.resolve()


def test_folder_choice_errors(launcher, tmp_path: Path) -> None:
    config = resolve(TOY)
    launcher.setenv("WORLD_SIZE", "2")
    with pytest.raises(ValueError, match="pass --out DIR"):
        run_folder.choose_folder(config, None)
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="is a file"):
        run_folder.choose_folder(config, tmp_path / "file")
    launcher.delenv("WORLD_SIZE")
    launcher.chdir(tmp_path)
    default = run_folder.choose_folder(config, None)
    assert default.parent == Path("runs") and default.name.startswith("toy-toy-")


def test_new_resumed_and_nothing_saved_folders(launcher, tmp_path: Path) -> None:
    config = resolve(TOY)
    run = tmp_path / "run"
    run_folder.check_free(run)  # missing: free
    run_folder.open_folder(run, config, seeds=[7, 8])
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml", "seeds.json"]
    assert run_folder.nothing_saved(run) and run_folder.has_seeds(run)
    run_folder.check_free(run)  # nothing saved: may start again in place
    with pytest.raises(ValueError, match="stopped before it saved anything"):
        run_folder.check_complete(run)
    plan = run_folder.plan(None, ["train.epochs=1"], None, 1, run)
    assert plan.resume_dir and plan.run_dir == run and plan.seeds == 2 and plan.config["train"]["epochs"] == 1
    (run / "last.ckpt").write_bytes(b"")
    assert run_folder.resume_point(run) == run / "last.ckpt" and not run_folder.nothing_saved(run)
    with pytest.raises(ValueError, match=r"already exists and is not empty.*--resume"):
        run_folder.check_free(run)
    with pytest.raises(ValueError, match="differs from the run's configuration in train.epochs"):
        run_folder.plan(TOY, ["train.epochs=1"], None, 1, run)
    assert not run_folder.finished(run)
    run_folder.close_folder(run)
    assert run_folder.is_complete(run) and run_folder.finished(run)
    run_folder.check_complete(run)
    run_folder.open_folder(run, config)  # started again: the marker goes first
    assert not run_folder.is_complete(run)
    launcher.setenv("RANK", "1")  # other ranks never write
    run_folder.close_folder(run)
    assert not run_folder.is_complete(run)


def test_plan_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--seeds must be >= 1"):
        run_folder.plan(TOY, [], None, 0, None)
    with pytest.raises(ValueError, match="give a recipe"):
        run_folder.plan(None, [], None, 1, None)
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        run_folder.plan(None, [], None, 1, tmp_path / "nothing")
    with pytest.raises(ValueError, match="not a run folder"):
        run_folder.plan(None, [], None, 1, tmp_path)


def test_the_evaluation_trainer_is_the_training_one_on_one_device(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", Terminal())  # progress bars are drawn on a terminal only
    config = resolve(TOY, ["train.devices=2", "train.strategy=ddp", "train.patience=2", "train.progress=true"])
    trainer = build_trainer(config, None)  # evaluating a DDP run starts no processes
    assert trainer.num_devices == 1 and type(trainer.strategy).__name__ == "SingleDeviceStrategy"
    assert not any(isinstance(c, ModelCheckpoint) and c.dirpath for c in trainer.callbacks)
    assert trainer.early_stopping_callback is None and trainer.progress_bar_callback is not None
    assert trainer.precision == build_trainer(resolve(TOY), Path("unused"), "accuracy").precision
    with pytest.raises(ValueError, match="monitor"):
        build_trainer(config, Path("unused"))


def test_no_private_names_are_imported_across_modules() -> None:
    """A module's private names stay in it, or in its own package's modules (``graphs/kbert/``'s
    records are that package's, not the library's)."""
    package = Path(graphmatch.__file__).resolve().parent
    found = []
    for path in sorted(package.rglob("*.py")):
        here = ".".join(("graphmatch", *path.relative_to(package).with_suffix("").parts[:-1]))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graphmatch"):
                sibling = node.module.rpartition(".")[0] == here and here != "graphmatch"
                found += [f"{path.relative_to(package)}: {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__") and not sibling]
    assert found == []


def test_a_checkpoint_that_fails_to_save_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphmatch.engine.training import trainer
    from graphmatch.engine.training.trainer import AtomicCheckpointIO

    target = tmp_path / "best.ckpt"
    AtomicCheckpointIO().save_checkpoint({"state_dict": {}, "n": 1}, target)
    save = torch.save

    def half_then_fail(obj, f, *args, **kwargs):  # the disk fills up mid-write
        Path(f).write_bytes(b"PK\x03\x04 half")
        raise OSError("No space left on device")

    monkeypatch.setattr(trainer.torch, "save", half_then_fail)
    with pytest.raises(OSError, match="No space"):
        AtomicCheckpointIO().save_checkpoint({"state_dict": {}, "n": 2}, target)
    assert [p.name for p in tmp_path.iterdir()] == ["best.ckpt"]  # no temporary file left
    monkeypatch.setattr(trainer.torch, "save", save)
    assert torch.load(target, weights_only=True)["n"] == 1  # the previous checkpoint, intact
    with pytest.raises(TypeError, match="storage_options"):
        AtomicCheckpointIO().save_checkpoint({"n": 3}, target, storage_options={})


def test_a_checkpoint_is_written_straight_to_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No serialised copy in memory first (Lightning's writer's BytesIO: the checkpoint's size again)."""
    from graphmatch.engine.training import trainer
    from graphmatch.engine.training.trainer import AtomicCheckpointIO

    targets, save = [], torch.save

    def recorded(obj, f, *args, **kwargs):
        targets.append(f)
        return save(obj, f, *args, **kwargs)

    monkeypatch.setattr(trainer.torch, "save", recorded)
    monkeypatch.setattr(trainer, "serialized_size", lambda checkpoint: 0)  # only asked when the disk is full
    weights = {"w": torch.arange(6.0)}
    AtomicCheckpointIO().save_checkpoint({"state_dict": weights}, tmp_path / "last.ckpt")
    assert len(targets) == 1 and isinstance(targets[0], str | os.PathLike)
    assert Path(targets[0]).parent == tmp_path and not Path(targets[0]).exists()  # the renamed temporary file
    assert torch.equal(torch.load(tmp_path / "last.ckpt", weights_only=True)["state_dict"]["w"], weights["w"])
