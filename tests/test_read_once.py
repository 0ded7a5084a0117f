"""``utils.read_once``: a reading kept by what it is and the content it was read from, the last
used kept longest, an error raised again each time."""

from __future__ import annotations

import pytest

from graphmatch.utils import read_once as module
from graphmatch.utils.read_once import KEEP, read_once


def test_kept_by_what_and_content_the_last_used_longest(monkeypatch):
    monkeypatch.setattr(module, "_KEPT", {})
    calls = []

    def reader(value):
        return lambda: calls.append(value) or [value]

    first = read_once("size", b"abc", reader(1))
    assert read_once("size", b"abc", reader(2)) is first and calls == [1]
    assert read_once("kind", b"abc", reader(3)) == [3] and read_once("size", b"abd", reader(4)) == [4]
    for i in range(KEEP - 3):  # fills the memo; "size" b"abc" is used again, so it stays
        read_once("size", b"abc", reader(-1))
        read_once("other", str(i).encode(), reader(10 + i))
    read_once("size", b"abc", reader(-1))
    read_once("new", b"", reader(99))  # one too many: the one used longest ago goes
    assert read_once("size", b"abc", reader(-1)) is first and -1 not in calls
    assert read_once("kind", b"abc", reader(5)) == [5] and calls[-1] == 5  # dropped: read again
    assert len(module._KEPT) == KEEP


def test_an_error_is_not_kept(monkeypatch):
    monkeypatch.setattr(module, "_KEPT", {})

    def fail():
        raise ValueError("bad file")

    for _ in range(2):
        with pytest.raises(ValueError, match="bad file"):
            read_once("size", b"x", fail)
    assert read_once("size", b"x", lambda: 7) == 7 and list(module._KEPT.values()) == [7]


def test_a_tokenizer_size_follows_the_file(tmp_path):
    from tiny_sentencepiece import tiny_sentencepiece_folder

    from graphmatch.pretrained.files import tokenizer_size

    folder = tiny_sentencepiece_folder(tmp_path / "spm")
    assert tokenizer_size(folder) == tokenizer_size(tiny_sentencepiece_folder(tmp_path / "copy")) == 9
    tiny_sentencepiece_folder(folder, ["\u2581the"])  # rewritten: counted again
    assert tokenizer_size(folder) == 6 and tokenizer_size(tmp_path / "copy") == 9
