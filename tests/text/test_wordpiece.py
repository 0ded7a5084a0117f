"""WordPieceTokenizer: the checkpoint's own word pieces (checked against HuggingFace's tokenizer of
the same folder), the basic tokenizer's words with their offsets, and one-line errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from graphmatch.text import Span, WordPieceTokenizer

TEXTS = ["The companies sold geese.", "I like ice creams, don't you?", "An X-ray of the Café's façade",
         "ungrammaticality   and\tanseriform birds", "中文 text ok", "…", "a"]


@pytest.fixture(scope="module")
def tok(minilm) -> WordPieceTokenizer:
    return WordPieceTokenizer.from_pretrained(minilm)


def test_pieces_are_those_of_the_checkpoints_own_tokenizer(tok, minilm):
    from transformers import AutoTokenizer

    hf = AutoTokenizer.from_pretrained(str(minilm), local_files_only=True)
    pieces = tok.encode_many(TEXTS)
    for i, text in enumerate(TEXTS):
        lo, hi = pieces.piece_ptr[i], pieces.piece_ptr[i + 1]
        assert pieces.tokens[lo:hi] == hf.tokenize(text) == tok.tokenize(text)
        assert pieces.ids[lo:hi].tolist() == hf(text, add_special_tokens=False)["input_ids"]


def test_words_offsets_and_pieces(tok):
    text = "I like ice creams."
    p = tok.encode_many([text])
    assert p.tokens == ["i", "like", "ice", "cream", "##s", "."]
    assert p.ids.tolist() == [1045, 2066, 3256, 6949, 2015, 1012]
    assert list(zip(p.start.tolist(), p.end.tolist(), strict=True)) == [(0, 1), (2, 6), (7, 10), (11, 16),
                                                                         (16, 17), (17, 18)]
    assert [text[s:e] for s, e in zip(p.word_start.tolist(), p.word_end.tolist(), strict=True)] == \
        ["I", "like", "ice", "creams", "."]
    assert p.word_ptr.tolist() == [0, 1, 2, 3, 5, 6]  # "creams" is two pieces
    assert tok.words(text)[3] == Span("creams", 11, 17)
    assert tok.words("x-ray, don't") == [Span("x", 0, 1), Span("-", 1, 2), Span("ray", 2, 5), Span(",", 5, 6),
                                         Span("don", 7, 10), Span("'", 10, 11), Span("t", 11, 12)]


def test_many_texts_at_once(tok):
    texts = ["Café au lait", "   ", "", "ice creams"]
    p = tok.encode_many(texts)
    assert p.piece_ptr.tolist() == [0, 4, 4, 4, 7]
    assert p.text_words.tolist() == [0, 3, 3, 3, 5]  # whitespace gives no word
    assert p.tokens[:4] == ["cafe", "au", "lai", "##t"]  # accents stripped, offsets still in the text as written
    assert (p.start[:4].tolist(), p.end[:4].tolist()) == ([0, 5, 8, 11], [4, 7, 11, 12])
    assert p.word_ptr[:4].tolist() == [0, 1, 2, 4]
    assert (p.word_start[3:].tolist(), p.word_end[3:].tolist()) == ([0, 4], [3, 10])  # local to their text
    empty = tok.encode_many([])
    assert empty.ids.size == 0 and empty.piece_ptr.tolist() == [0] and empty.text_words.tolist() == [0]


def test_vocabulary_attributes(tok):
    assert (tok.pad_id, tok.unk_id, tok.cls_id, tok.sep_id, tok.mask_id) == (0, 100, 101, 102, 103)
    assert len(tok) == tok.vocab_size == 30522
    assert tok.exact_id("[CLS]") == 101 and tok.exact_id("[ENT]") == tok.unk_id
    assert tok.id_to_token(2015) == "##s"
    assert np.issubdtype(tok.encode_many(["a"]).ids.dtype, np.integer)


def test_a_cased_vocabulary_keeps_case(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Paris", "paris", "##s"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}), encoding="utf-8")
    cased = WordPieceTokenizer.from_pretrained(tmp_path)
    assert not cased.lowercase and cased.tokenize("Paris pariss") == ["Paris", "paris", "##s"]
    (tmp_path / "tokenizer_config.json").unlink()
    assert WordPieceTokenizer.from_pretrained(tmp_path).tokenize("Paris") == ["paris"]  # BERT's default: uncased


def test_bad_folders_are_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no vocab.txt \(a WordPiece vocabulary\) in .*"):
        WordPieceTokenizer.from_pretrained(tmp_path)
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"vocab.txt: vocabulary lacks the special tokens \['\[CLS\]', '\[SEP\]'"):
        WordPieceTokenizer.from_pretrained(tmp_path)
    (tmp_path / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", encoding="utf-8")
    (tmp_path / "tokenizer_config.json").write_text("{oops", encoding="utf-8")
    with pytest.raises(ValueError, match=r"tokenizer_config.json: not JSON"):
        WordPieceTokenizer.from_pretrained(tmp_path)
