"""The imbalanced relation corpus (``benchmarks/imbalanced_relation.py``) and the probe that
records what a run does while it trains (``benchmarks/collapse_probe.py``)."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from graphmatch.data.relation_formats import read_tsv_file

ROOT = Path(__file__).resolve().parents[1]


def _script(name, *args, cwd=ROOT):
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{name}.py"), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_semeval_resampled_so_that_other_is_the_share_asked_for(shared_data, tmp_path):
    out = _script("imbalanced_relation", "--data-dir", shared_data, "--out", tmp_path, "--negative-share", 0.8).stdout
    train, test = read_tsv_file(tmp_path / "train.tsv"), read_tsv_file(tmp_path / "test.tsv")
    labels = Counter(ex.label for ex in train)
    assert 0.79 < labels["Other"] / len(train) < 0.81 and "Other 79." in out
    assert {ex.label for ex in test} <= set(labels) and len(test) > 2000


def test_probe_prints_one_line_per_dev_evaluation(tmp_path):
    sets = ["train.epochs=2", "train.threads=1", "train.progress=false", "model.embedding_dim=8",
            "model.hidden_size=8", "model.position_dim=4", "model.heads=2", "model.attention_size=4",
            f"data.cache_dir={tmp_path / 'cache'}"]
    out = _script("collapse_probe", "relation/sample_zh_entity_attention", "--out", tmp_path / "run",
                  "--set", *sets).stdout
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [line["epoch"] for line in lines] == [1, 2]
    first = lines[0]
    assert abs(sum(first["pred_share"].values()) - 100) < 1 or len(first["pred_share"]) == 4
    assert 0 <= first["type_entropy"] <= first["max_type_entropy"] and first["grad_norm"] > 0 and first["rel_step"] > 0
