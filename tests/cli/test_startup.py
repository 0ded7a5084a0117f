"""Every command reads and checks its recipe and arguments before torch and Lightning are imported
(issue 32): a bad recipe is refused by a process that never loaded them (``sys.modules``, not a
timing; the CPU time is ``benchmarks/bench_startup.py``'s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "lightning", "torch_geometric")

#: runs graphmatch's main() on the arguments given as JSON, then prints its exit status and which
#: heavy modules were imported
_PROBE = (
    "import json, sys\n"
    "from graphmatch.cli.main import main\n"
    "status = main(json.loads(sys.argv[1]))\n"
    f"print(json.dumps([status, sorted(m for m in {HEAVY!r} if m in sys.modules)]))\n"
)


def probe(argv: list[str], cwd: Path) -> tuple[int, list[str], str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    status, loaded = json.loads(done.stdout.splitlines()[-1])
    return status, loaded, done.stderr


@pytest.mark.parametrize(
    "argv,message",
    [
        (["train", "kbert/chnsenticorp_hownet_quick", "--set", "train.epoch=2"],
         "unknown recipe key 'train.epoch'; did you mean 'train.epochs'?"),
        (["train", "kbert/chnsenticorp_hownet_quick", "--set", "model.pooling=cls"], "model.pooling must be one of"),
        (["train", "kbert/chnsenticorp_hownet_quick", "--set", "model.attention_mode=fast"],
         "model.attention_mode must be one of auto, dense, sparse"),
        (["train", "let/lcqmc_quick", "--set", "model.update=lstm"], "model.update must be one of gru, residual"),
        (["train", "let/lcqmc_quick", "--set", "data.segmentation=ltp"], "data.segmentation must be lattice"),
        (["train", "relation/semeval_att_blstm_quick", "--set", "model.name=bilstm"], "model.name must be one of"),
        (["train", "relation/semeval_att_blstm_quick", "--set", "model.name=transformer_entity_start"],
         "needs model.pretrained"),  # a rule between keys (check_sections)
        (["train", "relation/semeval_att_blstm_quick", "--set", "model.pretrained=minilm"],
         "unknown recipe key 'model.pretrained'"),  # not a key of the BiLSTM's section
        (["train", "no/such/recipe"], "recipe 'no/such/recipe' not found"),
        (["train", "kbert/chnsenticorp_hownet_quick", "--set", "task=nosuchtask"], "unknown task 'nosuchtask'"),
        (["evaluate", "no/such/run"], "no run folder or checkpoint at no/such/run"),
        (["predict", "no/such/run", "文本"], "no run folder or checkpoint at no/such/run"),
    ],
)
def test_a_bad_recipe_or_argument_is_refused_before_torch(tmp_path: Path, argv: list[str], message: str) -> None:
    status, loaded, err = probe(argv, tmp_path)
    assert status == 2 and message in err and loaded == []
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written


def test_evaluate_and_predict_check_their_arguments_against_the_run_folder_first(tmp_path: Path) -> None:
    from graphmatch.tasks.recipes.resolve import resolve  # no torch either

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(yaml.safe_dump(resolve("kbert/chnsenticorp_hownet_quick")), encoding="utf-8")
    status, loaded, err = probe(["evaluate", str(run), "--set", "train.eval_batch_siz=8"], tmp_path)
    assert status == 2 and "did you mean 'train.eval_batch_size'?" in err and loaded == []
    status, loaded, err = probe(["evaluate", str(run), "--set", "model.num_layers=1"], tmp_path)
    assert status == 2 and "model keys cannot change when evaluating a checkpoint: model.num_layers" in err
    assert loaded == []
    status, loaded, err = probe(["predict", str(run), "--input", str(tmp_path / "missing.txt")], tmp_path)
    assert status == 2 and f"{tmp_path / 'missing.txt'}: no such file or folder" in err and loaded == []


def test_every_shipped_recipe_is_checked_without_torch(tmp_path: Path) -> None:
    code = ("import sys\nfrom pathlib import Path\nfrom graphmatch.tasks.recipes.resolve import resolve\n"
            "names = sorted(str(p.relative_to('recipes').with_suffix('')) for p in Path('recipes').rglob('*.yaml'))\n"
            "configs = [resolve(n) for n in names]\n"
            f"print(len(configs), sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    count, loaded = done.stdout.split(" ", 1)
    assert int(count) >= 20 and loaded.strip() == "[]"


def test_train_on_a_terminal_names_the_checked_recipe_before_torch(tmp_path: Path) -> None:
    code = ("import io, sys\n"
            "class Terminal(io.StringIO):\n    def isatty(self):\n        return True\n"
            "def stop(plan):\n"
            f"    print(sys.stderr.getvalue(), sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.__stderr__)\n"
            "    raise SystemExit(0)\n"
            "runner = sys.modules['graphmatch.engine.runner'] = type(sys)('runner')\n"  # train_plan loads torch
            "runner.train_plan = stop\n"
            "sys.stderr = Terminal()\n"
            "from graphmatch.cli.main import main\n"
            "main(['train', 'kbert/chnsenticorp_hownet_quick', '--set', 'name=mine'])\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "graphmatch train: recipe mine (task kbert) checked; loading torch and Lightning" in done.stderr
    assert done.stderr.rstrip().endswith("[]")  # nothing heavy loaded yet
