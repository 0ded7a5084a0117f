"""benchmarks/bench_checkpoint_write.py: both writers write the same checkpoint in turn, the
engine's readable with ``weights_only=True``, and the ratio is reported pair by pair."""

from __future__ import annotations

from benchmark_scripts import load

bench = load("bench_checkpoint_write")


def test_both_writers_write_in_turn_and_each_pair_has_its_ratio(tmp_path, capsys):
    found = bench.main(["--params", "20000", "--rounds", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert found["size"] > 3 * 20000 * 4  # weights and AdamW's two moments, in float32
    assert [len(found["times"][name]) for name in ("lightning", "graphmatch")] == [2, 2]
    assert len(found["ratios"]) == 2 and all(r > 0 for r in found["ratios"])
    assert "lightning / graphmatch, pair by pair: " in out and list(tmp_path.iterdir()) == []  # nothing left
