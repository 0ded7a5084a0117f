import pytest

from graphmatch.text import CharTokenizer


def test_google_vocab_special_ids(tokenizer):
    assert len(tokenizer) == 21128
    assert (tokenizer.pad_id, tokenizer.unk_id, tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id) == (
        0, 100, 101, 102, 103)


def test_encode_drops_whitespace_and_keeps_alignment(tokenizer):
    text = "我 爱\t北京\u3000!"
    enc = tokenizer.encode(text)
    assert enc.tokens == ["我", "爱", "北", "京", "!"]
    assert [text[i] for i in enc.char_index] == enc.tokens
    assert enc.ids[0] == tokenizer.vocab["我"]


def test_normalisation_vs_exact_lookup(tokenizer):
    # google_vocab has no uppercase Latin letters: the reference maps them to [UNK]
    assert tokenizer.exact_id("D") == tokenizer.unk_id
    assert tokenizer.token_to_id("D") == tokenizer.vocab["d"]
    assert CharTokenizer(tokenizer.vocab, normalize=False).token_to_id("D") == tokenizer.unk_id


def test_emoji_rare_and_empty_text(tokenizer):
    enc = tokenizer.encode("好😀𠀀")
    assert enc.ids[1:] == [tokenizer.unk_id, tokenizer.unk_id]
    assert tokenizer.encode("").ids == [] and tokenizer.encode("  \n").ids == []


def test_long_text_is_encoded_whole(tokenizer):
    assert len(tokenizer.encode("好" * 5000).ids) == 5000


def test_from_texts_and_from_pretrained(tmp_path):
    tok = CharTokenizer.from_texts(["你好", "好的 ok"])
    assert tok.encode("你好ok").ids == [tok.vocab[c] for c in "你好ok"]
    assert tok.id_to_token(tok.cls_id) == "[CLS]"
    (tmp_path / "vocab.txt").write_text("\n".join(tok.id_to_token(i) for i in range(len(tok))), encoding="utf-8")
    assert CharTokenizer.from_pretrained(tmp_path).vocab == tok.vocab


def test_vocab_without_special_tokens_is_rejected():
    with pytest.raises(ValueError, match="special tokens"):
        CharTokenizer({"a": 0})
