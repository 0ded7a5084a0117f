"""Batch prediction encodes many inputs at once (``Task.encode_many``, a chunk at a time beside the
model): K-BERT builds all sentence trees in one vectorised pass, keeps them collated and cuts the
length-sorted batches out of them. Its graphs, rows (labels, probabilities) and ``entities`` equal
those of encoding one input at a time, for classification, pairs and NER; an input the task
refuses is named (``file:line``)."""

from __future__ import annotations

import functools

import pytest
import torch

from graphmatch.data.batching import CollatedGraphs
from graphmatch.engine import resolve
from graphmatch.engine.inference.predictor import Predictor
from graphmatch.errors import InputError
from graphmatch.tasks.base import Task

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=48", "train.progress=false"]
LONG = ("这家酒店的服务很好，房间也很干净，早餐种类丰富，前台的服务员态度热情，"
        "交通方便，离北京的地铁站很近，下次还会再来")
CASES = {
    "classification": ("kbert/chnsenticorp_hownet_quick", ["0", "1"],
                       [("房间号和服务费都写在这里",), ("好",), (LONG,), ("太差了，房间又小又吵",),
                        ("北京 上海",), ("这本书很好看",), ("服务员",)]),
    "pair": ("kbert/lcqmc_hownet_quick", ["0", "1"],
             [("北京在哪", "北京在什么地方"), ("好", "不好"), (LONG, "房间干净吗"), ("服务费多少", LONG),
              ("手机怎么充电", "充电器在哪里买")]),
    "ner": ("kbert/medical_ner_medical_quick", ["O", "B-Symptom", "I-Symptom", "B-BodyPart", "I-BodyPart"],
            [("眼睛发红左腿痛",), ("三 天",), ("头痛发热咳嗽三天，左腿疼痛，眼睛发红" * 3,), ("腿",), ("发热",)]),
}


def _task(tmp_path, shared_data, kind):
    from graphmatch.tasks.kbert import KBertTask

    recipe, labels, _ = CASES[kind]
    task = KBertTask(resolve(recipe, [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}"]))
    task.set_extra_state({"labels": labels, "kind": kind})
    return task


def _plain(data) -> dict:
    """Every store's attributes as plain values (with their dtypes), to compare graphs exactly."""
    out = {}
    for store in data.stores:
        out[store._key] = {name: (str(value.dtype), value.tolist()) if isinstance(value, torch.Tensor) else value
                           for name, value in store.items()}
    return out


def _one_at_a_time(task, monkeypatch) -> None:
    """Make ``task`` encode for prediction as the base class does: one input at a time."""
    monkeypatch.setattr(task, "encode_many", functools.partial(Task.encode_many, task))


@pytest.mark.parametrize("kind", list(CASES))
def test_batched_encoding_predicts_as_one_input_at_a_time(tmp_path, shared_data, monkeypatch, kind):
    task = _task(tmp_path, shared_data, kind)
    inputs = CASES[kind][2]
    torch.manual_seed(0)
    model = task.build_model().eval()

    graphs, extras = task.encode_many([(*item, None)[:2] for item in inputs])
    assert isinstance(graphs, CollatedGraphs) and len(graphs) == len(inputs)
    one = [task.encode_for_prediction(*item) for item in inputs]
    assert extras == [extra for _, extra in one]
    assert any(extra["entities"] for extra in extras)  # knowledge was injected: the comparison sees it
    assert all(isinstance(e, str) for extra in extras for e in extra["entities"])
    for i, (data, _) in enumerate(one):
        assert _plain(graphs[i]) == _plain(data), i
    if kind == "ner":
        assert graphs[1].num_chars.tolist() == [3]  # whitespace included

    predictor = Predictor(task, model, batch_size=2)
    gathered = predictor.batches(graphs)
    collated = predictor.batches([data for data, _ in one])
    assert [c for c, _ in gathered] == [c for c, _ in collated]
    assert sorted(i for c, _ in gathered for i in c) == list(range(len(inputs)))
    assert [c for c, _ in gathered][0] != [0, 1]  # length-sorted: the batches are not in input order
    for (_, a), (_, b) in zip(gathered, collated, strict=True):
        assert _plain(a) == _plain(b)

    batched = predictor.predict(inputs)
    _one_at_a_time(task, monkeypatch)
    assert isinstance(predictor.encode(inputs)[0], list)
    per_input = predictor.predict(inputs)
    assert batched == per_input
    assert [row["entities"] for row in batched] == [extra["entities"] for extra in extras]
    if kind != "ner":
        assert all(set(row["probabilities"]) == {"0", "1"} for row in batched)
    else:
        assert [len(row["label"]) for row in batched] == [len(text) for text, in inputs]


@pytest.mark.parametrize("batched", [True, False])
def test_a_refused_input_is_one_line_naming_it(tmp_path, shared_data, monkeypatch, batched):
    task = _task(tmp_path, shared_data, "pair")
    if not batched:
        _one_at_a_time(task, monkeypatch)
    predictor = Predictor(task, task.build_model())
    path = tmp_path / "in.tsv"
    path.write_text("北京在哪\t北京在什么地方\n\n上海\t   \n好\t不好\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"in\.tsv:3: empty text \(text_b\)$") as err:
        predictor.predict_file(path)
    assert len(str(err.value).splitlines()) == 1 and not isinstance(err.value, InputError)
    with pytest.raises(InputError, match="^input 1: this K-BERT model classifies sentence pairs") as err:
        predictor.predict([("北京", "上海"), ("北京",)])
    assert err.value.index == 1

    single = _task(tmp_path, shared_data, "classification")
    if not batched:
        _one_at_a_time(single, monkeypatch)
    jsonl = tmp_path / "in.jsonl"
    jsonl.write_text('"好"\n{"text": "太差了"}\n" "\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"in\.jsonl:3: empty text \(text_a\)$"):
        Predictor(single, single.build_model()).predict_file(jsonl)
    jsonl.write_text('"好"\n\n{"text": "太差了"}\n', encoding="utf-8")
    rows = Predictor(single, single.build_model()).predict_file(jsonl)
    assert len(rows) == 2 and all(row["label"] in ("0", "1") for row in rows)


def test_chunks_encoded_beside_the_model_predict_as_one_chunk(tmp_path, shared_data):
    """predict() encodes a chunk on a second thread while the model reads the chunk before: the
    rows do not depend on the chunk size (but for float rounding), and a refused input in a later
    chunk keeps its position."""
    task = _task(tmp_path, shared_data, "classification")
    inputs = [item for item, in CASES["classification"][2]] * 3  # 21 inputs
    torch.manual_seed(0)
    predictor = Predictor(task, task.build_model(), batch_size=2)
    assert predictor.chunks(21) == [(0, 4), (4, 21)] and predictor.chunks(0) == []
    whole = predictor.predict(inputs)
    predictor.chunk_size = 3
    assert predictor.chunks(11) == [(0, 4), (4, 7), (7, 10), (10, 11)]
    chunked = predictor.predict(inputs)
    # the same labels and entities; probabilities up to float rounding (other batches, other padding)
    assert [(r["label"], r["entities"]) for r in chunked] == [(r["label"], r["entities"]) for r in whole]
    assert [r["prob"] for r in chunked] == pytest.approx([r["prob"] for r in whole], abs=1e-6)
    with pytest.raises(InputError, match="^input 9: ") as err:
        predictor.predict([*inputs[:9], " ", *inputs[9:]])
    assert err.value.index == 9


#: each kind's own test file in the shared data (header and label column included)
OWN_FILES = {"classification": "kbert/datasets/chnsenticorp/test.tsv", "pair": "lcqmc/test.tsv",
             "ner": "kbert/datasets/medical_ner/test.tsv"}


@pytest.mark.parametrize("kind", list(CASES))
def test_predict_reads_the_datasets_own_test_file(tmp_path, shared_data, kind):
    """``predict --input`` on the first lines of the dataset's own ``test.tsv`` (issue 31): the
    header is not scored, the label column is the rows' ``gold``, and the task's metrics follow."""
    task = _task(tmp_path, shared_data, kind)
    head = (shared_data / OWN_FILES[kind]).read_text(encoding="utf-8").splitlines()[:6]
    path = tmp_path / "test.tsv"
    path.write_text("\n".join(head) + "\n", encoding="utf-8")
    predictor = Predictor(task, task.build_model())
    rows = predictor.predict_file(path)
    assert [row["line"] for row in rows] == [2, 3, 4, 5, 6]
    label = head[0].split("\t").index("label")
    golds = [line.split("\t")[label] for line in head[1:]]
    assert [row["gold"] for row in rows] == ([g.split() for g in golds] if kind == "ner" else golds)
    assert set(predictor.metrics(rows)) == {m if isinstance(m, str) else m[0] for m in task.metrics}
    path.write_text("\n".join(head[1:]) + "\n", encoding="utf-8")  # no header: the file's own column order
    assert [row["gold"] for row in predictor.predict_file(path)] == [row["gold"] for row in rows]
