"""``graphmatch predict --show``: the picture draws the input's own characters and is titled with
the prediction (label and probability)."""

from __future__ import annotations

import re

import pytest

import graphmatch.viz
from graphmatch.cli.main import main

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=48", "train.progress=false", "data.limit.train=32",
        "data.limit.dev=16", "data.limit.test=16", "train.epochs=1", "train.batch_size=16"]


@pytest.fixture(scope="module")
def kbert_run(tmp_path_factory, shared_data):
    run = tmp_path_factory.mktemp("kbert") / "run"
    cache = run.parent / "cache"
    assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(run), "--set", *TINY,
                 f"data.root={shared_data}", f"data.cache_dir={cache}"]) == 0
    return run


def test_png_draws_the_characters_and_the_prediction(kbert_run, tmp_path, capsys, monkeypatch):
    drawn = {}
    real = graphmatch.viz.draw_graph

    def spy(data, path, title=None, **kwargs):
        drawn.update(text=list(data["token"].text), title=title)
        return real(data, path, title=title, **kwargs)

    monkeypatch.setattr(graphmatch.viz, "draw_graph", spy)
    capsys.readouterr()
    assert main(["predict", str(kbert_run), "这本书很好看", "--show", str(tmp_path / "graph.png")]) == 0
    label, prob = capsys.readouterr().out.splitlines()[1].split("\t")
    assert drawn["text"][:7] == ["[CLS]", *"这本书很好看"]
    assert not any(re.fullmatch(r"token:\d+", t) for t in drawn["text"])
    assert drawn["title"] == f"这本书很好看  →  {label} ({float(prob):.2f})"
    assert (tmp_path / "graph.png").read_bytes()[:4] == b"\x89PNG"


def test_html_draws_the_characters_and_the_prediction(kbert_run, tmp_path, capsys):
    page = tmp_path / "graph.html"
    capsys.readouterr()
    assert main(["predict", str(kbert_run), "这本书很好看", "--show", str(page)]) == 0
    label, prob = capsys.readouterr().out.splitlines()[1].split("\t")
    html = page.read_text(encoding="utf-8")
    assert f"这本书很好看  →  {label} ({float(prob):.2f})" in html
    assert ">token:" not in html and ">好<" in html
