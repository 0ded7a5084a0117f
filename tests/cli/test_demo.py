"""The README's demo command, end to end on the project's sample data (few epochs)."""

import json

from graphmatch.cli.main import main


def test_demo_builds_trains_evaluates_and_draws(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--epochs", "2", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "类*" in printed and "test accuracy" in printed  # the injected 类别 branch of 酒店
    for name in ("kbert_graph.png", "kbert_graph.html", "vocab.txt", "run/COMPLETE", "run/curve.png"):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "run" / "metrics.json").read_text())
    assert 0 <= metrics["test"]["accuracy"] <= 100 and metrics["epochs"] == 2
    assert (out / "kbert_graph.png").read_bytes()[:4] == b"\x89PNG"


def test_demo_without_samples_is_a_clear_error(tmp_path, capsys):
    assert main(["demo", "--samples", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
    assert "sample data not found" in capsys.readouterr().err
