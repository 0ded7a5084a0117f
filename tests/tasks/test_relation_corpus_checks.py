"""Relation classification as Chinese corpora need it, through the command line: the corpora's
metrics and ``train.monitor``, ``max_length: auto``, and the checks that catch silent mistakes
(each one line, exit 2, no run folder)."""

import json
import os
import re

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.cli.main import main as cli
from graphmatch.engine import load, resolve

QUICK = ["train.epochs=2", "train.threads=1", "train.progress=false", "model.embedding_dim=16",
         "model.hidden_size=16"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("relation_zh_cache"))


def _train(tmp_path, cache, *sets, recipe="relation/sample_zh_att_blstm", quick=QUICK):
    run = tmp_path / "run"
    code = cli(["train", recipe, "--out", str(run), "--set", f"data.cache_dir={cache}", *quick, *sets])
    return code, run


def test_corpus_metrics_in_metrics_json_summary_and_evaluate(tmp_path, cache, capsys):
    code, run = _train(tmp_path, cache)
    assert code == 0
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    names = {"relation_f1", "accuracy", "micro_precision", "micro_recall", "micro_f1", "pr_auc", "pr_auc_top1"}
    assert metrics["monitor"] == "micro_f1" and set(metrics["test"]) == names
    summary = (run / "summary.md").read_text(encoding="utf-8")
    assert all(name in summary for name in names) and "`micro_f1`" in summary
    rows = [json.loads(line) for line in (run / "predictions_test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and all("probs" not in r and 0 <= r["prob"] <= 1 for r in rows)
    capsys.readouterr()
    assert cli(["evaluate", str(run)]) == 0
    assert "micro_f1" in capsys.readouterr().out


def test_train_monitor_selects_the_checkpoint(tmp_path, cache, capsys):
    code, run = _train(tmp_path, cache, "train.monitor=micro_precision")
    assert code == 0
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["monitor"] == "micro_precision"
    history = json.loads((run / "history.json").read_text(encoding="utf-8"))
    best = max(history, key=lambda h: h["dev"]["micro_precision"])
    assert metrics["best_step"] == best["step"]
    code, bad = _train(tmp_path / "b", cache, "train.monitor=f1")
    assert code == 2 and not bad.exists()
    assert capsys.readouterr().err.strip().endswith(
        "train.monitor=f1 is not a metric of task 'relation'; choose one of relation_f1, accuracy, "
        "micro_precision, micro_recall, micro_f1, pr_auc, pr_auc_top1")
    assert resolve("relation/semeval_att_blstm")["train"]["monitor"] is None  # SemEval: semeval2010


@pytest.mark.parametrize(("sets", "message"), [
    (["data.negative_labels=[无关糸]"],
     "data.negative_labels: 无关糸 not in the label set; the labels are 位于, 出生于, 创办, 无关系, 毕业于"),
    (["model.pretrained=minilm"], "unknown recipe key 'model.pretrained'; valid keys of model: attention_size, "),
    (["model.name=entity_attention", "model.pretrained=minilm"], "unknown recipe key 'model.pretrained'"),
    (["data.max_length=1"], "data.max_length"),
    (["data.on_bad_line=drop"], "data.on_bad_line"),
])
def test_silent_mistakes_are_one_line_errors(tmp_path, cache, capsys, sets, message):
    code, run = _train(tmp_path, cache, *sets)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not run.exists()
    assert err[-1].startswith("graphmatch train: error: ") and message in err[-1]


def test_negative_labels_that_exist_change_the_score(tmp_path, cache):
    code, run = _train(tmp_path, cache, "data.negative_labels=[无关系]")
    assert code == 0 and json.loads((run / "metrics.json").read_text(encoding="utf-8"))["monitor"] == "micro_f1"


def test_an_out_folder_that_cannot_be_written(tmp_path, cache, capsys):
    if os.geteuid() == 0:  # root writes anywhere but in a read-only file system
        out = "/sys/graphmatch-run"
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        out = str(locked / "run")
    code = cli(["train", "relation/sample_zh_att_blstm", "--out", out, "--set", f"data.cache_dir={cache}", *QUICK])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and not os.path.exists(out)
    assert err[0].startswith(f"graphmatch train: error: cannot write the run folder {out}: ") and "--out" in err[0]


def test_chinese_recipes_choose_max_length_from_the_data(tmp_path, cache, capsys):
    for name in ("zh_att_blstm", "zh_entity_attention"):
        config = resolve(f"relation/{name}")
        assert (config["data"]["max_length"], config["data"]["tokenization"]) == ("auto", "chars")
        assert config["data"]["on_bad_line"] == "skip" and config["train"]["monitor"] == "micro_f1"
        assert config["model"]["class_weight"] == "sqrt"
    code, run = _train(tmp_path, cache, "model.position_dim=4", "model.heads=2", "model.attention_size=6",
                       recipe="relation/zh_entity_attention")
    assert code == 0
    assert "data.max_length=auto: 23 tokens, the longest training sentence" in capsys.readouterr().err
    assert "data.max_length=auto: 23 tokens, the longest training sentence" in (run / "summary.md").read_text()
    task, _ = load(run)
    assert task.max_length() == 23
    assert cli(["predict", str(run), "故宫\t北京\t故宫位于北京市中心。"]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[0] in task.label_names()


def test_unknown_pieces_are_logged_and_warned_about(tmp_path, cache, capsys):
    code, _ = _train(tmp_path, cache, "model.name=transformer_entity_attention", "model.pretrained=minilm",
                     "data.tokenization=null", "train.max_steps=1", quick=QUICK[:3])  # no BiLSTM sizes
    err = capsys.readouterr().err
    assert code == 0
    assert "unknown tokens: 36.3 % of the training tokens are not in model.pretrained=minilm's vocabulary" in err
    warning = [line for line in err.splitlines() if line.startswith("graphmatch train: warning: 36.3 %")]
    assert len(warning) == 1 and "most frequent unknown: 于 (19), " in warning[0]


def test_class_weight_balances_the_labels_in_the_loss(cache):
    from graphmatch.tasks.base import get_task

    def task(weight):
        return get_task("relation")(resolve("relation/sample_zh_att_blstm", [
            f"data.cache_dir={cache}", f"model.class_weight={weight}", "data.dev_file=null", "data.dev_size=13"]))

    balanced = task("balanced")
    y = balanced.train_split()._data.y  # 27 of the 40 balanced lines: the labels are not balanced any more
    counts = torch.bincount(y, minlength=5).float()
    assert len(y) == 27 and counts.min() < counts.max()
    assert torch.allclose(balanced.class_weights(), 27 / (5 * counts))
    assert torch.allclose(task("sqrt").class_weights(), (27 / (5 * counts)).sqrt())
    assert task("none").class_weights() is None
    logits = torch.randn(len(y), 5, generator=torch.Generator().manual_seed(0))
    batch = Batch(y=y)
    expected = torch.nn.functional.cross_entropy(logits, y, weight=27 / (5 * counts))
    assert torch.allclose(balanced.loss(logits, batch), expected)
    assert not torch.allclose(task("none").loss(logits, batch), expected)
    with pytest.raises(ValueError, match="model.class_weight"):
        resolve("relation/sample_zh_att_blstm", ["model.class_weight=inverse"])


def test_a_run_reports_both_pr_areas_the_unknown_share_of_each_split_and_nested_lines(tmp_path, cache, capsys):
    """``pr_auc_top1`` beside ``pr_auc``, each said for what it ranks; the unknown share of dev
    and test against the training vocabulary (it was measured on train against train's own
    vocabulary: always 0, and not printed); the sentences whose entities nest."""
    from pathlib import Path

    from graphmatch.metrics import pr_auc_top1

    samples = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "relation_zh"
    lines = {name: (samples / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
             for name in ("train", "dev", "test")}
    lines["train"] += ["母亲\t母亲四十岁时\t无关系\t母亲四十岁时生下了他。"]  # the head inside the tail
    lines["test"] += ["鲲鹏\t鲲鹏之城\t无关系\t鲲鹏之城在北方。"]  # nested, with 4 characters train never saw
    for name, content in lines.items():
        (tmp_path / f"{name}.tsv").write_text("\n".join(content) + "\n", encoding="utf-8")
    files = [f"data.{name}_file={tmp_path / f'{name}.tsv'}" for name in lines]
    code, run = _train(tmp_path, cache, *files, "model.name=entity_attention", "model.position_dim=4",
                       "model.heads=2", "model.attention_size=6", "data.tokenization=chars")
    assert code == 0
    err = capsys.readouterr().err
    shares = re.search(r"unknown tokens per split \(not in the training vocabulary\): train ([\d.]+) %, "
                       r"dev ([\d.]+) %, test ([\d.]+) %", err)
    assert shares and float(shares[1]) == 0 and float(shares[2]) > 0 and float(shares[3]) > 0
    assert ("sentences with nested or overlapping entities (sharing tokens): train 1 of 41, dev 0 of 20, "
            "test 1 of 21") in err
    assert "pr_auc_top1 ranks each sentence's predicted relation" in (run / "summary.md").read_text(encoding="utf-8")
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (run / "predictions_test.jsonl").read_text(encoding="utf-8").splitlines()]
    negative = ["Other", "other", "no_relation", "NA", "N/A", "None", "none", "unknown", "无关系", "其他", "无"]
    assert metrics["test"]["pr_auc_top1"] == pytest.approx(pr_auc_top1(rows, negative))


def test_the_chinese_e5_recipe_has_the_transformers_optimiser() -> None:
    """``relation/zh_e5_entity_start``: e5-small with the entity-start head, AdamW with the encoder's
    own learning rate and a warm-up (not the BiLSTM's Adam), selected on micro-F1, on the
    Chinese four-column corpus of ``zh_att_blstm``."""
    from graphmatch.engine import resolve

    e5, blstm = resolve("relation/zh_e5_entity_start"), resolve("relation/zh_att_blstm")
    assert (e5["model"]["name"], e5["model"]["pretrained"]) == ("transformer_entity_start", "e5-small")
    assert e5["optim"]["optimizer"] == "adamw" and e5["optim"]["encoder_lr"] == 5e-5 and e5["optim"]["warmup"] > 0
    assert e5["model"]["l2"] == 0.0 and e5["train"]["monitor"] == blstm["train"]["monitor"] == "micro_f1"
    assert {k: e5["data"][k] for k in ("train_file", "dev_file", "test_file", "format", "max_length")} == \
        {k: blstm["data"][k] for k in ("train_file", "dev_file", "test_file", "format", "max_length")}
