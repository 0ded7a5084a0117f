import json
import random
import re
import subprocess
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.cli.main import main as cli
from graphmatch.data.relation_formats import SEMEVAL_LABELS as LABELS
from graphmatch.data.semeval import read_semeval_file
from graphmatch.engine import load, resolve
from graphmatch.metrics import semeval2010
from graphmatch.tasks.base import get_task
from graphmatch.viz.attention import draw_token_attention

SCORER = "semeval2010_task8/scorer/semeval2010_task8_scorer-v1.2.pl"
TINY = {
    "att_blstm": ["model.embedding_dim=12", "model.hidden_size=12"],
    "entity_attention": ["model.embedding_dim=12", "model.hidden_size=10", "model.position_dim=4",
                         "model.heads=2", "model.attention_size=6"],
}
SENTENCE = "The <e1>company</e1> fabricates plastic <e2>chairs</e2>."


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("relation_cache")


def _task(shared_data, cache, name="att_blstm", extra=()):
    recipe = f"relation/semeval_{name}_quick"
    config = resolve(recipe, [f"data.root={shared_data}", f"data.cache_dir={cache}", *TINY[name], *extra])
    return get_task("relation")(config)


def perl_score(shared_data: Path, proposed: Path, key: Path) -> float:
    out = subprocess.run(["perl", str(shared_data / SCORER), str(proposed), str(key)],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"directionality taken into account: macro-averaged F1 = ([0-9.]+)%", out)
    assert m, out[-500:]
    return float(m.group(1))


def test_recipes_carry_the_papers_hyperparameters():
    att = resolve("relation/semeval_att_blstm")
    assert att["model"]["name"] == "att_blstm"
    assert (att["model"]["embedding_dim"], att["model"]["hidden_size"]) == (100, 100)
    assert (att["model"]["emb_dropout"], att["model"]["rnn_dropout"], att["model"]["dropout"]) == (0.3, 0.3, 0.5)
    assert (att["optim"]["optimizer"], att["optim"]["lr"], att["train"]["batch_size"]) == ("adadelta", 1.0, 10)
    ent = resolve("relation/semeval_entity_attention")
    m = ent["model"]
    assert (m["embedding_dim"], m["position_dim"], m["heads"], m["hidden_size"]) == (300, 50, 4, 300)
    assert (m["latent_types"], m["attention_size"], ent["data"]["max_length"]) == (3, 50, 90)
    assert ent["train"]["batch_size"] == 20 and ent["optim"]["optimizer"] == "adadelta"
    for name in ("semeval_att_blstm_quick", "semeval_entity_attention_quick"):
        assert resolve(f"relation/{name}")["train"]["epochs"] >= 1
    for head in ("entity_start", "entity_attention"):
        t = resolve(f"relation/semeval_minilm_{head}")
        assert t["model"]["name"] == f"transformer_{head}" and t["model"]["pretrained"] == "minilm"
        assert (t["optim"]["optimizer"], t["optim"]["encoder_lr"], t["optim"]["warmup"]) == ("adamw", 5e-5, 0.1)
        assert t["data"]["dev_size"] == 800 and t["data"]["train_file"] is None and t["model"]["l2"] == 0
    for name in ("att_blstm", "entity_attention"):
        zh = resolve(f"relation/sample_zh_{name}")
        assert (zh["model"]["name"], zh["data"]["tokenization"], zh["data"]["format"]) == (name, "chars", "tsv")
    with pytest.raises(ValueError, match="model.name must be one of"):
        get_task("relation")(resolve("relation/semeval_att_blstm", ["model.name=cnn"]))
    with pytest.raises(ValueError, match="needs model.pretrained"):
        get_task("relation")(resolve("relation/semeval_att_blstm", ["model.name=transformer_entity_start"]))
    with pytest.raises(ValueError, match="data.tokenization must be one of pieces"):
        get_task("relation")(resolve("relation/semeval_minilm_entity_start", ["data.tokenization=chars"]))
    # the paper-named recipes (and their quick variants) take the official code's behaviour
    for name in ("semeval_att_blstm", "semeval_entity_attention", "semeval_att_blstm_quick",
                 "semeval_entity_attention_quick"):
        m = resolve(f"relation/{name}")["model"]
        assert (m["init"], m["rnn_dropout_on"], m["l2"], m["l2_embeddings"]) == ("official", "input", 1e-5, True)
    assert (m["self_attention_relu"], m["entity_state"]) == (True, "last")
    assert resolve("relation/semeval_entity_attention")["data"]["position_anchor"] == "last"
    with pytest.raises(ValueError, match="unknown recipe key"):
        resolve("relation/semeval_att_blstm", ["model.hidden=3"])


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("model.init", "keras", "model.init must be one of pytorch, official, got 'keras'"),
        ("model.rnn_dropout_on", "both", "model.rnn_dropout_on must be one of output, input, got 'both'"),
        ("model.entity_state", "first", "model.entity_state must be one of mean, last, got 'first'"),
        ("data.position_anchor", "start", "data.position_anchor must be one of span, last, got 'start'"),
    ],
)
def test_new_switches_are_checked_with_one_line_errors(key, value, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        get_task("relation")(resolve("relation/semeval_entity_attention", [f"{key}={value}"]))
    with pytest.raises(ValueError, match="model.self_attention_relu must be a bool"):
        resolve("relation/semeval_entity_attention", ["model.self_attention_relu=3"])


def test_official_file_scored_by_perl_equals_engine_metric(shared_data, tmp_path, perl):
    task = _task(shared_data, tmp_path)  # no data needed to write predictions
    gold = read_semeval_file(shared_data / "semeval2010_task8" / "TEST_FILE_FULL.TXT")
    rng = random.Random(0)
    rows = [
        {"id": e.sid, "pred": e.label if rng.random() < 0.6 else rng.choice(LABELS), "gold": e.label, "prob": 0.5}
        for e in gold
    ]
    path = tmp_path / "predictions_test.jsonl"
    task.write_predictions(str(path), rows)
    assert len(path.read_text().splitlines()) == 2717
    proposed = tmp_path / "predictions_test.semeval.txt"
    lines = proposed.read_bytes().split(b"\n")
    assert lines[0].startswith(b"8001\t") and lines[-2].startswith(b"10717\t") and lines[-1] == b""
    key = tmp_path / "key.txt"
    key.write_text("".join(f"{e.sid}\t{e.label}\n" for e in gold))
    assert (tmp_path / "predictions_test.semeval_key.txt").read_text() == key.read_text()
    engine = semeval2010(rows)
    assert 40 < engine < 80
    assert perl_score(shared_data, proposed, key) == pytest.approx(round(engine, 2), abs=1e-9)


@pytest.mark.parametrize("with_embeddings", [False, True])
def test_decode_and_loss_with_l2(shared_data, cache, with_embeddings):
    task = _task(shared_data, cache, extra=["model.l2=0.01", f"model.l2_embeddings={str(with_embeddings).lower()}"])
    data = task.datasets()
    model = task.build_model().eval()
    batch = Batch.from_data_list([data["test"][i] for i in range(4)])
    out = model(batch)
    rows = task.decode(out, batch)
    assert [r["id"] for r in rows] == [8001, 8002, 8003, 8004]
    assert rows[0]["gold"] == "Message-Topic(e1,e2)" and rows[0]["pred"] in LABELS
    assert all(0 < r["prob"] <= 1 for r in rows)
    ce = torch.nn.functional.cross_entropy(out, batch.y)
    l2 = sum(p.pow(2).sum() for n, p in model.named_parameters() if with_embeddings or not n.startswith("embedding."))
    assert torch.allclose(task.loss(out, batch), ce)  # the engine adds the L2 term, task.penalty(model)
    assert torch.allclose(task.loss(out, batch) + task.penalty(model), ce + 0.5 * 0.01 * l2)
    unlabelled = task.encode(SENTENCE)
    assert task.decode(model(Batch.from_data_list([unlabelled])), Batch.from_data_list([unlabelled]))[0]["gold"] is None


def test_encode_state_and_pretrained_vectors(shared_data, cache, tmp_path):
    task = _task(shared_data, cache)
    task.datasets()
    data = task.encode('8001\t"The <e1>company</e1> fabricates plastic <e2>chairs</e2>."')
    assert data.sid.tolist() == [8001] and data["token"].text[1:4] == ["<e1>", "company", "</e1>"]
    with pytest.raises(ValueError, match="missing entity marker <e2>"):
        task.encode("The <e1>company</e1> fabricates chairs.")
    with pytest.raises(ValueError, match="one marked sentence"):
        task.encode(SENTENCE, "second")
    fresh = get_task("relation")(task.config)
    fresh.set_extra_state(task.get_extra_state())
    assert fresh.vocab == task.vocab and fresh.build_model().embedding.num_embeddings == len(task.vocab)
    vectors = tmp_path / "glove.txt"
    vectors.write_text("company " + " ".join(["0.5"] * 12) + "\nzebra-unknown " + " ".join(["1"] * 12) + "\n")
    task = _task(shared_data, cache, extra=[f"model.word_vectors={vectors}"])
    task.datasets()
    model = task.build_model()
    before = model.embedding.weight.detach().clone()
    task.init_weights(model)
    after = model.embedding.weight.detach()
    changed = (before != after).any(-1).nonzero().flatten().tolist()
    assert changed == [task.vocab["company"]] and torch.all(after[task.vocab["company"]] == 0.5)


@pytest.mark.parametrize("name", ["att_blstm", "entity_attention"])
def test_explain_picture(shared_data, cache, tmp_path, name):
    task = _task(shared_data, cache, name)
    task.datasets()
    model = task.build_model()
    path = tmp_path / "explain.png"
    explanation = task.explain(model, task.encode(SENTENCE))
    assert len(explanation["weights"]) == len(explanation["tokens"])
    assert sum(explanation["weights"]) == pytest.approx(1.0, abs=1e-5)
    assert (explanation["type_weights"] is None) == (name == "att_blstm")
    draw_token_attention(**explanation, path=path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000
    two = Batch.from_data_list([task.encode(SENTENCE), task.encode(SENTENCE)])
    with pytest.raises(ValueError, match="one sentence"):
        task.explain(model, two)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["att_blstm", "entity_attention"])
def test_quick_recipe_end_to_end_through_the_cli(shared_data, cache, tmp_path, name, capsys, perl):
    run = tmp_path / "run"
    args = ["train", f"relation/semeval_{name}_quick", "--out", str(run), "--set",
            f"data.root={shared_data}", f"data.cache_dir={cache}", *TINY[name], "train.epochs=2",
            "data.limit.train=600", "data.limit.dev=150", "data.limit.test=150", "train.progress=false",
            "train.threads=1",
            "train.batch_size=20", "optim.optimizer=adam", "optim.lr=0.02"]
    assert cli(args) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["monitor"] == "semeval2010" and metrics["samples"]["test"] == 150
    assert set(metrics["test"]) == {"semeval2010", "accuracy", "micro_precision", "micro_recall", "micro_f1", "pr_auc",
                                    "pr_auc_top1"}
    proposed, key = run / "predictions_test.semeval.txt", run / "predictions_test.semeval_key.txt"
    gold = {e.sid: e.label for e in read_semeval_file(shared_data / "semeval2010_task8" / "TEST_FILE_FULL.TXT")}
    key_rows = [line.split("\t") for line in key.read_text().splitlines()]
    assert [int(i) for i, _ in key_rows] == list(range(8001, 8151))
    assert all(gold[int(i)] == label for i, label in key_rows)
    assert perl_score(shared_data, proposed, key) == pytest.approx(round(metrics["test"]["semeval2010"], 2))

    assert cli(["predict", str(run), SENTENCE, "--explain", str(tmp_path / "explain.png")]) == 0
    label = capsys.readouterr().out.splitlines()[-1].split("\t")[0]  # under the header
    assert label in LABELS and (tmp_path / "explain.png").is_file()
    task, model = load(run)
    assert task.vocab is not None and not model.training
