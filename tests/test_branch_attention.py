"""``benchmarks/branch_attention.py``, a thin caller of ``graphmatch probe``: several runs side by side
with mean ± std, and a bad run in one line (the probe itself: tests/engine/test_probe.py)."""

from __future__ import annotations

import json

from benchmark_scripts import load

from graphmatch.cli.main import main as graphmatch

TINY = ["model.hidden_size=32", "model.num_layers=2", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=64", "train.progress=false", "train.threads=1",
        "train.batch_size=16", "train.max_steps=2", "data.limit.train=16", "data.limit.dev=4", "data.limit.test=4"]


def test_runs_side_by_side(samples, shared_data, tmp_path, capsys):
    bench = load("branch_attention")
    run = tmp_path / "run"
    assert graphmatch(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(run), "--set", *TINY,
                       f"data.dataset={samples / 'sentiment'}", f"data.kg={samples / 'kg' / 'sample.spo'}",
                       f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]) == 0
    import shutil

    shutil.copytree(run, tmp_path / "run2")  # a second seed
    capsys.readouterr()
    dev = samples / "sentiment" / "dev.tsv"
    out = str(tmp_path / "f.json")
    assert bench.main([str(run), str(tmp_path / "run2"), "--input", str(dev), "--limit", "8", "--json", out]) == 0
    text = capsys.readouterr().out
    assert "| mean ± std |" in text and "| mean | " in text and text.count("layer ") == 2
    figures = json.loads((tmp_path / "f.json").read_text())
    assert figures[str(run)]["inputs"] == 8
    assert bench.main([str(tmp_path / "nowhere"), "--input", str(dev)]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
