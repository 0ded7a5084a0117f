"""A ``tokenizer.json`` is parsed once per process for the same content (e5-small's takes seconds,
and a command reads it several times); other content is parsed again; a bad file is one line."""

from __future__ import annotations

import pytest
from tiny_sentencepiece import tiny_sentencepiece_folder

from graphmatch.text.sentencepiece import SentencePieceTokenizer, is_sentencepiece


def test_the_same_content_is_parsed_once(tmp_path):
    first = SentencePieceTokenizer.from_pretrained(tiny_sentencepiece_folder(tmp_path / "a"))
    same = SentencePieceTokenizer.from_pretrained(tiny_sentencepiece_folder(tmp_path / "b"))  # a copy
    assert same._fast is first._fast and same._inner is first._inner and len(same) == len(first) == 9
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
