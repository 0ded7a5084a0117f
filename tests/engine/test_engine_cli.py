"""The train / evaluate / predict commands on the toy task, and their one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from engine_helpers import TOY, TOY_QUICK, Crash, Terminal

from graphmatch.cli.main import main
from graphmatch.engine import train
from graphmatch.engine.inference.predictor import Predictor
from graphmatch.engine.runs import read_yaml


def test_train_evaluate_predict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "quick"
    assert main(["train", str(TOY_QUICK), "--set", "train.epochs=1", "model.hidden=8", "--out", str(run)]) == 0
    out = capsys.readouterr().out
    metrics = json.loads((run / "metrics.json").read_text())
    assert f"run folder: {run}" in out and f"accuracy {metrics['test']['accuracy']:.2f}" in out
    assert metrics["steps"] == 4 and read_yaml(run / "config.yaml")["model"]["hidden"] == 8

    assert main(["evaluate", str(run), "--split", "dev", "--predictions", str(tmp_path / "dev.jsonl")]) == 0
    out = capsys.readouterr().out
    assert f"dev accuracy\t{metrics['dev']['accuracy']:.2f}" in out
    rows = [json.loads(line) for line in (tmp_path / "dev.jsonl").read_text().splitlines()]
    assert len(rows) == 64 and [r["index"] for r in rows] == list(range(64))

    show, explain = tmp_path / "graph.png", tmp_path / "explain.png"
    assert main(["predict", str(run), "自然语言", "处理", "--show", str(show), "--explain", str(explain)]) == 0
    captured = capsys.readouterr()  # stdout: a header and the row; where the pictures went: stderr
    header, row = captured.out.splitlines()
    label, prob = row.split("\t")
    assert header == "label\tprobability" and label in ("0", "1") and 0.5 <= float(prob) <= 1.0
    assert captured.err.splitlines() == [f"input graph: {show}", f"explanation: {explain}"]
    assert show.read_bytes()[:4] == b"\x89PNG" and explain.read_bytes()[:4] == b"\x89PNG"
    assert main(["predict", str(run), "自然语言", "处理", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"label": label, "prob": pytest.approx(float(prob), abs=1e-4)}


def test_resume_from_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "broken"
    with pytest.raises(RuntimeError, match="simulated crash"):
        train(TOY_QUICK, ["train.epochs=2"], run, callbacks=[Crash(at_epoch=1)])
    capsys.readouterr()
    assert main(["evaluate", str(run)]) == 0  # its best.ckpt, said to be of an incomplete run
    captured = capsys.readouterr()
    assert captured.err == (f"graphmatch evaluate: warning: run folder {run} is incomplete (interrupted: no COMPLETE "
                            "marker); evaluating its best.ckpt, the best on dev of the steps trained so far; finish "
                            f"the run with: graphmatch train --resume {run}\n")
    assert captured.out.startswith("test accuracy\t")
    assert main(["train", "--resume", str(run)]) == 0
    assert (run / "COMPLETE").is_file() and json.loads((run / "metrics.json").read_text())["epochs"] == 2


@pytest.mark.parametrize(
    "argv,message",
    [
        (["train", str(TOY), "--set", "train.epoch=1"],
         "unknown recipe key 'train.epoch'; did you mean 'train.epochs'?"),
        (["train", str(TOY), "--set", "data.file=toy/missing.tsv"], "data file 'toy/missing.tsv' not found"),
        (["train", "no/such/recipe"], "recipe 'no/such/recipe' not found"),
        (["train"], "give a recipe to train"),
        (["evaluate", "/no/such/run"], "no run folder or checkpoint"),
        (["train", str(TOY), "--set", "data.n_train='100'"], "data.n_train must be an integer >= 1, got '100'"),
        (["train", "kbert/chnsenticorp_hownet_quick", "--set", "data.limit.train='100'"],
         "data.limit.train must be a count >= 1 (int), a fraction in (0, 1] (float) or null, got '100'"),
        (["train", str(TOY), "--set", "train.strategy=deepspeed", "--out", "o"], "do not work on this machine"),
        (["predict", "/no/such/run", "文本"], "no run folder or checkpoint"),
    ],
)
def test_errors_are_one_line(tmp_path: Path, capsys, argv: list[str], message: str, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # default run folders land here
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "text,message",
    [
        ("train:\n  epoch: 2\n", "unknown recipe key 'train.epoch' in {recipe}; did you mean 'train.epochs'?"),
        ("train:\n  epochs: three\n", "train.epochs must be an integer >= 1, got 'three' ({recipe})"),
        ("optim:\n  schedule: cosine\n", "optim.schedule must be one of linear, constant, got 'cosine' ({recipe})"),
        ("data:\n  limit: {train: 32}\ntrain:\n  limit_train: 16\n",
         "data.limit.train is set twice in {recipe}: to 32, and to 16 through the deprecated train.limit_train; "
         "keep data.limit.train"),
        ("trainer:\n  epochs: 2\n", "unknown recipe section 'trainer' in {recipe}; did you mean 'train'?"),
        ("train:\n  epochs: [1\n", "recipe {recipe}:4 is not valid YAML: expected ',' or ']', but got '<stream end>'"),
    ],
)
def test_a_bad_recipe_is_one_line_naming_key_and_file(tmp_path: Path, capsys, monkeypatch, text: str,
                                                      message: str) -> None:
    monkeypatch.chdir(tmp_path)  # a default run folder would land here
    recipe = tmp_path / "x.yaml"
    recipe.write_text(f"base: {TOY}\n{text}", encoding="utf-8")
    assert main(["train", str(recipe)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"graphmatch train: error: {message.format(recipe=recipe)}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.yaml"]  # no run folder


def test_old_key_names_still_work_with_one_warning_each(tmp_path: Path, capsys) -> None:
    recipe = tmp_path / "old.yaml"
    recipe.write_text(f"base: {TOY}\ntrain:\n  limit_train: 32\n  limit_eval: 16\n  epochs: 1\n", encoding="utf-8")
    run = tmp_path / "run"
    assert main(["train", str(recipe), "--set", "train.limit_train=32", "--out", str(run)]) == 0
    err = capsys.readouterr().err.splitlines()
    warned = [line for line in err if "deprecated" in line]
    assert warned == [
        "graphmatch train: warning: recipe key 'train.limit_train' is deprecated; use 'data.limit.train'",
        "graphmatch train: warning: recipe key 'train.limit_eval' is deprecated; use 'data.limit.dev' and "
        "'data.limit.test'",
    ]
    assert read_yaml(run / "config.yaml")["data"]["limit"] == {"train": 32, "dev": 16, "test": 16}
    assert json.loads((run / "metrics.json").read_text())["samples"] == {"train": 32, "dev": 16, "test": 16}


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="this machine has a GPU")
def test_a_gpu_asked_for_on_a_cpu_machine(tmp_path: Path, capsys) -> None:
    assert main(["train", str(TOY_QUICK), "--set", "train.accelerator=gpu", "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "train.accelerator=gpu, but torch sees no CUDA GPU" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "r").exists()  # refused before anything is written


def test_out_at_an_existing_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "taken.txt"
    out.write_text("mine\n")
    assert main(["train", str(TOY_QUICK), "--out", str(out)]) == 2
    assert "is a file; give --out a folder" in capsys.readouterr().err and out.read_text() == "mine\n"


def test_a_run_that_failed_before_its_first_step_restarts_in_place(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    bad = ["--set", "data.file=toy/missing.tsv", "data.root=" + str(tmp_path)]
    assert main(["train", str(TOY_QUICK), *bad, "--out", str(run)]) == 2
    assert "toy/missing.tsv" in capsys.readouterr().err
    assert not run.exists()  # it failed on its data: nothing was written
    with pytest.raises(RuntimeError, match="simulated crash"):  # stopped before its first checkpoint
        train(TOY_QUICK, ["train.progress=false", f"data.root={tmp_path}"], run, callbacks=[Crash(0)])
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml", "inputs.json"]
    assert main(["evaluate", str(run)]) == 2
    assert "start it again in place with: graphm" in capsys.readouterr().err
    assert main(["train", str(TOY_QUICK), *bad, "--out", str(run)]) == 2  # the same --out is accepted again
    assert "toy/missing.tsv" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir()) == ["config.yaml", "inputs.json"]  # and the earlier config is kept
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "other.tsv").write_text("x\n")
    assert main(["train", "--resume", str(run), "--set", "data.file=toy/other.tsv", "train.epochs=1"]) == 0
    assert (run / "COMPLETE").is_file() and read_yaml(run / "config.yaml")["data"]["file"] == "toy/other.tsv"
    assert main(["train", str(TOY_QUICK), "--out", str(run)]) == 2  # a finished run is never overwritten
    assert "already exists and is not empty" in capsys.readouterr().err


def test_no_lightning_chatter_and_epoch_lines_in_a_redirected_log(tmp_path: Path, capsys, caplog) -> None:
    """stderr not a terminal (a log file): no progress bar, one line per epoch, and none of
    Lightning's notes (summary callbacks, GPU/TPU lines, restored checkpoints, advertising),
    on training and evaluation alike; the model summary stays."""
    caplog.set_level("INFO")
    run = tmp_path / "r"
    assert main(["train", str(TOY_QUICK), "--set", "train.epochs=2", "train.progress=true", "--out", str(run)]) == 0
    assert main(["evaluate", str(run)]) == 0
    captured = capsys.readouterr()
    shown = captured.out + captured.err + caplog.text
    for chatter in ("already configured", "GPU available", "TPU available", "HPU available", "Restoring states",
                    "Loaded model weights", "litlogger", "litmodels", "Tip:", "\r", "it/s"):
        assert chatter not in shown
    assert "Trainable params" in caplog.text
    assert [line.split(":")[0] for line in captured.err.splitlines()] == ["epoch 1/2 (step 4)", "epoch 2/2 (step 8)"]
    assert captured.out.splitlines()[0] == f"run folder: {run}" and "test accuracy\t" in captured.out


def test_progress_bars_only_on_a_terminal(tmp_path: Path, monkeypatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["train", str(TOY_QUICK), "--set", "train.epochs=1", "train.progress=true",
                 "--out", str(tmp_path / "r")]) == 0
    shown = terminal.getvalue()
    assert "\rEpoch 0: 100%" in shown and "epoch 1/1 (step" not in shown
    terminal.truncate(0)
    assert main(["train", str(TOY_QUICK), "--set", "train.epochs=1", "train.progress=false",
                 "--out", str(tmp_path / "quiet")]) == 0
    assert "\r" not in terminal.getvalue() and "epoch 1/1 (step 4)" in terminal.getvalue()


def test_the_recipe_command(capsys) -> None:
    import yaml

    from graphmatch.engine import resolve

    assert main(["recipe", str(TOY_QUICK), "--set", "train.epochs=1"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == resolve(TOY_QUICK, ["train.epochs=1"])
    assert main(["recipe", "--keys", "toy_task:toy"]) == 0
    out = capsys.readouterr().out
    assert "| `data.n_train` | int | `128` | >= 1 | training graphs |" in out and "## `train` (every task)" in out
    assert "## `data` of `kbert`" not in out
    assert main(["recipe"]) == 2
    assert "give a recipe, --list for the recipes, or --keys" in capsys.readouterr().err


def test_recipe_list_names_every_shipped_recipe(tmp_path: Path, capsys, monkeypatch) -> None:
    """``graphmatch recipe --list``: one line per recipe the package ships, name and description
    (a ``_quick`` variant's own, else its base's), from any folder."""
    monkeypatch.chdir(tmp_path)  # no ./recipes here: the project's (a wheel's: the package's) alone
    assert main(["recipe", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    shipped = Path(__file__).resolve().parents[2] / "recipes"
    names = sorted(p.relative_to(shipped).with_suffix("").as_posix() for p in shipped.rglob("*.yaml"))
    assert [line.split()[0] for line in lines] == names
    row = next(line for line in lines if line.startswith("kbert/chnsenticorp_hownet_quick "))
    assert row.split(None, 1)[1] == "small K-BERT + HowNet on ChnSentiCorp from scratch (CPU, minutes)"
    assert all(len(line.split(None, 1)) == 2 for line in lines)  # every recipe says what it is
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "mine.yaml").write_text("base: kbert/chnsenticorp_hownet_quick\n", encoding="utf-8")
    assert main(["recipe", "--list"]) == 0  # one's own recipes too, their description inherited
    mine = [line.split(None, 1) for line in capsys.readouterr().out.splitlines() if line.startswith("mine ")]
    assert mine == [["mine", "small K-BERT + HowNet on ChnSentiCorp from scratch (CPU, minutes)"]]
    assert main(["recipe", "--list", "--keys"]) == 2


def test_predict_input_never_loads_the_compiler_for_a_model_without_transformers(tmp_path: Path) -> None:
    """``graphmatch predict --input`` as the console script runs it: a model that needs no
    transformers module never loads the deferred ``torch._dynamo`` (sympy with it: seconds of
    start-up), nor Lightning (a plain inference loop), and its rows are those of :class:`Predictor`."""
    run = tmp_path / "quick"
    assert main(["train", str(TOY_QUICK), "--set", "train.epochs=1", "model.hidden=8", "--out", str(run)]) == 0
    (tmp_path / "in.tsv").write_text("自然语言\t处理\n好\t坏\n", encoding="utf-8")
    code = ("import runpy, sys\n"
            "from graphmatch.cli.lazy_imports import defer_heavy_imports\n"
            "defer_heavy_imports()  # as the command does, before the toy task (torch, PyG) is imported\n"
            "import toy_task  # registers the toy task: a run folder's task imports no module\n"
            "sys.argv = ['graphmatch', *sys.argv[1:]]\n"
            "try:\n"
            "    runpy.run_module('graphmatch.cli.main', run_name='__main__')\n"
            "finally:\n"
            "    print(type(sys.modules['torch._dynamo']).__name__, 'sympy' in sys.modules,"
            " 'transformers' in sys.modules, 'lightning' in sys.modules, file=sys.stderr)\n")
    repo = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{repo}:{Path(__file__).parent}", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code, "predict", str(run), "--input", str(tmp_path / "in.tsv"),
                           "--no-progress"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.splitlines()[-1] == "_LazyModule False False False"  # no Lightning either (issue 32)
    expected = Predictor.from_run(run).predict([("自然语言", "处理"), ("好", "坏")])
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row.pop("line") for row in rows] == [1, 2] and rows == expected


def test_predict_input_is_read_as_every_data_file(trained_run, tmp_path: Path, capsys) -> None:
    """``predict --input`` reads with the line reader training uses: undecodable bytes and NUL
    bytes are one line naming file:line, and a BOM at the start of a line is no part of the text."""
    run, _ = trained_run
    given = tmp_path / "in.tsv"
    given.write_bytes("自然语言\t处理\n".encode() + b"\xff\xfe\x00\x01binary\n")
    assert main(["predict", str(run), "--input", str(given), "--no-progress"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"graphmatch predict: error: {given}:2: not valid UTF-8 (byte "
                                                    "0xff at byte 1 of the line); save the file as UTF-8"]
    given.write_bytes("自然语言\t处理\n好\x00\t坏\n".encode())
    assert main(["predict", str(run), "--input", str(given), "--no-progress"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"graphmatch predict: error: {given}:2: a NUL byte (at byte 4 ")
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('["自然语言", "处理"]\n["好\\u0000", "坏"]\n', encoding="utf-8")
    assert main(["predict", str(run), "--input", str(jsonl), "--no-progress"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"graphmatch predict: error: {jsonl}:2: a NUL character in the "
                                                    "input; it is not text"]
    given.write_bytes("\ufeff自然语言\t处理\n\ufeff好\t坏\n".encode())  # two files joined
    assert main(["predict", str(run), "--input", str(given), "--no-progress"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [row.pop("line") for row in rows] == [1, 2]
    assert rows == Predictor.from_run(run).predict([("自然语言", "处理"), ("好", "坏")])


def test_predict_input_reads_the_tasks_own_file_and_scores_its_gold(trained_run, tmp_path: Path, capsys) -> None:
    """A data file with its header (``text_a, text_b, label``, any order): the header is not scored,
    each row carries its line and gold label, and the task's metric is printed on stderr (issue 31)."""
    run, _ = trained_run
    given = tmp_path / "test.tsv"
    given.write_text("label\ttext_b\ttext_a\n1\t处理\t自然语言\n\n0\t坏\t好\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["predict", str(run), "--input", str(given), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(row.pop("line"), row.pop("gold")) for row in rows] == [(2, "1"), (4, "0")]
    assert rows == Predictor.from_run(run).predict([("自然语言", "处理"), ("好", "坏")])
    right = sum(row["label"] == gold for row, gold in zip(rows, ["1", "0"], strict=True))
    assert f"2 gold labels: accuracy {100 * right / 2:.2f}  macro_f1 " in err
    given.write_text("text_a\ttext_b\n好\t坏\n", encoding="utf-8")  # a header of the inputs alone
    assert main(["predict", str(run), "--input", str(given), "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert [json.loads(line)["line"] for line in out.splitlines()] == [2] and "gold" not in err


def test_a_run_of_a_task_from_another_package_in_a_fresh_process(trained_run, tmp_path: Path, command) -> None:
    """A run folder's ``task: toy_task:toy`` imports no module (one line, exit 2); the command line
    names it with ``--set task=toy_task:toy``, which imports it. Each command is a process of its own
    that imports graphmatch afresh (forked from a server that has imported only torch, PyG and Lightning)."""
    run, _ = trained_run
    repo = Path(__file__).resolve().parents[2]
    env = {"PYTHONPATH": f"{repo}:{Path(__file__).parent}", "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"}
    cmd = ["evaluate", str(run)]
    refused = command.run(cmd, env, cwd=tmp_path, timeout=600)
    assert refused.returncode == 2 and refused.stderr.startswith(
        "graphmatch evaluate: error: task 'toy_task:toy' is not a registered task"), refused.stderr
    named = command.run([*cmd, "--set", "task=toy_task:toy"], env, cwd=tmp_path, timeout=600)
    assert named.returncode == 0, named.stderr[-2000:]
    assert named.stdout.startswith("test accuracy\t")
