"""``data.select`` in the relation family: the entities' WordNet-style branches selected by the
checkpoint's own embeddings, the report line, the cache key, and one-line errors for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_bert import tiny_bert_folder

from graphmatch.cli.main import main as cli
from graphmatch.data.relation_formats import read_semeval_file
from graphmatch.tasks.base import get_task
from graphmatch.tasks.recipes.resolve import resolve

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "samples" / "relation"
RECIPE = "relation/semeval_minilm_wordnet_selected"
SPO = "\n".join(f"{w}\t{p}\t{o}" for w, p, o in (
    ("fire", "type", "phenomenon"), ("fire", "is a", "event"), ("smoke", "type", "cloud"), ("smoke", "is a", "vapor"),
    ("camera", "type", "artifact"), ("camera", "is a", "equipment"), ("tree", "type", "plant"),
    ("accident", "type", "event"), ("accident", "is a", "mishap"), ("jar", "type", "artifact"))) + "\n"


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    texts = [e.sentence.text for f in ("train.txt", "test.txt") for e in read_semeval_file(SAMPLE / f)]
    return tiny_bert_folder(tmp_path_factory.mktemp("bert") / "tiny", texts)


@pytest.fixture(scope="module")
def spo(tmp_path_factory):
    path = tmp_path_factory.mktemp("kg") / "tiny.spo"
    path.write_text(SPO, encoding="utf-8")
    return path


def _args(bert, spo, cache, *more):
    return [f"model.pretrained={bert}", f"data.kg={spo}", f"data.cache_dir={cache}", "data.select.noun_reading=false",
            f"data.train_file={SAMPLE / 'train.txt'}", f"data.test_file={SAMPLE / 'test.txt'}", "data.dev_size=10",
            "train.progress=false", *more]


def test_recipe_selects_by_the_encoder_with_noun_readings():
    config = resolve(RECIPE, [])
    assert config["data"]["kg"] == "wordnet" and config["model"]["pretrained"] == "minilm"
    assert config["data"]["select"] == {"by": "encoder", "top_k": None, "threshold": 0.69, "noun_reading": True}


def test_selection_drops_branches_below_the_threshold_and_reports_them(bert, spo, tmp_path):
    everything = get_task("relation")(resolve(RECIPE, _args(bert, spo, tmp_path, "data.select.threshold=-1")))
    all_report = everything.datasets()["train"].selection_report
    assert all_report["kept"] == all_report["candidates"] > 0 and all_report["dropped"] == []
    # every candidate dropped at 1: the tiny encoder's cosines, and a threshold in their middle
    none = get_task("relation")(resolve(RECIPE, _args(bert, spo, tmp_path, "data.select.threshold=1"))).train_split()
    scores = sorted(d["score"] for d in none.selection_report["dropped"])
    assert none.selection_report["kept"] == 0 and len(scores) == min(all_report["candidates"], 40)
    middle = round(scores[len(scores) // 2], 6)
    task = get_task("relation")(resolve(RECIPE, _args(bert, spo, tmp_path, f"data.select.threshold={middle}")))
    datasets = task.datasets()
    report = datasets["train"].selection_report
    assert 0 < report["kept"] < report["candidates"] == all_report["candidates"]
    assert report["dropped"] and all(d["score"] < middle for d in report["dropped"])
    lines = task.report(datasets)
    line = next(line for line in lines if line.startswith("knowledge selection (encoder): "))
    assert f"train kept {report['kept']} of {report['candidates']} candidates" in line and "; test kept " in line
    kept = sum(int(g["value"].num_nodes) for g in datasets["train"])
    assert kept == report["kept"] < sum(int(g["value"].num_nodes) for g in everything.datasets()["train"])
    # read back from the cache, with the same report
    assert get_task("relation")(task.config).datasets()["train"].selection_report == report


def test_the_cache_key_changes_with_the_selection(bert, spo, tmp_path):
    def train(*more):
        return get_task("relation")(resolve(RECIPE, _args(bert, spo, tmp_path, *more))).train_split()

    plain = train("data.select.by=none")
    assert "selection" not in plain.cache_key()["builder"]["options"]  # caches made before it stay valid
    assert plain.selection_report is None
    low, high = train("data.select.threshold=-1"), train("data.select.threshold=0.5")
    key = low.cache_key()["builder"]["options"]["selection"]
    assert key["threshold"] == -1 and key["top_k"] is None and key["encoder"]
    assert len({plain.processed_dir, low.processed_dir, high.processed_dir}) == 3
    assert train("data.select.top_k=1").processed_dir not in {low.processed_dir}


@pytest.mark.parametrize(("override", "message"), [
    (["data.kg=null"], "data.select.by: encoder selects the branches of a knowledge graph: give data.kg"),
    (["data.kg=null", "data.select.by=none"], "data.select.noun_reading selects the branches of a knowledge graph"),
    (["data.select.threshold=2"], "data.select.threshold"),
    (["data.select.threshold=-1.5"], "data.select.threshold"),
    (["data.kg=hownet"], "data.select.noun_reading reads words as nouns by WordNet's tag counts: it needs "
                         "data.kg: wordnet, not hownet"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, override, message):
    with pytest.raises(ValueError, match="data.select"):
        resolve(RECIPE, override)
    assert cli(["train", RECIPE, "--out", str(tmp_path / "run"), "--set", *override]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err and message in err, err
    assert not (tmp_path / "run").exists()
