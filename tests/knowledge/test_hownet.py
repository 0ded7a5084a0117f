import sys
import types

import numpy as np
import pytest

from graphmatch.knowledge import HowNetLexicon, load_sememe_vectors


def test_polysemous_words_take_senses_from_the_sense_file(hownet_lexicon):
    assert hownet_lexicon.senses("的") == [("功能词", "构助"), ("定向", "射击", "用具", "部件")]
    assert len(hownet_lexicon.senses("在")) == 6


def test_other_words_have_one_sense(hownet_lexicon):
    assert hownet_lexicon.senses("...底") == [("功能词",)]
    assert hownet_lexicon.senses("不存在的词语xyz") == []
    assert "" not in hownet_lexicon
    assert len(hownet_lexicon) > 126000


def _read_every_sense(root) -> dict[str, list[tuple[str, ...]]]:
    """The public files read word by word, every sense made at once (the reference)."""
    from graphmatch.knowledge.hownet import SENSE_FILE, WORD_FILE

    senses = {}
    lines = (root / WORD_FILE).read_text(encoding="utf-8").split("\n")
    for word, sememes in zip(lines[0::2], lines[1::2], strict=False):
        if word.strip() and sememes.split():
            senses[word.strip()] = [tuple(sememes.split())]
    for line in (root / SENSE_FILE).read_text(encoding="utf-8").splitlines():
        fields, found = line.split(), []
        rest = fields[2:]
        while rest:
            found.append(tuple(rest[1:1 + int(rest[0])]))
            rest = rest[1 + int(rest[0]):]
        if fields:
            senses[fields[0]] = found
    return senses


def test_senses_read_when_asked_are_every_sense_of_the_files(shared_data):
    """Each one-sense word's line is split when the word is first asked for; the lexicon answers as
    the files read in full do, for every word, and its sememe names are theirs."""
    expected = _read_every_sense(shared_data)
    lexicon = HowNetLexicon.from_files(shared_data)
    assert len(lexicon) == len(expected) and lexicon.sememe_names == sorted(
        {s for senses in expected.values() for sense in senses for s in sense})
    assert all(word in lexicon and lexicon.senses(word) == senses for word, senses in expected.items())
    assert all(lexicon.senses(word) is lexicon.senses(word) for word in ("的", "...底"))  # read once


def test_a_word_in_both_takes_its_senses():
    lexicon = HowNetLexicon({"打": [("a",), ("b", "c")]}, {"打": "x y", "书": "d  e\r"})
    assert lexicon.senses("打") == [("a",), ("b", "c")] and lexicon.senses("书") == [("d", "e")]
    assert len(lexicon) == 2 and lexicon.sememe_names == ["a", "b", "c", "d", "e"] and "x" not in lexicon.sememe_names


def test_sememe_vectors(shared_data):
    vecs = load_sememe_vectors(root=shared_data)
    assert vecs.vectors.shape == (1984, 200) and vecs.vectors.dtype == np.float32
    assert vecs.names[vecs.index["贝多芬"]] == "贝多芬"


def test_sememe_vectors_bad_file(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("2 3\na 1 2 3\nb 1 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"v\.txt:3"):
        load_sememe_vectors(path)


def test_sememe_vectors_are_read_once_per_content(tmp_path):
    """A task asks twice (its sememe vocabulary, its model's table): one reading, read-only; another
    content is read again, a bad one fails each time; CRLF lines read as in text mode."""
    path = tmp_path / "v.txt"
    path.write_bytes(b"2 3\r\na 1 2 3\r\nb 4 5 6\r\n")
    first = load_sememe_vectors(path)
    assert load_sememe_vectors(path) is first and first.names == ["a", "b"] and first.vectors[1].tolist() == [4, 5, 6]
    with pytest.raises(ValueError, match="read-only"):
        first.vectors[0, 0] = 9.0
    path.write_text("1 3\nc 7 8 9\n", encoding="utf-8")
    assert load_sememe_vectors(path).names == ["c"]
    path.write_text("1 3\nc 7 8\n", encoding="utf-8")
    for _ in range(2):
        with pytest.raises(ValueError, match=r"v\.txt:2"):
            load_sememe_vectors(path)


def test_openhownet_conversion(monkeypatch, tmp_path):
    """With OpenHowNet data present, senses come from it (a stand-in dictionary here)."""
    sememe = types.SimpleNamespace
    senses = [
        types.SimpleNamespace(zh_word="苹果", get_sememe_list=lambda: [sememe(zh="水果")]),
        types.SimpleNamespace(zh_word="苹果", get_sememe_list=lambda: [sememe(zh="电脑"), sememe(zh="特定牌子")]),
    ]
    fake = types.ModuleType("OpenHowNet")
    fake.HowNetDict = lambda: types.SimpleNamespace(get_all_senses=lambda: senses)
    download = types.ModuleType("OpenHowNet.Download")
    download.OPENHOWNET_RESOURCE_PATH = str(tmp_path)
    monkeypatch.setitem(sys.modules, "OpenHowNet", fake)
    monkeypatch.setitem(sys.modules, "OpenHowNet.Download", download)
    with pytest.raises(OSError, match="not installed"):
        HowNetLexicon.from_openhownet()
    (tmp_path / "resources").mkdir()
    (tmp_path / "resources" / "HowNet_dict_complete").write_bytes(b"")
    lex = HowNetLexicon.load()
    assert lex.senses("苹果") == [("水果",), ("特定牌子", "电脑")]
