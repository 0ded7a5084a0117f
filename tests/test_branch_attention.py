"""``benchmarks/branch_attention.py``: cutting the branches out of a K-BERT tree's visibility and
pooling is the same model on the trunk alone (a tree built without the KG), the attention it
reports is the model's own, and its figures add up."""

from __future__ import annotations

import pytest
import torch
from benchmark_scripts import load
from torch_geometric.data import Batch

from graphmatch.engine import resolve
from graphmatch.engine.predictor import Predictor

TINY = ["model.hidden_size=32", "model.num_layers=2", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=64", "model.pooling=mean", "train.progress=false"]
TEXTS = ["这家酒店的服务很好", "这台笔记本的键盘确实爽，跟台式机差不多", "服务员态度热情", "房间太小了", "好"]
GOLDS = ["1", "0", "1", "1", "0"]


@pytest.fixture(scope="module")
def tasks(shared_data, tmp_path_factory):
    from graphmatch.tasks.kbert import KBertTask

    cache = tmp_path_factory.mktemp("cache")
    made = []
    for extra in ([], ["data.kg=null"]):
        task = KBertTask(resolve("kbert/chnsenticorp_hownet_quick",
                                 [*TINY, *extra, f"data.root={shared_data}", f"data.cache_dir={cache}"]))
        task.set_extra_state({"labels": ["0", "1"], "kind": "classification"})
        made.append(task)
    return made


def test_cut_branches_are_the_model_on_the_trunk(tasks):
    bench = load("branch_attention")
    with_kg, without_kg = tasks
    torch.manual_seed(0)
    model = with_kg.build_model().eval()
    branched = 0
    with torch.inference_mode():
        for text in TEXTS:
            tree, _ = with_kg.encode_for_prediction(text)
            trunk, _ = without_kg.encode_for_prediction(text)
            d, logits, bare, weights = bench.forward_both(model, Batch.from_data_list([tree]))
            assert torch.allclose(logits, model(Batch.from_data_list([tree])), atol=1e-6)
            assert torch.allclose(bare, model(Batch.from_data_list([trunk])), atol=1e-5), text
            if bool(d["branch"].any()):
                branched += 1
                assert not torch.allclose(logits, bare, atol=1e-4)  # the branches did count
            assert len(weights) == 2 and weights[0].shape[1:] == (2, *d["visible"].shape[1:])
            rows = torch.stack(weights).sum(-1)[:, 0, :, d["token_mask"][0]]  # every real query sums to 1
            assert torch.allclose(rows, torch.ones_like(rows), atol=1e-5)
    assert branched == 2  # HowNet hangs sememes on 笔记本, 差不多 and 服务员


def test_the_figures_add_up(tasks):
    bench = load("branch_attention")
    task = tasks[0]
    torch.manual_seed(1)
    predictor = Predictor(task, task.build_model(), batch_size=2)
    f = bench.branch_effect(predictor, [(t,) for t in TEXTS], GOLDS)
    rows = predictor.predict(TEXTS)
    assert f["accuracy"] == pytest.approx(100 * sum(r["label"] == g for r, g in zip(rows, GOLDS, strict=True)) / 5)
    assert f["inputs"] == 5 and 40 <= f["with_branch"] < 100 and f["queries"] > 0
    assert len(f["attention"]) == 2 and all(0 < a < 100 for a in f["attention"]) and 0 < f["uniform"] < 100
    assert 0 < f["pooled_branch_share"] < 100 and 0 <= f["changed"] <= 100
    text = bench.report({"seed 1": f, "seed 2": {**f, "accuracy": f["accuracy"] - 20}})
    assert "| mean ± std |" in text and "| mean | " in text and text.count("layer ") == 2


def test_a_tagger_is_refused_in_one_line(shared_data, tmp_path):
    from graphmatch.tasks.kbert import KBertTask

    bench = load("branch_attention")
    task = KBertTask(resolve("kbert/medical_ner_medical_quick",
                             [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path}"]))
    task.set_extra_state({"labels": ["O", "B-Symptom", "I-Symptom"], "kind": "ner"})
    with pytest.raises(ValueError, match="not taggers"):
        bench.branch_effect(Predictor(task, task.build_model()), [("头痛",)], ["B-Symptom I-Symptom"])
