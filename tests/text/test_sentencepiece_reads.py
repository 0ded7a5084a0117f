"""A ``tokenizer.json`` is parsed once per process for the same content (e5-small's takes seconds,
and a command reads it several times); other content is parsed again; a bad file is one line."""

from __future__ import annotations

import json

import pytest
from tiny_sentencepiece import PIECES, SPECIAL, tiny_sentencepiece_folder
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

from graphmatch.text.sentencepiece import SentencePieceTokenizer, _twin, _without_prefix, is_sentencepiece


def test_the_same_content_is_parsed_once(tmp_path):
    first = SentencePieceTokenizer.from_pretrained(tiny_sentencepiece_folder(tmp_path / "a"))
    same = SentencePieceTokenizer.from_pretrained(tiny_sentencepiece_folder(tmp_path / "b"))  # a copy
    assert same._fast is first._fast and same._inner is first._inner and len(same) == len(first) == 9
    assert same.vocab is first.vocab and same._itos is first._itos and first.id_to_token(5) == "\u2581lid"
    assert first.tokenize("the lid") == ["\u2581the", "\u2581lid"]
    assert first.encode_many(["lid"]).tokens == ["\u2581lid"]
    assert first.encode_many(["lid"], prefix=False).tokens == ["lid"]  # the twin: no ▁ before a continuation
    tiny_sentencepiece_folder(tmp_path / "a", ["\u2581the", "\u2581jar"])  # rewritten: parsed again
    other = SentencePieceTokenizer.from_pretrained(tmp_path / "a")
    assert other._fast is not first._fast and len(other) == 7 and "\u2581lid" not in other.vocab
    assert SentencePieceTokenizer.from_pretrained(tmp_path / "b")._fast is first._fast


def test_is_sentencepiece_reads_the_content(tmp_path):
    folder = tiny_sentencepiece_folder(tmp_path / "spm")
    assert is_sentencepiece(folder / "tokenizer.json")
    for name, text in [("list.json", "[]"), ("bert.json", '{"pre_tokenizer": {"type": "BertPreTokenizer"}}'),
                       ("broken.json", '{"pre_tokenizer": '), ("binary.json", b"\xff\xfe")]:
        path = tmp_path / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        assert not is_sentencepiece(path), name
    assert not is_sentencepiece(tmp_path / "missing.json")
    (folder / "tokenizer.json").write_text('{"pre_tokenizer": {"type": "Whitespace"}}')  # rewritten
    assert not is_sentencepiece(folder / "tokenizer.json")


def test_an_unreadable_file_is_one_line_each_time(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "Nothing"}}')
    for _ in range(2):  # an error is not kept as a reading
        with pytest.raises(ValueError, match=f"^{bad}: not a readable tokenizer.json \\(") as err:
            SentencePieceTokenizer(bad)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="missing.json: not a readable tokenizer.json \\(No such file"):
        SentencePieceTokenizer(tmp_path / "missing.json")


def test_the_continuation_twin_is_the_tokenizer_with_no_prefix_anywhere():
    """The twin shares the model and rebuilds the small parts; it equals the whole file read back
    with every ``Metaspace`` set to ``prepend_scheme: never``, nested ones, added tokens and limits too."""
    vocab = [(t, 0.0) for t in SPECIAL] + [(p, -1.0 - i) for i, p in enumerate(PIECES)]
    fast = Tokenizer(models.Unigram(vocab, unk_id=SPECIAL.index("<unk>")))
    fast.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace("  ", " ")])
    fast.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(), pre_tokenizers.Metaspace()])
    fast.decoder = decoders.Metaspace()
    fast.add_special_tokens([*SPECIAL, "<mask>"])
    fast.add_tokens(["jarlid"])  # not special, beyond the model's pieces: the ids must follow <mask>
    fast.post_processor = processors.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    fast.enable_truncation(5)
    twin = _twin(fast, prefix=False)
    whole = Tokenizer.from_str(json.dumps(_without_prefix(json.loads(fast.to_str()))))
    assert json.loads(twin.to_str()) == json.loads(whole.to_str())
    assert "never" in json.dumps(json.loads(twin.to_str())["pre_tokenizer"])
    texts = ["the lid", "lid 12 jarlid", "thejar lid the lid the"]
    assert [e.ids for e in twin.encode_batch(texts)] == [e.ids for e in whole.encode_batch(texts)]
    assert twin.encode("lid").tokens == ["<s>", "lid", "</s>"] != fast.encode("lid").tokens
    assert fast.model is not None and twin.get_vocab_size() == fast.get_vocab_size()
    copy = _twin(fast)  # with the prefix: the tokenizer itself, its own added tokens from here on
    assert json.loads(copy.to_str()) == json.loads(fast.to_str())
    copy.add_special_tokens(["<e1>"])
    assert copy.token_to_id("<e1>") == fast.get_vocab_size() and fast.token_to_id("<e1>") is None


def test_a_tokenizer_json_is_parsed_once_for_its_kind_and_its_size(tmp_path, monkeypatch):
    from graphmatch.pretrained import files
    from graphmatch.pretrained.files import tokenizer_size

    folder = tiny_sentencepiece_folder(tmp_path / "spm", ["\u2581the", "\u2581odd"])
    parsed, loads = [], json.loads
    monkeypatch.setattr(files.json, "loads", lambda text, *a, **k: parsed.append(1) or loads(text, *a, **k))
    assert is_sentencepiece(folder / "tokenizer.json") and tokenizer_size(folder) == 7
    assert is_sentencepiece(folder / "tokenizer.json") and tokenizer_size(folder) == 7
    assert len(parsed) == 1
