"""A run folder carries what rebuilds its model: trained from a ``save_pretrained`` folder, it
predicts the same after that folder is deleted and the run is moved; batch prediction
(``graphmatch predict --input``, :class:`~graphmatch.engine.inference.predictor.Predictor`) and its bad input."""

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
import torch
from benchmark_scripts import load as load_script
from engine_helpers import Terminal
from tiny_bert import tiny_bert_folder

from graphmatch.cli.main import main as cli
from graphmatch.data.relation_formats import read_semeval_file
from graphmatch.engine import load
from graphmatch.engine.inference.predictor import Predictor, read_inputs

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "samples" / "relation"
LINES = ["The <e1>fire</e1> caused <e2>smoke</e2>.", "The <e1>wheel</e1> of the <e2>car</e2> broke.",
         "8001\t\"The <e1>fire</e1> caused a lot of <e2>smoke</e2> in the city.\"",
         "fire\tsmoke\tThe fire caused smoke."]


def _texts():
    return [e.sentence.text for f in ("train.txt", "test.txt") for e in read_semeval_file(SAMPLE / f)]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A relation transformer trained from a tiny checkpoint folder, and that folder."""
    tmp = tmp_path_factory.mktemp("travel")
    bert = tiny_bert_folder(tmp / "bert", _texts())
    run = tmp / "run"
    assert cli(["train", "relation/semeval_minilm_entity_start", "--out", str(run), "--set",
                f"model.pretrained={bert}", f"data.cache_dir={tmp / 'cache'}",
                f"data.train_file={SAMPLE / 'train.txt'}",
                f"data.test_file={SAMPLE / 'test.txt'}", "data.dev_size=10", "train.epochs=2", "train.batch_size=8",
                "optim.lr=3e-3", "optim.encoder_lr=1e-3", "train.progress=false", "train.threads=1"]) == 0
    return run, bert


def test_a_moved_run_predicts_the_same_without_its_pretrained_folder(trained, tmp_path, capsys):
    run, bert = trained
    stored = run / "pretrained"
    names = {p.name for p in stored.iterdir()}
    assert {"config.json", "vocab.txt", "tokenizer_config.json", "pretrained.json"} <= names
    assert not list(stored.glob("*.safetensors")) and not list(stored.glob("*.bin"))  # never the weights again
    inputs = json.loads((run / "inputs.json").read_text())
    assert inputs["pretrained"]["path"] == str(bert)
    before = Predictor.from_run(run, batch_size=3).predict(LINES)
    assert [r["label"] for r in before] and all(abs(sum(r["probabilities"].values()) - 1) < 1e-5 for r in before)

    copy = tmp_path / "copy"
    shutil.copytree(run, copy / "run")
    shutil.copytree(bert, tmp_path / "bert_backup")
    shutil.rmtree(bert)
    try:
        moved = copy / "run"
        assert Predictor.from_run(moved, batch_size=3).predict(LINES) == before
        task, _ = load(moved)
        assert task.pretrained.stored and task.pretrained.path == moved / "pretrained"
        (tmp_path / "in.tsv").write_text("\n".join(LINES) + "\n", encoding="utf-8")
        terminal = Terminal()  # the progress bar is drawn on a terminal only
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stderr", terminal)
            assert cli(["predict", str(moved), "--input", str(tmp_path / "in.tsv"), "--output",
                        str(tmp_path / "o.jsonl"), "--batch-size", "3"]) == 0
        assert "predict: 100%" in terminal.getvalue()  # the progress bar
        rows = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()]
        assert [row.pop("line") for row in rows] == list(range(1, len(LINES) + 1)) and rows == before
        assert cli(["evaluate", str(moved), "--split", "dev"]) == 0

        # a run folder from before the encoder files were stored: one line, then works with the original back
        shutil.rmtree(moved / "pretrained")
        capsys.readouterr()
        assert cli(["predict", str(moved), LINES[0]]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "lacks the stored encoder files pretrained/pretrained.json" in err
        assert f"the original model.pretrained {str(bert)!r} is needed" in err
    finally:
        shutil.copytree(tmp_path / "bert_backup", bert)
    assert Predictor.from_run(moved, batch_size=3).predict(LINES) == before


def test_bad_input_files_are_one_line_errors(trained, tmp_path, capsys):
    run, _ = trained
    out = tmp_path / "out.jsonl"
    cases = {"cols.tsv": ("a <e1>b</e1> <e2>c</e2>\nv\tw\tx\ty\tz\n", "cols.tsv:2: 5 columns"),
             "corpus.tsv": ("w\tx\tOther\tz\n", "corpus.tsv:1: input: the head entity 'w' is not in the sentence"),
             "empty.tsv": ("\n", "empty.tsv: no input lines"),
             "bad.jsonl": ('"The <e1>fire</e1> caused <e2>smoke</e2>."\n{"x": 1}\n', "bad.jsonl:2: a JSONL input"),
             # refused when its graph is built (after reading): still named by its line
             "markers.tsv": (f"{LINES[0]}\n\nno entity markers here\n{LINES[1]}\n",
                             "markers.tsv:3: input: missing entity marker <e1>")}
    for name, (text, expect) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        capsys.readouterr()
        assert cli(["predict", str(run), "--input", str(tmp_path / name), "--output", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and expect in err, err
        assert not out.exists() and not list(tmp_path.glob(".out.jsonl*"))


def test_stdin_csv_and_int8(trained, tmp_path, capsys, monkeypatch):
    import io

    run, _ = trained
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(LINES[:2]) + "\n"))
    capsys.readouterr()
    assert cli(["predict", str(run), "--input", "-", "--no-progress"]) == 0
    assert torch.is_grad_enabled()  # the command leaves the process's grad mode alone
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    expected = Predictor.from_run(run).predict(LINES[:2])
    assert [r["label"] for r in rows] == [r["label"] for r in expected]
    assert rows[0]["probabilities"] == pytest.approx(expected[0]["probabilities"], abs=1e-6)
    (tmp_path / "in.csv").write_text('fire,smoke,"The fire caused smoke, a lot."\n', encoding="utf-8")
    assert cli(["predict", str(run), "--input", str(tmp_path / "in.csv"), "--quantize", "int8", "--no-progress"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["label"] in row["probabilities"]
    schemes = {}
    for quantize in ("int8", "int8-per-tensor"):
        linears = [m for m in Predictor.from_run(run, quantize=quantize).model.modules()
                   if "quantized" in type(m).__module__ and hasattr(m, "weight")]
        assert linears, quantize
        schemes[quantize] = {m.weight().qscheme() for m in linears}
    assert schemes == {"int8": {torch.per_channel_affine}, "int8-per-tensor": {torch.per_tensor_affine}}
    with pytest.raises(ValueError, match="--quantize must be one of int8, int8-per-tensor, got 'int4'"):
        Predictor.from_run(run, quantize="int4")


def test_keep_fp32_leaves_the_named_linear_layers_unquantized(trained, tmp_path, capsys):
    from graphmatch.engine.inference.quantize import linear_names

    run, _ = trained
    names = linear_names(Predictor.from_run(run).model)
    kept = [n for n in names if "intermediate" in n]
    assert kept and len(kept) < len(names)
    model = Predictor.from_run(run, quantize="int8", keep_fp32=r"intermediate\.dense").model
    modules = dict(model.named_modules())
    assert all(type(modules[n]) is torch.nn.Linear for n in kept)
    assert all("quantized" in type(modules[n]).__module__ for n in names if n not in kept)
    (tmp_path / "in.tsv").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert cli(["predict", str(run), "--input", str(tmp_path / "in.tsv"), "--quantize", "int8",
                "--keep-fp32", "intermediate", "--no-progress"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(LINES)


def test_calibrated_int8_smooths_the_quantized_layers(trained, tmp_path, capsys, monkeypatch):
    """``--calibrate FILE``: the quantized layers whose input is uneven smoothed with ranges from the
    file's first inputs (a SemEval training file, read as ``--input`` reads it); kept layers stay
    plain fp32."""
    from functools import partial

    import graphmatch.engine.inference.predictor as predictor_module
    from graphmatch.engine.inference.quantize import MIN_SPREAD, SmoothedLinear, input_ranges, quantize_linear, spread

    run, _ = trained
    train = SAMPLE / "train.txt"
    plain = Predictor.from_run(run)
    graphs, _ = plain.encode(read_inputs(train, plain.task)[:256])
    ranges = input_ranges(plain.model, (batch for _, batch in plain.batches(graphs)))

    def smoothed(**kwargs) -> set[str]:
        model = Predictor.from_run(run, quantize="int8", calibrate=train, keep_fp32=r"intermediate\.dense",
                                   **kwargs).model
        modules = dict(model.named_modules())
        assert all("quantized" in type(modules[f"{n}.linear"]).__module__
                   for n, m in modules.items() if isinstance(m, SmoothedLinear))
        return {n for n, m in modules.items() if isinstance(m, SmoothedLinear)}

    uneven = {n for n, r in ranges.items() if spread(r) >= MIN_SPREAD and "intermediate" not in n}
    assert smoothed() == uneven
    monkeypatch.setattr(predictor_module, "quantize_linear", partial(quantize_linear, min_spread=0.0))
    every = smoothed(alpha=0.5)
    assert every == {n for n in ranges if "intermediate" not in n} and every  # kept layers: neither
    (tmp_path / "in.tsv").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert cli(["predict", str(run), "--input", str(tmp_path / "in.tsv"), "--quantize", "int8", "--calibrate",
                str(train), "--smooth-alpha", "0.5", "--no-progress"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(rows) == len(LINES) and all(r["label"] in r["probabilities"] for r in rows)
    monkeypatch.chdir(tmp_path)  # a relative --calibrate not in the working folder: under $GRAPHMATCH_DATA
    monkeypatch.setenv("GRAPHMATCH_DATA", str(SAMPLE.parent))
    assert cli(["predict", str(run), "--input", "in.tsv", "--quantize", "int8", "--calibrate",
                f"{SAMPLE.name}/train.txt", "--no-progress"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == len(LINES)
    (tmp_path / "cal.tsv").write_text("fire\tsmoke\tThe fire caused smoke.\nfire\tsmoke\tThe cat sat.\n")
    assert cli(["predict", str(run), "--input", str(tmp_path / "in.tsv"), "--quantize", "int8", "--calibrate",
                str(tmp_path / "cal.tsv"), "--no-progress"]) == 2  # a calibration input the task refuses
    err = capsys.readouterr().err.strip()
    assert "cal.tsv:2: " in err and "'fire' is not in the sentence" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize(("extra", "message"), [
    (["--calibrate", str(SAMPLE / "train.txt")], "--calibrate smooths the layers of --quantize"),
    (["--quantize", "int8", "--calibrate", "no_such_file.tsv"],
     "--calibrate file no_such_file.tsv not found: looked at"),
    (["--quantize", "int8", "--calibrate", str(SAMPLE / "train.txt"), "--smooth-alpha", "2"],
     "--smooth-alpha must be in [0, 1], got 2"),
    (["--quantize", "int8", "--smooth-alpha", "0.5"], "--smooth-alpha sets the smoothing of --calibrate"),
    (["--keep-fp32", "dense"], "--keep-fp32 keeps layers out of --quantize: give --quantize int8 with it"),
    (["--quantize", "int8", "--keep-fp32", "dense("], "--keep-fp32 'dense(' is not a regular expression: "),
    (["--quantize", "int8", "--keep-fp32", "no_such_layer"], "--keep-fp32 'no_such_layer' matches no linear layer"),
    (["--quantize", "int8", "--keep-fp32", "."], "--keep-fp32 '.' matches every linear layer"),
])
def test_bad_int8_options_are_one_line(trained, tmp_path, capsys, extra, message):
    run, _ = trained
    (tmp_path / "in.tsv").write_text(LINES[0] + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    capsys.readouterr()
    assert cli(["predict", str(run), "--input", str(tmp_path / "in.tsv"), "--output", str(out), "--no-progress",
                *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_the_sensitivity_benchmark_ranks_every_group(trained, tmp_path, capsys):
    """``benchmarks/int8_sensitivity.py`` on the tiny run: a row per kind of linear layer and per
    encoder layer, and the cumulative frontier; smoothed arms and the plot (not timed: the script's
    figures are not checked)."""
    from graphmatch.engine.inference.quantize import linear_names

    run, _ = trained
    module = load_script("int8_sensitivity")
    names = linear_names(Predictor.from_run(run).model)
    groups = module.groups(names)
    assert all(any(re.search(p, n) for n in names) for p in groups.values())
    capsys.readouterr()
    module.main([str(run), "--metric", "semeval2010", "--rounds", "1", "--batch-size", "4", "--limit", "6"])
    out = capsys.readouterr().out
    assert out.startswith("6 dev inputs") and "| fp32 |" in out and "| int8 |" in out
    assert all(f"| int8, {label} fp32 |" in out for label in groups)
    assert "cumulatively" in out
    plot = tmp_path / "frontier.png"
    module.main([str(run), "--metric", "semeval2010", "--rounds", "1", "--batch-size", "4", "--limit", "6",
                 "--no-groups", "--alphas", "0.5", "0.8", "--calibrate", "8", "--min-spread", "8", "0",
                 "--plot", str(plot)])
    out = capsys.readouterr().out
    assert "smoothing calibrated on 8 training inputs" in out and "cumulatively" not in out
    assert all(f"| int8 smoothed, alpha {a}, spread ≥ {s} |" in out for a in ("0.5", "0.8") for s in ("8", "0"))
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_in_a_fresh_process(trained, tmp_path):
    """``graphmatch predict --input`` as the console script runs it (its deferred imports, no Lightning)."""
    import os
    import subprocess
    import sys

    run, _ = trained
    (tmp_path / "in.tsv").write_text("\n".join(LINES) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "graphmatch.cli.main", "predict", str(run), "--input",
                           str(tmp_path / "in.tsv"), "--batch-size", "3", "--no-progress"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = Predictor.from_run(run, batch_size=3).predict(LINES)
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row.pop("line") for row in rows] == list(range(1, len(LINES) + 1)) and rows == expected
