"""``benchmarks/gpu_throughput.py`` (what ``benchmarks/gpu_check.sh`` runs on a GPU) on the CPU,
tiny: every model's row and its plain BertModel's, the bf16 rows said skipped, a predict row, the
same tables in the ``--out`` file (nothing is timed here)."""

import os
import subprocess
from pathlib import Path

import pytest
from benchmark_scripts import load

ROOT = Path(__file__).resolve().parents[1]
RELATION = ROOT / "datasets" / "samples" / "relation"


def test_arm_sets_pick_the_families_overrides():
    bench = load("gpu_throughput")
    sets = ["train.batch_size=4", "relation:data.dev_size=8", "let:model.senses=false", "data.root=/a:b"]
    assert bench.arm_sets(sets, "relation/semeval_minilm_entity_start") == [
        "train.batch_size=4", "data.dev_size=8", "data.root=/a:b"]
    assert bench.arm_sets(sets, "kbert/chnsenticorp_hownet_quick") == ["train.batch_size=4", "data.root=/a:b"]


def test_cpu_smoke_run_has_every_row(shared_data, minilm, tmp_path, capsys):
    bench = load("gpu_throughput")
    out = tmp_path / "out" / "gpu_check.md"
    code = bench.main([
        "--device", "cpu", "--steps", "2", "--rounds", "1", "--warmup", "1", "--threads", "1",
        "--data-dir", str(shared_data), "--train-samples", "12", "--set", "train.batch_size=4",
        "--set", f"relation:data.train_file={RELATION / 'train.txt'}", "--set", "relation:data.dev_size=8",
        "--set", f"relation:data.test_file={RELATION / 'test.txt'}",
        "--predict", "kbert", "--predict-steps", "1", "--lines", "12",
        "--work", str(tmp_path / "work"), "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert out.read_text(encoding="utf-8") == printed
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:3]) for line in printed.splitlines()
            if line.startswith("| ") and "---" not in line}
    for name in bench.ARMS:
        for model in (name, f"plain BertModel (size of {name})"):
            fp32 = [r for r in rows if r[:2] == (model, "fp32")]
            assert len(fp32) == 1 and float(fp32[0][2]) > 0, (model, rows)
            assert (model, "bf16", "skipped on cpu") in rows
    assert "bf16 rows are skipped on cpu" in printed
    plain = [line for line in printed.splitlines() if line.startswith("| plain BertModel") and "fp32" in line]
    assert all("| 1.00 |" in line for line in plain)
    predict = [line for line in printed.splitlines() if line.startswith("| kbert/chnsenticorp_hownet_quick")]
    assert len(predict) == 1 and "failed" not in predict[0] and "| 12 |" in predict[0]


def test_no_cuda_is_one_line_and_exit_2(capsys, shared_data):
    bench = load("gpu_throughput")
    if bench.torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    assert bench.main(["--data-dir", str(shared_data), "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "no CUDA device" in err


def test_script_without_the_packages_says_so_in_one_line(tmp_path):
    python = tmp_path / "python"  # an interpreter that imports nothing
    python.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n")
    python.chmod(0o755)
    done = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh")], capture_output=True, text=True,
                          env={**os.environ, "PYTHON": str(python)}, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "cannot import torch, torch_geometric, transformers" in done.stderr
