"""``graphmatch probe``: on a tiny K-BERT run trained on the sample data with the sample KG, the figures
add up and agree with the model (cutting the branches is the model on the trunk alone), ``summary.md``
carries them, and bad runs and files are one-line errors."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.cli.main import main
from graphmatch.engine.inference.probe import probe_file, probe_graphs, report

TINY = ["model.hidden_size=32", "model.num_layers=2", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=64", "model.pooling=mean", "train.progress=false",
        "train.threads=1", "train.batch_size=16", "train.max_steps=3", "data.limit.dev=12", "data.limit.test=4",
        "data.limit.train=32"]


@pytest.fixture(scope="module")
def run(samples, shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("probe") / "run"
    kg = shutil.copy(samples / "kg" / "sample.spo", out.parent / "sample.spo")  # moved away by a test below
    assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(out), "--set", *TINY,
                 f"data.dataset={samples / 'sentiment'}", f"data.kg={kg}",
                 f"data.root={shared_data}", f"data.cache_dir={out.parent / 'cache'}"]) == 0
    return out


def test_the_probe_reads_the_run_and_its_figures_add_up(run, samples, capsys):
    from graphmatch.engine import load
    from graphmatch.engine.inference.predictor import Predictor

    dev = samples / "sentiment" / "dev.tsv"
    f = probe_file(run, dev)
    assert f["inputs"] == 20 and 0 < f["with_branch"] <= 100 and f["branch_tokens"] > 0 and f["queries"] > 0
    assert len(f["attention"]) == 2 and all(0 < a < 100 for a in f["attention"]) and 0 < f["uniform"] < 100
    rows = Predictor.from_run(run).predict_file(dev)
    assert f["score"]["accuracy"] == pytest.approx(100 * sum(r["label"] == r["gold"] for r in rows) / 20)
    assert 0 <= f["changed"] <= 100 and set(f["score_cut"]) == set(f["score"]) == {"accuracy"}
    # the cut model is the model on the trunk alone: a tree built without the KG
    task, model = load(run)
    bare = type(task)({**task.config, "data": {**task.config["data"], "kg": None}})
    bare.set_extra_state(task.get_extra_state())
    texts = [line.split("\t")[1] for line in dev.read_text(encoding="utf-8").splitlines()[1:]]
    graphs, _ = task.encode_many([(t, None) for t in texts])
    trunks, _ = bare.encode_many([(t, None) for t in texts])
    with torch.inference_mode():
        p = task.probe_batch(model.eval(), Batch.from_data_list([graphs[i] for i in range(20)]))
        alone = model(Batch.from_data_list([trunks[i] for i in range(20)]))
    assert torch.allclose(p["out_cut"], alone, atol=1e-5)
    assert not torch.allclose(p["out"], p["out_cut"], atol=1e-6)  # the branches did count
    assert main(["probe", str(run), "--input", str(dev), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["inputs"] == 20
    assert main(["probe", str(run), "--input", str(dev)]) == 0
    text = capsys.readouterr().out
    assert "| accuracy |" in text and "| layer 1 | layer 2 | uniform |" in text
    assert main(["probe", str(run), "--input", str(dev), "--seen", str(dev)]) == 2  # a classifier has no entities
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--seen" in err and "classifies" in err, err


def test_train_puts_the_probe_in_the_summary(run):
    summary = (run / "summary.md").read_text(encoding="utf-8")
    assert "## Knowledge probe (the dev split's first 12 inputs" in summary and "| layer 2 |" in summary


def test_bad_runs_and_files_are_one_line_errors(run, samples, tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("label\ttext_a\n1\t好\n0\t \n", encoding="utf-8")
    for args, where in ((["--input", str(bad)], f"{bad}:3"), (["--input", str(samples / "pairs" / "dev.tsv")],
                                                              "pairs/dev.tsv")):
        assert main(["probe", str(run), *args]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and where in err, err
    kg = run.parent / "sample.spo"
    copy = run / "inputs" / "kg" / "sample.spo"  # the run reads its own copy of a user's KG
    assert copy.is_file()
    kg.rename(tmp_path / "away.spo")
    copy.rename(tmp_path / "copy.spo")
    try:
        assert main(["probe", str(run), "--input", str(samples / "sentiment" / "dev.tsv")]) == 2
    finally:
        (tmp_path / "away.spo").rename(kg)
        (tmp_path / "copy.spo").rename(copy)
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(kg) in err and str(copy) in err, err


def _ner_task(shared_data, tmp_path):
    """A tiny NER task over two medical sentences (头痛, 发热: both Symptom), and its dev graphs."""
    from graphmatch.engine import resolve
    from graphmatch.tasks.kbert import KBertTask

    root = tmp_path / "ner"
    root.mkdir()
    lines = "text_a\tlabel\n头 痛 三 天\tB-Symptom I-Symptom O O\n发 热\tB-Symptom I-Symptom\n"
    for split in ("train", "dev", "test"):
        (root / f"{split}.tsv").write_text(lines, encoding="utf-8")
    task = KBertTask(resolve("kbert/medical_ner_medical_quick", [*TINY[:8], f"data.dataset={root}",
                                                                 f"data.root={shared_data}",
                                                                 f"data.cache_dir={tmp_path / 'cache'}"]))
    task.set_extra_state({"labels": ["O", "B-Symptom", "I-Symptom"], "kind": "ner"})
    torch.manual_seed(0)
    graphs = [task.datasets()["dev"][i] for i in range(2)]
    return task, graphs


def test_ner_recall_of_the_entities_the_kg_matches(shared_data, tmp_path):
    task, graphs = _ner_task(shared_data, tmp_path)
    f = probe_graphs(task, task.build_model(), graphs)
    r = f["recall"]
    assert r["with"]["matched_entities"] + r["with"]["other_entities"] == 2
    assert set(f["score"]) == {"ner_f1", "accuracy"} and "Recall of gold entities" in report(f)


def test_a_run_without_branches_is_refused_naming_it():
    from types import SimpleNamespace

    from graphmatch.engine.inference.probe import check_probed

    with pytest.raises(ValueError, match=r"^runs/let: the probe reads a run whose model hangs .* task 'let' has none"):
        check_probed(SimpleNamespace(name="let", branch_kg=lambda: None), "runs/let")


def test_ner_recall_of_entities_unseen_in_training(shared_data, tmp_path):
    from types import SimpleNamespace

    from graphmatch.engine.inference.probe import characters, entity_texts

    train = [SimpleNamespace(fields=("头 痛 三 天",), gold="B-Symptom I-Symptom O O"),
             SimpleNamespace(fields=("咳嗽",), gold="B-Symptom I-Symptom"), SimpleNamespace(fields=("无",), gold=None)]
    assert entity_texts(train) == {"头痛", "咳嗽"}
    assert characters("头 痛", ["O", "O"]) == ["头", "痛"] and characters("头痛", ["O", "O"]) == ["头", "痛"]
    task, graphs = _ner_task(shared_data, tmp_path)
    chars = [list("头痛三天"), list("发热")]
    f = probe_graphs(task, task.build_model(), graphs, chars=chars, seen={"头痛"})
    r = f["recall"]
    assert r["with"]["seen_entities"] == 1 and r["with"]["unseen_entities"] == 1
    assert "unseen in training" in report(f)
    assert "seen_entities" not in probe_graphs(task, task.build_model(), graphs)["recall"]["with"]
