"""The relation transformer over multilingual-e5-small: the entity markers as four added tokens, the
pieces around them e5's own, the embedding table grown by four rows, trained from the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from graphmatch.cli.main import main as cli
from graphmatch.data.relation import relation_builder
from graphmatch.data.relation_pieces import SentencePieces, relation_pieces
from graphmatch.engine import load
from graphmatch.graphs.relation import WordPieces
from graphmatch.graphs.relation_markup import MARKERS

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "samples" / "relation"
ZH = REPO / "datasets" / "samples" / "relation_zh"
OPTIONS = {"max_distance": 50, "max_length": 128, "markers": True, "position_anchor": "span"}


def _tokens(pieces, sentence):
    return list(relation_builder(OPTIONS, None, pieces, keep_text=True)(sentence)["token"].text)


@pytest.mark.parametrize("sentence", [
    "The <e1>lid</e1> of the <e2>jar</e2> would not open.",
    "<e1>Heavy rain</e1> caused the <e2>flood</e2>, they said.",
    "我的<e1>母亲</e1>喜欢<e2>音乐</e2>。",
    "<e1>长城</e1>的一段位于<e2>北京</e2>北部。",
])
def test_markers_are_one_token_each_and_the_pieces_are_e5s(e5_pieces, e5_spm, sentence):
    pieces, spm = e5_pieces, e5_spm
    assert isinstance(pieces, SentencePieces)
    ids = {m: pieces.tokenizer.convert_tokens_to_ids(m) for m in MARKERS}
    assert sorted(ids.values()) == [250002, 250003, 250004, 250005] and pieces.vocab_size == 250006
    tokens = _tokens(pieces, sentence)
    assert tokens[0] == "<s>" and tokens[-1] == "</s>"
    assert [t for t in tokens if t in MARKERS] == list(MARKERS)  # each marker once, one token
    # e5 cuts these sentences at the entity boundaries: without the markers, its own pieces (no stray ▁)
    assert [t for t in tokens[1:-1] if t not in MARKERS] == spm.tokenize(_plain(sentence))
    graph = relation_builder(OPTIONS, None, pieces)(sentence)
    assert graph["token"].word_id.tolist() == [ids.get(t, spm.vocab.get(t)) for t in tokens]
    assert graph["token"].word_id[0] == 0 and graph["token"].word_id[-1] == 2  # <s>, </s>


def test_a_piece_across_an_entity_boundary_is_cut_there(e5_pieces, e5_spm):
    """e5 reads 我的母亲住在北京 as … 住 在北京: the entity 北京 gets its own pieces, read as a
    continuation (no ▁ before it), and the rest stays e5's."""
    pieces, spm = e5_pieces, e5_spm
    assert spm.tokenize("我的母亲住在北京。") == ["\u2581", "我的", "母亲", "住", "在北京", "。"]
    tokens = _tokens(pieces, "我的<e1>母亲</e1>住在<e2>北京</e2>。")
    assert tokens == ["<s>", "\u2581", "我的", "<e1>", "母亲", "</e1>", "住在", "<e2>", "北京", "</e2>", "。", "</s>"]


def _plain(sentence: str) -> str:
    for m in MARKERS:
        sentence = sentence.replace(m, "")
    return sentence


def test_sentencepiece_pieces_are_read_once_per_tokenizer(e5_small, e5_pieces, tmp_path):
    """A task, its three splits and a reloaded run (its copy of the files) share one reading of e5's
    pieces (seconds each); changed tokenizer files are read again."""
    from tiny_sentencepiece import tiny_sentencepiece_folder

    assert relation_pieces(e5_small) is e5_pieces
    folder = tiny_sentencepiece_folder(tmp_path / "tiny")
    first = relation_pieces(folder)
    assert isinstance(first, SentencePieces) and first.vocab_size == 9 + 4 and first is not e5_pieces
    assert relation_pieces(tiny_sentencepiece_folder(tmp_path / "copy")) is first  # the same files
    tiny_sentencepiece_folder(folder, ["\u2581the", "\u2581lid"])  # rewritten: another tokenizer
    again = relation_pieces(folder)
    assert again is not first and again.vocab_size == 7 + 4 and relation_pieces(folder) is again
    (folder / "special_tokens_map.json").write_text("{}")  # another file of the tokenizer: read again
    assert relation_pieces(folder) is not again and relation_pieces(e5_small) is e5_pieces


def test_the_marked_tokenizer_answers_as_transformers_with_the_markers_added(tmp_path, e5_pieces):
    """What ``WordPieces`` reads of the tokenizer (vocabulary, size, special tokens and their ids,
    pieces, ids, the cache digest) is what ``transformers``' own tokenizer of the folder gives once
    ``add_tokens(MARKERS, special_tokens=True)`` has added the markers; the shared reading is unchanged."""
    from tiny_sentencepiece import tiny_sentencepiece_folder
    from transformers import AutoTokenizer

    folder = tiny_sentencepiece_folder(tmp_path / "tiny")
    ours = relation_pieces(folder)
    theirs = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    theirs.add_tokens(list(MARKERS), special_tokens=True)
    mine = ours.tokenizer
    assert mine.get_vocab() == theirs.get_vocab() and len(mine) == len(theirs) == 9 + 4
    for role in ("cls", "sep", "pad", "unk", "mask"):
        assert getattr(mine, f"{role}_token") == getattr(theirs, f"{role}_token")
        assert getattr(mine, f"{role}_token_id") == getattr(theirs, f"{role}_token_id")
    tokens = ["<e1>", "\u2581the", "</e2>", "\u2581nothing", "<mask>", "<s>"]
    assert mine.convert_tokens_to_ids(tokens) == theirs.convert_tokens_to_ids(tokens)
    assert [mine.convert_tokens_to_ids(t) for t in tokens] == [theirs.convert_tokens_to_ids(t) for t in tokens]
    for text in ["the lid", "<e1>the jar</e1> lid", "thelid<e2>jar</e2>"]:
        assert mine.tokenize(text) == theirs.tokenize(text)
    assert ours.digest == WordPieces(theirs, markers=MARKERS).digest
    assert len(ours.pieces.vocab) == 9 and len(e5_pieces.pieces.vocab) == 250002  # the markers are the copy's


def test_a_bert_checkpoint_keeps_its_unused_slots(tmp_path):
    from tiny_bert import tiny_bert_folder

    folder = tiny_bert_folder(tmp_path / "tiny", ["The lid of the jar would not open."])
    pieces = relation_pieces(folder)
    assert not isinstance(pieces, SentencePieces) and pieces.markers[0].startswith("[unused")


@pytest.mark.parametrize("recipe", ["semeval_minilm_entity_attention", "semeval_minilm_entity_start"])
def test_relation_transformer_trains_on_e5(e5_two_layers, tmp_path, recipe, capsys):
    """On e5-small's first two layers (``e5_two_layers``: its pieces, table and loading)."""
    run = tmp_path / "run"
    args = ["train", f"relation/{recipe}", "--out", str(run), "--set", f"model.pretrained={e5_two_layers}",
            f"data.cache_dir={tmp_path / 'cache'}", f"data.train_file={SAMPLE / 'train.txt'}",
            f"data.test_file={SAMPLE / 'test.txt'}", "data.dev_size=8", "data.limit.train=12", "data.limit.dev=8",
            "data.limit.test=8", "train.max_steps=2", "train.batch_size=4", "train.eval_batch_size=8",
            "train.threads=1", "train.progress=false"]
    assert cli(args) == 0
    err = capsys.readouterr().err
    assert f"pretrained: loaded {5 + 2 * 16} tensors from {e5_two_layers / 'model.safetensors'}" in err
    assert "pretrained: 4 embedding rows added for the entity markers <e1> </e1> <e2> </e2>" in err
    assert json.loads((run / "metrics.json").read_text())["steps"] == 2
    task, model = load(run)  # the run's stored encoder folder gives the same tokenizer, markers added
    table = model.encoder.embeddings.word_embeddings.weight
    assert table.shape == (250006, 384) and model.pad_id == 1
    assert not torch.equal(table[250002], table[250004])  # the markers start apart
    data = task.encode("The <e1>fire</e1> caused <e2>smoke</e2>.")
    assert {250002, 250003, 250004, 250005} <= set(data["token"].word_id.tolist())
    assert cli(["predict", str(run), "The <e1>fire</e1> caused <e2>smoke</e2>."]) == 0
    assert capsys.readouterr().out.splitlines()[1].split("\t")[0] in task.label_names()


def test_chinese_relation_sample_on_e5(e5_two_layers, tmp_path, capsys):
    run = tmp_path / "run"
    args = ["train", "relation/semeval_minilm_entity_attention", "--out", str(run), "--set",
            f"model.pretrained={e5_two_layers}", f"data.cache_dir={tmp_path / 'cache'}",
            *(f"data.{s}_file={ZH / f'{s}.tsv'}" for s in ("train", "dev", "test")), "data.limit.train=8",
            "data.limit.dev=4", "data.limit.test=4", "train.max_steps=1", "train.batch_size=4",
            "train.threads=1", "train.progress=false"]
    assert cli(args) == 0
    err = capsys.readouterr().err
    assert "unknown tokens per split" in err
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["steps"] == 1 and "micro_f1" in metrics["test"]
