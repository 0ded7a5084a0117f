"""A run is a function of its recipe, its seed and the data: the same quick recipe trained twice,
each time from an empty cache (graphs rebuilt), gives the same figures to the last bit. This is
what ``python benchmarks/results.py --verify`` relies on at full size (issue 22)."""

import json
from pathlib import Path

import pytest

from graphmatch.engine import train

COMMON = ["train.epochs=1", "train.threads=1", "train.progress=false"]

#: a tiny version of each family's quick recipe; the recipe keys live here only, so a rename of
#: a key (limits, progress) is one edit
TINY = {
    "kbert/chnsenticorp_hownet_quick": [
        "model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=48", "data.limit.train=48", "data.limit.dev=16", "data.limit.test=16",
        "train.batch_size=16", "train.eval_batch_size=16"],
    "let/lcqmc_quick": [
        "data.segmentation=jieba", "data.workers=1",
        "data.limit.train=32", "data.limit.dev=16", "data.limit.test=16",
        "model.encoder_hidden=16", "model.encoder_layers=1", "model.encoder_heads=2", "model.encoder_ffn=32",
        "model.hidden=16", "model.heads=2", "model.perspectives=4", "train.batch_size=8"],
    "relation/semeval_entity_attention_quick": [
        "model.embedding_dim=12", "model.hidden_size=10", "model.position_dim=4", "model.heads=2",
        "model.attention_size=6", "data.limit.train=64", "data.limit.dev=32", "data.limit.test=32",
        "train.batch_size=16"],
}

#: what a run computes (its time and folder are not figures)
FIGURES = ("dev", "test", "samples", "steps", "best_step", "best_epoch", "epochs")


def _figures(run: Path) -> dict:
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    history = json.loads((run / "history.json").read_text(encoding="utf-8"))
    predictions = (run / "predictions_test.jsonl").read_text(encoding="utf-8")
    return {**{k: metrics.get(k) for k in FIGURES}, "history": history, "predictions": predictions}


def _drop_times(history):
    """The per-epoch history without wall-clock entries."""
    if isinstance(history, dict):
        return {k: _drop_times(v) for k, v in history.items() if "time" not in k}
    if isinstance(history, list):
        return [_drop_times(v) for v in history]
    return history


@pytest.mark.parametrize("recipe", sorted(TINY))
def test_quick_recipe_twice_from_an_empty_cache_gives_the_same_figures(tmp_path, shared_data, recipe):
    figures = []
    for attempt in ("first", "second"):
        overrides = [f"data.root={shared_data}", f"data.cache_dir={tmp_path / attempt / 'cache'}", *COMMON,
                     *TINY[recipe]]
        run = train(recipe, overrides, run_dir=tmp_path / attempt / "run")
        assert any((tmp_path / attempt / "cache").iterdir())  # the graphs were built, not read
        figures.append(_figures(run))
    first, second = ({**f, "history": _drop_times(f["history"])} for f in figures)
    assert first["samples"]["test"] > 0 and first["test"]
    assert first == second
