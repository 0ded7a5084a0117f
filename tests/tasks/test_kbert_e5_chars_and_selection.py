"""K-BERT over multilingual-e5-small: NER over characters looked up among its pieces, and
knowledge selected by the encoder (``data.select``)."""

from __future__ import annotations

import pytest

from graphmatch.data.kbert import kbert_dataset
from graphmatch.tasks.kbert import KBertTask
from graphmatch.tasks.recipes.resolve import resolve
from graphmatch.text.pretrained import tokenization_of, tokenizer_for
from graphmatch.text.sentencepiece import SentencePieceTokenizer
from graphmatch.text.tokenizer import CharTokenizer


def test_a_tokenizer_json_reads_as_characters_for_tagging(e5_small):
    spm = e5_small / "tokenizer.json"
    assert tokenization_of(spm, "auto") == "sentencepiece"
    assert tokenization_of(spm, "auto", tagging=True) == "chars"
    assert tokenization_of(spm, "chars") == "chars"
    with pytest.raises(ValueError, match="needs a vocab.txt"):
        tokenization_of(spm, "wordpiece")
    chars, pieces = tokenizer_for(spm, "chars"), SentencePieceTokenizer(spm)
    assert isinstance(chars, CharTokenizer)
    for ch in "左侧肢体活动不灵":
        assert chars.token_to_id(ch) != chars.unk_id
        assert chars.id_to_token(chars.token_to_id(ch)).lstrip("\u2581") == ch
    assert (chars.cls_id, chars.sep_id, chars.pad_id, chars.unk_id) == (
        pieces.cls_id, pieces.sep_id, pieces.pad_id, pieces.unk_id)


def test_medical_ner_graphs_over_e5_characters(e5_small, shared_data, tmp_path):
    ds = kbert_dataset("medical_ner", "train", root=shared_data, cache=tmp_path, kg="medical",
                       vocab=e5_small / "tokenizer.json", limit=40, progress=False)
    chars = tokenizer_for(e5_small / "tokenizer.json", "chars")
    first = ds[0]
    line = ds.source.read_text(encoding="utf-8").splitlines()[1].split("\t")[0].split()
    assert int((first["token"].y >= 0).sum()) == len(line)  # one tag per character
    trunk = first["token"].input_ids[first["token"].branch == 0]
    assert trunk.tolist() == [chars.token_to_id(ch) for ch in line]
    assert sum(int(ds[i]["entity"].num_nodes) for i in range(len(ds))) > 0  # Medical KG branches injected


def test_select_needs_an_encoder_and_the_default_mode():
    with pytest.raises(ValueError, match="data.select.by: encoder scores branches with model.pretrained"):
        resolve("kbert/chnsenticorp_hownet_quick", ["data.select.by=encoder"])
    with pytest.raises(ValueError, match="threshold"):
        resolve("kbert/chnsenticorp_e5_hownet_selected", ["data.select.threshold=2"])


def test_selection_keeps_fitting_branches_and_reports_them(e5_small, shared_data, tmp_path):
    config = resolve("kbert/chnsenticorp_e5_hownet_selected",
                     [f"data.root={shared_data}", f"data.cache_dir={tmp_path}", "data.limit.train=24",
                      "data.limit.dev=8", "data.limit.test=8", "train.progress=false", "data.select.threshold=0.84"])
    task = KBertTask(config)
    datasets = task.datasets()
    lines = task.report(datasets)
    assert any(line.startswith("knowledge selection (encoder): train kept ") for line in lines), lines
    report = datasets["train"].selection_report
    assert 0 < report["kept"] < report["candidates"]
    assert all(d["score"] < 0.84 for d in report["dropped"])
    # read back from the cache, with the same report
    again = KBertTask(config).datasets()["train"].selection_report
    assert again == report


def test_selection_embeds_after_the_text_prefix(e5_small, shared_data, tmp_path):
    """With data.text_prefix the selection embeds every sentence and branch after it, as the model
    reads them: other vectors than without it, and another cache key."""
    import numpy as np

    common = [f"data.root={shared_data}", f"data.cache_dir={tmp_path}", "train.progress=false"]
    plain = KBertTask(resolve("kbert/lcqmc_e5_hownet_selected", common)).selection()
    prefixed = KBertTask(resolve("kbert/lcqmc_e5_hownet_selected",
                                 [*common, "data.text_prefix='query: '"])).selection()
    assert prefixed.embed.prefix == "query: " and plain.embed.prefix == ""
    assert prefixed.embed.key == plain.embed.key + "+prefix='query: '"
    texts = ["北京天气怎么样", "手机"]
    with_prefix = prefixed.embed(texts)
    assert np.allclose(with_prefix, plain.embed([f"query: {t}" for t in texts]), atol=1e-5)
    assert not np.allclose(with_prefix, plain.embed(texts), atol=1e-3)


def test_selection_embeddings_do_not_depend_on_the_callers_threads(e5_small, shared_data, tmp_path):
    """The embedder works on one thread whatever the caller set (the scores, so the kept branches, do
    not depend on who filled the cache), says so in its cache key, and gives the thread count back."""
    import numpy as np
    import torch

    embed = KBertTask(resolve("kbert/lcqmc_e5_hownet_selected", [f"data.root={shared_data}",
                                                                 f"data.cache_dir={tmp_path}"])).selection().embed
    assert embed.key.endswith("+threads=1")
    texts = ["今天北京的天气怎么样，会不会下雨", "手机", "这家酒店的服务很好，房间也很干净"] * 4
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(2)
        on_two = embed(texts)
        assert torch.get_num_threads() == 2
        torch.set_num_threads(1)
        on_one = embed(texts)
    finally:
        torch.set_num_threads(before)
    assert np.array_equal(on_two, on_one)
