"""K-BERT's knowledge keys end to end: model.branch_embedding / model.branch_bias on old run folders,
data.entity_mask in training only, and their one-line errors."""

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.cli.main import main
from graphmatch.engine.runs.restore import load, predict_graph

TINY = ["model.hidden_size=32", "model.num_layers=2", "model.num_heads=2", "model.intermediate_size=32",
        "model.max_position=64", "data.max_length=32", "train.progress=false", "train.threads=1"]
TEXTS = ["酒店的房间很干净，前台服务好。", "客服不回消息，问题一直没解决，失望。", "房间不错"]


@pytest.fixture(autouse=True)
def _data_root(shared_data, monkeypatch):
    """The sample data's vocabulary (K-BERT's google_vocab.txt) is read from the real data's root."""
    monkeypatch.setenv("GRAPHMATCH_DATA", str(shared_data))


def _args(samples, tmp_path, run, extra=()):
    return ["train", "kbert/chnsenticorp_hownet_quick", "--out", str(run), "--set", *TINY,
            f"data.dataset={samples / 'sentiment'}", f"data.kg={samples / 'kg' / 'sample.spo'}",
            f"data.cache_dir={tmp_path / 'cache'}", "data.limit.train=16", "data.limit.dev=8", "data.limit.test=8",
            "train.max_steps=2", "train.batch_size=8", *extra]


def _predictions(run):
    task, model = load(run)
    return torch.stack([torch.tensor(predict_graph(task, model, task.encode(t))["prob"]) for t in TEXTS])


def _rewrite_config(ckpt, **model_keys):
    """The checkpoint as an older release wrote it (no marks keys), or with the marks switched on."""
    state = torch.load(ckpt, weights_only=True)
    config = state["graphmatch"]["config"]
    for name in ("branch_embedding", "branch_bias"):
        config["model"].pop(name, None)
    config["model"].update(model_keys)
    torch.save(state, ckpt)


def test_an_old_run_folder_predicts_the_same_with_and_without_the_marks(tmp_path, samples):
    run = tmp_path / "run"
    assert main(_args(samples, tmp_path, run)) == 0
    before = _predictions(run)
    ckpts = sorted(run.glob("*.ckpt"))
    assert ckpts
    for ckpt in ckpts:
        _rewrite_config(ckpt)  # written before the keys existed
    assert torch.equal(_predictions(run), before)
    for ckpt in ckpts:
        _rewrite_config(ckpt, branch_embedding=True, branch_bias=True)  # its weights lack the marks: zeros
    task, model = load(run)
    assert model.branch_marking is not None and not model.branch_marking.bias.any()
    assert torch.equal(_predictions(run), before)


def test_entity_mask_acts_in_training_steps_only(tmp_path, samples, monkeypatch):
    import graphmatch.tasks.kbert as kbert

    calls = []

    def spy(batch, p, mask_id, **kw):
        calls.append((p, mask_id))
        return real(batch, p, mask_id, **kw)

    real = kbert.mask_matched_words
    monkeypatch.setattr(kbert, "mask_matched_words", spy)
    run = tmp_path / "run"
    assert main(_args(samples, tmp_path, run, ["data.entity_mask=0.5", "model.branch_embedding=true",
                                               "model.branch_bias=true"])) == 0
    task, _ = load(run)
    mask_id = task.builder().tokenizer.mask_id
    assert calls == [(0.5, mask_id)] * 2  # the two training steps; not dev, test or the checks after
    _predictions(run)
    assert len(calls) == 2  # prediction masks nothing


def test_training_batch_masks_matched_words_with_the_vocabulary_mask_token(tmp_path, samples):
    from graphmatch.engine import resolve
    from graphmatch.tasks.kbert import KBertTask

    config = resolve("kbert/chnsenticorp_hownet_quick", [
        *TINY, f"data.dataset={samples / 'sentiment'}", f"data.kg={samples / 'kg' / 'sample.spo'}",
        f"data.cache_dir={tmp_path / 'cache'}", "data.entity_mask=1"])
    task = KBertTask(config)
    batch = Batch.from_data_list([task.encode(t) for t in TEXTS])
    ids = batch["token"].input_ids.clone()
    out = task.training_batch(batch)
    tok = out["token"]
    mask_id = task.builder().tokenizer.mask_id
    assert task.builder().tokenizer.id_to_token(mask_id) == "[MASK]"
    matched = torch.zeros_like(tok.branch)
    matched[out["token", "in", "word"].edge_index[0]] = True
    assert matched.any() and not (matched & tok.branch).any()
    assert torch.equal(tok.input_ids, ids.masked_fill(matched, mask_id))


@pytest.mark.parametrize(("setting", "key"), [
    (["data.kg=null", "model.branch_embedding=true"], "model.branch_embedding"),
    (["data.kg=null", "model.branch_bias=true"], "model.branch_bias"),
    (["data.kg=null", "data.entity_mask=0.15"], "data.entity_mask"),
    (["data.entity_mask=1.5"], "data.entity_mask"),
    (["data.entity_mask=-0.1"], "data.entity_mask"),
])
def test_bad_knowledge_keys_are_one_line_errors(tmp_path, samples, capsys, setting, key):
    assert main(_args(samples, tmp_path, tmp_path / "run", setting)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and key in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("key", ["model.branch_embedding", "model.branch_bias"])
def test_relation_marks_need_a_kg(key):
    from graphmatch.engine import resolve

    resolve("relation/semeval_minilm_wordnet", [f"{key}=true"])  # with data.kg: accepted
    with pytest.raises(ValueError, match=key):
        resolve("relation/semeval_minilm_entity_start", [f"{key}=true"])
