import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.engine import load, resolve, train
from graphmatch.tasks.base import get_task

TINY = ["model.encoder_hidden=16", "model.encoder_layers=1", "model.encoder_heads=2", "model.encoder_ffn=32",
        "model.hidden=16", "model.heads=2", "model.perspectives=4", "train.progress=false"]


def quick_overrides(shared_data: Path, cache: Path) -> list[str]:
    return [f"data.root={shared_data}", f"data.cache_dir={cache}", "data.segmentation=jieba",
            "data.limit.train=48", "data.limit.dev=24", "data.limit.test=24", "train.batch_size=16",
            "train.epochs=1", "train.threads=1", *TINY]


def test_recipes_resolve():
    for name in ("let/lcqmc", "let/bq", "let/lcqmc_quick", "let/lcqmc_quick_nosenses",
                 "let/lcqmc_quick_nosememe_attention"):
        config = resolve(name)
        assert config["task"] == "let"
    published = resolve("let/lcqmc")
    assert published["model"]["hidden"] == 128 and published["model"]["sagt_layers"] == 2
    assert published["model"]["perspectives"] == 20 and published["model"]["dropout"] == 0.2
    assert published["optim"]["optimizer"] == "rmsprop" and published["optim"]["lr"] == 5e-4
    assert published["optim"]["encoder_lr"] == 5e-5 and published["optim"]["warmup"] == 0.1
    assert published["train"]["batch_size"] == 32 and published["train"]["epochs"] == 6
    assert published["data"]["max_length"] == 128 and published["data"]["segmentation"] == "lattice"
    assert resolve("let/lcqmc_quick_nosenses")["model"]["senses"] is False
    assert published["model"]["sememe_attention"] is True and published["model"]["cls"] == "pooled"
    ablation = resolve("let/lcqmc_quick_nosememe_attention")
    assert ablation["model"]["sememe_attention"] is False
    assert ablation["model"] == {**resolve("let/lcqmc_quick")["model"], "sememe_attention": False}
    with pytest.raises(ValueError, match="unknown recipe key"):
        resolve("let/lcqmc_quick", ["model.hiden=3"])


def test_task_options_are_checked(shared_data):
    task_cls = get_task("let")
    with pytest.raises(ValueError, match="data.dataset must be one of"):
        task_cls(resolve("let/lcqmc_quick", ["data.dataset=snli"]))
    with pytest.raises(ValueError, match="^data.segmentation must be lattice, or any of jieba, thulac, pkuseg"):
        task_cls(resolve("let/lcqmc_quick", ["data.segmentation=ltp"]))
    for key, value in (("sememe_scope", "word"), ("cls", "max"), ("update", "lstm"), ("objective", "hinge")):
        with pytest.raises(ValueError, match=f"^model.{key} must be one of .*, got '{value}'$"):
            task_cls(resolve("let/lcqmc_quick", [f"model.{key}={value}"]))
    with pytest.raises(ValueError, match="^model.sememe_attention must be a bool"):
        resolve("let/lcqmc_quick", ["model.sememe_attention=maybe"])
    task = task_cls(resolve("let/lcqmc", [f"data.root={shared_data}"]))
    with pytest.raises(ValueError, match="model.encoder=bert needs model.pretrained"):
        task.build_model()
    bq = task_cls(resolve("let/bq", [f"data.root={shared_data}"]))
    with pytest.raises(ValueError, match="needs data.train"):
        bq.datasets()


def test_bq_csv_files(tmp_path, shared_data):
    rows = "sentence1,sentence2,label\n我要借款,怎么借钱,1\n额度多少,利息多少,0\n"
    for split in ("train", "dev", "test"):
        (tmp_path / f"{split}.csv").write_text(rows, encoding="utf-8")
    task = get_task("let")(resolve("let/bq", [
        f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", "data.segmentation=jieba",
        *(f"data.{s}={tmp_path / f'{s}.csv'}" for s in ("train", "dev", "test")), "train.progress=false"]))
    data = task.datasets()
    assert {k: len(v) for k, v in data.items()} == {"train": 2, "dev": 2, "test": 2}
    assert data["train"][0].y.tolist() == [1]


def test_quick_recipe_trains_end_to_end(tmp_path, shared_data):
    run = train("let/lcqmc_quick", quick_overrides(shared_data, tmp_path / "cache"), run_dir=tmp_path / "run")
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["samples"] == {"train": 48, "dev": 24, "test": 24}
    for split in ("dev", "test"):
        assert set(metrics[split]) == {"accuracy", "f1"}
        assert 0 <= metrics[split]["accuracy"] <= 100
    rows = [json.loads(line) for line in (run / "predictions_test.jsonl").read_text().splitlines()]
    assert len(rows) == 24 and {r["gold"] for r in rows} <= {"0", "1"}
    assert all(0 <= r["prob"] <= 1 and r["pred"] == ("1" if r["prob"] > 0.5 else "0") for r in rows)
    assert rows[0]["line"] == 2  # first pair of test.tsv, after its header

    # the selected model reloads without rebuilding datasets and predicts a new pair
    task, model = load(run)
    data = task.encode("苹果手机怎么样", "这个手机好用吗")
    assert data["word"].text and data["sense"].num_nodes > 0
    with torch.no_grad():
        out = model(Batch.from_data_list([data]))
    (row,) = task.decode(out, Batch.from_data_list([data]))
    assert row["gold"] is None and row["pred"] in ("0", "1")
    with pytest.raises(ValueError, match="pair"):
        task.encode("只有一句")


def test_senses_off_model_and_softmax_objective(shared_data, tmp_path):
    cfg = resolve("let/lcqmc_quick_nosenses", [*quick_overrides(shared_data, tmp_path), "model.objective=softmax"])
    task = get_task("let")(cfg)
    model = task.build_model()
    assert not model.config.senses and not hasattr(model, "sagt")
    data = task.datasets()["dev"]
    batch = Batch.from_data_list([data[i] for i in range(4)])
    out = model(batch)
    assert out.shape == (4, 2)
    assert torch.isfinite(task.loss(out, batch))
    assert len(task.decode(out, batch)) == 4


@pytest.mark.parametrize("objective", ["bce", "softmax"])
def test_class_weight_balances_the_pair_labels(shared_data, tmp_path, objective):
    """model.class_weight: balanced weighs a match and a mismatch by N / (2 n_c) over the training
    pairs, in the sigmoid objective (weighted mean) as in the softmax one."""
    from graphmatch.models.let import match_loss

    def task(weight):
        return get_task("let")(resolve("let/lcqmc_quick", [*quick_overrides(shared_data, tmp_path),
                                                           f"model.objective={objective}",
                                                           f"model.class_weight={weight}"]))

    plain, weighted = task("none"), task("balanced")
    y = weighted.training_labels()
    assert len(y) == 48 and weighted.split("train") is weighted.datasets()["train"]  # built once
    matches = int(y.sum())
    w = weighted.class_weights()
    assert 0 < matches < 48 and torch.allclose(w, torch.tensor([48 / (2 * (48 - matches)), 48 / (2 * matches)]))
    assert plain.class_weights() is None
    batch = Batch.from_data_list([plain.datasets()["train"][i] for i in range(16)])
    out = plain.build_model()(batch)
    if objective == "bce":
        per_pair = torch.nn.functional.binary_cross_entropy_with_logits(out, batch.y.float(), reduction="none")
    else:
        per_pair = torch.nn.functional.cross_entropy(out, batch.y, reduction="none")
    want = (w[batch.y] * per_pair).sum() / w[batch.y].sum()
    assert torch.allclose(weighted.loss(out, batch), want)
    assert torch.allclose(match_loss(out, batch.y), per_pair.mean())


def test_model_switches_reach_the_model(shared_data, tmp_path):
    """Each fidelity switch of a recipe changes the model the task builds."""
    from graphmatch.nn.sememe_attention import SememeAttention

    def build(recipe, *extra):
        return get_task("let")(resolve(recipe, [*quick_overrides(shared_data, tmp_path), *extra])).build_model()

    default = build("let/lcqmc_quick")
    assert isinstance(default.sememe_attention, SememeAttention)
    assert default.config.sememe_scope == "sense" and default.config.cls == "pooled"
    assert not isinstance(default.sagt.layers[0].word_mlp, torch.nn.Identity)
    assert not hasattr(build("let/lcqmc_quick_nosememe_attention"), "sememe_attention")
    other = build("let/lcqmc_quick", "model.sememe_scope=sentence", "model.sagt_mlp=false", "model.cls=first")
    assert other.config.sememe_scope == "sentence" and other.config.cls == "first"
    assert isinstance(other.sagt.layers[0].word_mlp, torch.nn.Identity)


def test_pretrained_weights_are_loaded(tmp_path, shared_data):
    from transformers import BertConfig, BertModel

    bert_dir = tmp_path / "bert"
    cfg = BertConfig(vocab_size=21128, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=140)
    bert = BertModel(cfg)
    bert.save_pretrained(bert_dir)
    shutil.copyfile(shared_data / "kbert" / "vocab" / "google_vocab.txt", bert_dir / "vocab.txt")
    task = get_task("let")(resolve("let/lcqmc", [f"data.root={shared_data}", f"model.pretrained={bert_dir}",
                                                 *TINY[5:]]))
    model = task.build_model()
    task.init_weights(model)
    assert torch.equal(model.encoder.embeddings.word.weight, bert.embeddings.word_embeddings.weight)
    assert {id(p) for p in task.encoder_parameters(model)} == {id(p) for p in model.encoder.parameters()}
    layers = task.encoder_layers(model)  # embeddings, then the checkpoint's one layer (+ pooler)
    assert len(layers) == 2 and {id(p) for g in layers for p in g} == {id(p) for p in model.encoder.parameters()}
    # sememe rows with a pretrained vector are the SAT vectors
    from graphmatch.knowledge import load_sememe_vectors

    vecs = load_sememe_vectors(root=shared_data)
    names = task.sememe_names()
    assert names[: len(vecs.names)] == vecs.names
    assert torch.allclose(model.sememe_emb.weight[:5], torch.from_numpy(vecs.vectors[:5]))


# ------------------------------------------------------------------ pretrained checkpoints, strictly
def _pairs_args(shared_data, samples, tmp_path, bert_path, extra=()):
    pairs = samples / "pairs"
    return ["train", "let/lcqmc_quick", "--set", "data.dataset=tsv", *(f"data.{s}={pairs / f'{s}.tsv'}" for s in
            ("train", "dev", "test")), "model.encoder=bert", f"model.pretrained={bert_path}",
            "data.limit.train=16", "data.limit.dev=8", "data.limit.test=8", "train.max_steps=2", "train.batch_size=8",
            "train.threads=1", *quick_overrides(shared_data, tmp_path / "cache")[:3], *TINY[4:], *extra]


def test_pretrained_folder_through_the_command(tmp_path, shared_data, samples, capsys):
    from checkpoint_folders import bert_folder, edit_weights, vocabulary

    from graphmatch.cli.main import main

    texts = [f.read_text(encoding="utf-8") for f in (samples / "pairs").glob("*.tsv")]
    broken = bert_folder(tmp_path / "broken", vocabulary(texts), max_positions=140)
    edit_weights(broken, drop=["encoder.layer.0.intermediate.dense.bias"])
    assert main([*_pairs_args(shared_data, samples, tmp_path, broken), "--out", str(tmp_path / "run1")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("graphmatch train: error: pretrained checkpoint") and len(err.splitlines()) == 1, err
    assert "missing 1 weight: encoder.layer.0.intermediate.dense.bias" in err and "Traceback" not in err
    assert not (tmp_path / "run1").exists()
    assert main([*_pairs_args(shared_data, samples, tmp_path, tmp_path / "nowhere"), "--out", str(tmp_path / "r")]) == 2
    assert f"model.pretrained: no checkpoint folder {tmp_path / 'nowhere'}" in capsys.readouterr().err

    intact = bert_folder(tmp_path / "intact", vocabulary(texts), max_positions=140)
    run = tmp_path / "run2"
    assert main([*_pairs_args(shared_data, samples, tmp_path, intact), "--out", str(run)]) == 0
    assert f"pretrained: loaded 23 tensors from {intact / 'model.safetensors'}" in capsys.readouterr().err
    assert json.loads((run / "metrics.json").read_text())["samples"] == {"train": 16, "dev": 8, "test": 8}


def test_packaged_minilm_trains(tmp_path, shared_data, samples, minilm, capsys):
    """MiniLM's vocabulary is English (about 244 CJK characters): most Chinese characters become
    [UNK]; this shows the packaged checkpoint loads strictly and trains, not that it suits LCQMC."""
    from graphmatch.cli.main import main

    run = tmp_path / "run"
    assert main([*_pairs_args(shared_data, samples, tmp_path, "minilm", ["train.batch_size=4"]), "--out",
                 str(run)]) == 0
    err = capsys.readouterr().err
    assert f"pretrained: loaded 103 tensors from {minilm / 'model.safetensors'}" in err
    assert f"LET: character encoder loaded from {minilm}" in err
    assert json.loads((run / "metrics.json").read_text())["steps"] == 2
    task, model = load(run)
    assert model.encoder.hidden_size == 384 and task.tokenizer().vocab_size == 30522


def test_relative_files_and_a_training_file_without_labels(tmp_path, shared_data, monkeypatch, capsys):
    """data.train=bq/train.csv is found under the data root (the BQ card's layout); a training
    file without labels is a one-line error, not an AttributeError on the batch."""
    from graphmatch.cli.main import main

    root = tmp_path / "root"
    (root / "bq").mkdir(parents=True)
    rows = "sentence1,sentence2,label\n我要借款,怎么借钱,1\n额度多少,利息多少,0\n"
    for split in ("train", "dev", "test"):
        (root / "bq" / f"{split}.csv").write_text(rows, encoding="utf-8")
    (root / "bq" / "nolabel.csv").write_text("sentence1,sentence2\n我要借款,怎么借钱\n额度多少,利息多少\n",
                                             encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHMATCH_DATA", str(root))
    splits = [f"data.{s}=bq/{s}.csv" for s in ("train", "dev", "test")]
    common = [f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", "data.segmentation=jieba",
              "train.progress=false", "data.workers=1"]
    task = get_task("let")(resolve("let/bq", [*common, *splits]))
    assert task.source("dev") == root / "bq" / "dev.csv"
    assert main(["train", "let/bq", "--out", str(tmp_path / "run"),
                 "--set", *common, *splits, "data.train=bq/nolabel.csv", *TINY]) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith("nolabel.csv: the pairs have no label column; training and dev files need "
                                "text_a<TAB>text_b<TAB>label (0 or 1)") and len(err.splitlines()) == 1


def test_a_pretrained_encoder_the_model_does_not_use_is_refused(tmp_path, capsys) -> None:
    """LET's own character transformer loads no checkpoint: naming one is one line, and no run
    folder claims an encoder it never loaded."""
    from graphmatch.cli.main import main

    with pytest.raises(ValueError, match=r"^model\.pretrained=e5-small: model\.encoder=transformer is LET's own small "
                                         r"character transformer.*lcqmc_quick\.yaml\)$"):
        resolve("let/lcqmc_quick", ["model.pretrained=e5-small"])
    run = tmp_path / "run"
    assert main(["train", "let/lcqmc_quick", "--set", "model.pretrained=minilm", "--out", str(run)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "model.pretrained=minilm: model.encoder=transformer" in err[0] and not run.exists()
    assert resolve("let/lcqmc_quick", ["model.encoder=bert", "model.pretrained=minilm"])["model"]["pretrained"]


def test_a_missing_segmenter_is_refused_in_one_line(shared_data, tmp_path, monkeypatch, capsys):
    """The lattice is what the recipe names: a segmenter that does not import is an error naming
    it, the key and how to install it (issue 31), before any run folder or cache is made."""
    from graphmatch.cli.main import main

    monkeypatch.setitem(sys.modules, "pkuseg", None)  # `import pkuseg` raises ImportError
    code = main(["train", "let/lcqmc_quick", "--out", str(tmp_path / "run"), "--set", f"data.root={shared_data}",
                 f"data.cache_dir={tmp_path / 'cache'}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "data.segmentation: segmenter 'pkuseg' is not installed" in err
    assert "pip install --no-build-isolation pkuseg" in err and "data.missing_segmenter=skip" in err
    assert not (tmp_path / "cache").exists()


def test_a_missing_segmenter_is_skipped_when_the_recipe_says_so(shared_data, monkeypatch):
    monkeypatch.setitem(sys.modules, "pkuseg", None)
    config = resolve("let/lcqmc_quick", [f"data.root={shared_data}", "data.missing_segmenter=skip"])
    with pytest.warns(UserWarning, match="segmenter 'pkuseg' is unavailable and is skipped"):
        task = get_task("let")(config)
    assert task.builder().segmenters == ("jieba", "thulac")
    assert list(task.environment()["segmenters"]) == ["jieba", "thulac"]
    assert all(task.environment()["segmenters"].values())  # their versions
    assert task.builder().options()["segmenters"].keys() == {"jieba", "thulac"}
    assert task.builder()("今天天气很好", "明天下雨")["word"].num_nodes > 0
    with pytest.raises(ValueError, match="^data.missing_segmenter must be one of"):
        resolve("let/lcqmc_quick", ["data.missing_segmenter=maybe"])
