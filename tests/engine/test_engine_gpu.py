"""On a machine with a CUDA GPU: the toy recipe trains there in mixed precision (bf16 when the GPU
supports it), selected by precision=auto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from engine_helpers import TOY_QUICK

from graphmatch.engine import evaluate, train

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU on this machine")


def test_trains_on_the_gpu_in_mixed_precision(tmp_path: Path) -> None:
    run = train(TOY_QUICK, ["train.accelerator=gpu", "train.precision=auto", "train.epochs=3"], tmp_path / "gpu")
    metrics = json.loads((run / "metrics.json").read_text())
    expected = "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
    assert "CUDA" in metrics["device"] and expected in metrics["device"]
    assert metrics["dev"]["accuracy"] >= 60
    # the same checkpoint, device and precision: identical up to a prediction flipped by the order
    # of atomic float additions on the GPU (one sample of the 64 is 1.5625 points)
    again = evaluate(run, "test", ["train.accelerator=gpu"])
    assert again["accuracy"] == pytest.approx(metrics["test"]["accuracy"], abs=100 / metrics["samples"]["test"])
