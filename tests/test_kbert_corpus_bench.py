"""benchmarks/bench_kbert_corpus.py: the corpus builder of two checkouts in processes that take
turns, with the trees of both sides compared by digest."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchmark_scripts import load

bench = load("bench_kbert_corpus")
ROOT = Path(__file__).resolve().parents[1]


def test_this_checkout_against_itself_times_every_set_and_mode_with_the_same_trees(shared_data, capsys):
    bench.main(["--against", str(ROOT), "--data-dir", str(shared_data), "--n", "20", "--rounds", "1", "--runs", "1"])
    out = capsys.readouterr().out.splitlines()
    rows = [line.split(" | ") for line in out if line.startswith(("| LCQMC", "| book"))]
    assert [row[1] for row in rows] == ["default", "reference"] * 2
    assert all(float(row[2]) > 0 and float(row[3]) > 0 and row[6] == "the same |" for row in rows)


def test_a_folder_that_is_no_checkout_is_refused(shared_data, tmp_path):
    with pytest.raises(SystemExit, match="not a graphmatch checkout"):
        bench.main(["--against", str(tmp_path), "--data-dir", str(shared_data)])
