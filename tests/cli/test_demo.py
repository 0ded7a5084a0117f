"""The README's demo command, end to end on the project's sample data (few epochs)."""

import json

import pytest

from graphmatch.cli.main import main

#: epochs of the test run: the demo's sample set is learnt by then (measured on this project's
#: 2-core CPU: 2 epochs 50 % = chance on the 20 test sentences, 4 epochs 70 %, 8 and 12 epochs
#: dev 100 % / test 95 %)
EPOCHS = 8
#: what the demo guarantees after EPOCHS: far above the 50 % of chance (16 of 20 test sentences)
LEARNT = 80.0


@pytest.mark.slow
def test_demo_builds_trains_evaluates_and_draws(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--epochs", str(EPOCHS), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert "类*" in printed and "test accuracy" in printed  # the injected 类别 branch of 酒店
    for name in ("kbert_graph.png", "kbert_graph.html", "vocab.txt", "run/COMPLETE", "run/curve.png"):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "run" / "metrics.json").read_text())
    assert metrics["epochs"] == EPOCHS and metrics["samples"] == {"train": 80, "dev": 20, "test": 20}
    assert metrics["dev"]["accuracy"] >= LEARNT and metrics["test"]["accuracy"] >= LEARNT
    assert (out / "kbert_graph.png").read_bytes()[:4] == b"\x89PNG"


def test_demo_without_samples_is_a_clear_error(tmp_path, capsys):
    assert main(["demo", "--samples", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o")]) == 2
    assert "sample data not found" in capsys.readouterr().err
