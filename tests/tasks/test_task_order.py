"""Tasks have no hidden call order: label names, metrics, the L2 term and the tag prior come out
the same whichever method is called first (and label names build the training split only)."""

from __future__ import annotations

import pytest
import torch
from torch_geometric.data import Batch

from graphmatch.engine import resolve
from graphmatch.tasks.base import get_task

KBERT_TINY = ["model.hidden_size=16", "model.num_layers=1", "model.num_heads=2", "model.intermediate_size=16",
              "model.max_position=64", "data.max_length=32", "train.progress=false"]
LET_TINY = ["model.encoder_hidden=16", "model.encoder_layers=1", "model.encoder_heads=2", "model.encoder_ffn=32",
            "model.hidden=16", "model.heads=2", "model.perspectives=4", "train.progress=false"]
RELATION_TINY = ["model.embedding_dim=8", "model.hidden_size=8", "model.position_dim=4", "model.heads=2",
                 "model.attention_size=4", "train.progress=false"]


def _configs(request, tmp_path, shared_data, samples):
    kind = request.param
    if kind in ("kbert", "kbert_ner"):
        dataset = samples / "sentiment"
        if kind == "kbert_ner":
            dataset = tmp_path / "ner"
            dataset.mkdir()
            lines = ("text_a\tlabel\n眼 睛 发 红\tB-Symptom I-Symptom I-Symptom I-Symptom\n"
                     "左 腿 痛\tB-BodyPart I-BodyPart B-Symptom\n三 天\tO O\n")
            for split in ("train", "dev", "test"):
                (dataset / f"{split}.tsv").write_text(lines, encoding="utf-8")
        return "kbert", resolve("kbert/chnsenticorp_hownet_quick", [
            *KBERT_TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}",
            f"data.dataset={dataset}", f"data.kg={samples / 'kg' / 'sample.spo'}"])
    if kind == "let":
        pairs = samples / "pairs"
        return "let", resolve("let/lcqmc_quick", [
            *LET_TINY, f"data.root={shared_data}", f"data.cache_dir={tmp_path / 'cache'}", "data.dataset=tsv",
            "data.segmentation=jieba", "data.limit.train=16", "data.limit.dev=8", "data.limit.test=8",
            *(f"data.{s}={pairs / f'{s}.tsv'}" for s in ("train", "dev", "test"))])
    return "relation", resolve(f"relation/sample_zh_{kind.removeprefix('relation_')}", [
        *RELATION_TINY, f"data.cache_dir={tmp_path / 'cache'}", f"data.train_file={samples / 'relation_zh/train.tsv'}",
        f"data.dev_file={samples / 'relation_zh/dev.tsv'}", f"data.test_file={samples / 'relation_zh/test.tsv'}"])


@pytest.fixture(params=["kbert", "kbert_ner", "let", "relation_att_blstm", "relation_entity_attention"])
def configs(request, tmp_path, shared_data, samples):
    return _configs(request, tmp_path, shared_data, samples)


def _batch(data, n=4):
    return Batch.from_data_list([data["dev"][i] for i in range(min(n, len(data["dev"])))])


def test_methods_in_any_order_give_the_same_results(configs, tmp_path):
    name, config = configs
    cls = get_task(name)

    # the usual order: data, labels, model, loss
    first = cls(config)
    data = first.datasets()
    labels, metrics, monitor = first.label_names(), first.metrics, first.monitor
    torch.manual_seed(0)
    model = first.build_model().eval()
    batch = _batch(data)
    out = model(batch)
    loss, penalty = first.loss(out, batch), first.penalty(model)

    # another task of the same configuration, backwards: loss and metrics before anything else
    second = cls(config)
    assert torch.equal(second.loss(out, batch), loss)
    assert second.metrics == metrics and second.monitor == monitor
    if penalty is not None:
        assert torch.equal(second.penalty(model), penalty)
    assert second.label_names() == labels
    if name == "kbert":  # label names build the training split only
        built = sorted(p.name.split("-")[1] for p in (tmp_path / "cache").iterdir())
        assert built == ["dev", "test", "train"]  # (the first task built all three)
        third = cls({**config, "data": {**config["data"], "cache_dir": str(tmp_path / "other")}})
        third.label_names()
        assert [p.name.split("-")[1] for p in (tmp_path / "other").iterdir()] == ["train"]
        if third.kind == "ner":
            assert torch.equal(cls(config).tag_log_prior(), first.tag_log_prior())
    torch.manual_seed(0)
    rebuilt = second.build_model().eval()
    assert all(torch.equal(a, b) for a, b in zip(rebuilt.state_dict().values(), model.state_dict().values(),
                                                 strict=True))
    assert second.decode(out, batch) == first.decode(out, batch)
    assert second.get_extra_state() == first.get_extra_state()
