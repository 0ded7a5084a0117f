"""What a relation run's report says about the run it was: the share of no-relation predictions
against gold and the relations never predicted (``metrics.json`` and ``summary.md``), the model and
data really used (the recipe's description only while it holds), and one warning line when a
BiLSTM recipe is switched to a transformer head without the transformer's optimiser."""

import json
from pathlib import Path

from tiny_bert import tiny_bert_folder

from graphmatch.cli.main import main as cli

QUICK = ["train.epochs=2", "train.threads=1", "train.progress=false"]
SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "relation_zh"


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_negative_share_and_the_model_really_used(tmp_path, capsys):
    run = tmp_path / "run"
    assert cli(["train", "relation/sample_zh_att_blstm", "--out", str(run), "--set", *QUICK,
                f"data.cache_dir={tmp_path / 'cache'}", "model.embedding_dim=16", "model.hidden_size=16"]) == 0
    share = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["negative_share"]
    assert share["labels"] == ["无关系"] and share["relations"] == 4 and set(share["splits"]) == {"dev", "test"}
    summary = (run / "summary.md").read_text(encoding="utf-8")
    for split in ("dev", "test"):
        rows = _rows(run / f"predictions_{split}.jsonl")
        predicted = 100 * sum(r["pred"] == "无关系" for r in rows) / len(rows)
        gold = 100 * sum(r["gold"] == "无关系" for r in rows) / len(rows)
        never = sorted({"位于", "创办", "出生于", "毕业于"} - {r["pred"] for r in rows})
        got = share["splits"][split]
        assert (got["predicted"], got["gold"], sorted(got["never_predicted"])) == (predicted, gold, never)
        assert f"- negative predictions, {split}: {predicted:.1f} % predicted 无关系 against {gold:.1f} % gold; " \
               f"{len(never)} of 4 relations never predicted" in summary
    assert "Att-BLSTM on the Chinese relation sample (characters)" in summary  # sizes changed, not what it names
    assert "Model and data: att_blstm; data: datasets/samples/relation_zh/train.tsv" in summary
    assert "warning" not in capsys.readouterr().err


def test_a_bilstm_recipe_switched_to_a_transformer_warns_and_says_what_it_used(tmp_path, capsys):
    texts = [line.split("\t")[3] for line in (SAMPLE / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    bert = tiny_bert_folder(tmp_path / "bert", texts)
    run = tmp_path / "run"
    capsys.readouterr()
    assert cli(["train", "relation/sample_zh_att_blstm", "--out", str(run), "--set", *QUICK, "train.epochs=1",
                f"data.cache_dir={tmp_path / 'cache'}", "model.name=transformer_entity_start",
                f"model.pretrained={bert}", "data.tokenization=null"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "BiLSTM's optimiser" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: model.name=transformer_entity_start")
    assert "no optim.encoder_lr, no warm-up" in warnings[0] and "optim.encoder_lr=5e-5 optim.warmup=0.1" in warnings[0]
    assert "relation/zh_e5_entity_start" in warnings[0]
    summary = (run / "summary.md").read_text(encoding="utf-8")
    assert "Att-BLSTM" not in summary  # the description no longer describes the run
    assert f"Model and data: transformer_entity_start over {bert}; data: " in summary

    capsys.readouterr()  # with the transformer's optimiser: no warning
    assert cli(["train", "relation/sample_zh_att_blstm", "--out", str(tmp_path / "run2"), "--set", *QUICK,
                "train.max_steps=1", f"data.cache_dir={tmp_path / 'cache'}", "model.name=transformer_entity_start",
                f"model.pretrained={bert}", "data.tokenization=null", "optim.encoder_lr=5e-5",
                "optim.warmup=0.1"]) == 0
    assert "BiLSTM's optimiser" not in capsys.readouterr().err
