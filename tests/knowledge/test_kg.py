import random

import numpy as np
import pytest

from graphmatch.knowledge import FlatTrie, KnowledgeGraph, Trie
from graphmatch.text import Span


def _kg(tmp_path, text):
    path = tmp_path / "kg.spo"
    path.write_text(text, encoding="utf-8")
    return path


def test_values_in_file_order_deduplicated(tmp_path):
    lines = "苹果\t义原\t水果\n苹果\t义原\t树\n苹果\t义原\t水果\n苹果\t义原\t电脑\n\n"
    kg = KnowledgeGraph.from_spo(_kg(tmp_path, lines))
    assert kg.subjects["苹果"] == [("义原", "水果"), ("义原", "树"), ("义原", "电脑")]
    assert kg.values("苹果") == ["义原水果", "义原树"]
    assert kg.values("苹果", max_entities=5, predicate=False) == ["水果", "树", "电脑"]
    assert kg.values("香蕉") == []


def test_malformed_line_raises_with_location_or_is_skipped(tmp_path):
    path = _kg(tmp_path, "a\tp\to\nbroken line\nb\tp\to\n")
    with pytest.raises(ValueError, match=r"kg\.spo:2"):
        KnowledgeGraph.from_spo(path)
    with pytest.warns(UserWarning, match="skipped 1 malformed"):
        kg = KnowledgeGraph.from_spo(path, on_error="skip")
    assert set(kg.subjects) == {"a", "b"}


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="knowledge graph file not found"):
        KnowledgeGraph.from_spo(tmp_path / "nope.spo")


def test_trie_walk_reports_every_end_and_reach():
    trie = Trie(["北京", "北京大学", "大学"])
    assert trie.walk("北京大学生", 0) == ([2, 4], 4)
    assert trie.walk("北京大", 0) == ([2], 3)  # text ran out inside 北京大学
    assert trie.walk("南京", 0) == ([], 0)
    assert "北京" in trie and "北" not in trie and len(trie) == 3


def test_flat_trie_finds_the_longest_word_at_every_offset():
    rng = random.Random(0)
    words = ["".join(rng.choices("ab天😀", k=rng.randint(1, 5))) for _ in range(40)] + [""]
    trie, flat = Trie(words), FlatTrie(words)
    assert len(flat) == len(trie) and set(flat.words) == set(words) - {""}
    texts = ["".join(rng.choices("ab天😀c", k=rng.randint(1, 12))) for _ in range(30)]
    codes = np.array([ord(ch) for text in texts for ch in text])
    ends = np.cumsum([len(text) for text in texts])
    stop = np.repeat(ends, [len(text) for text in texts])
    length, word = flat.longest(codes, stop)
    walked, walked_word, reach = flat.walk(codes, stop)
    assert np.array_equal(walked, length) and np.array_equal(walked_word, word)
    offset = 0
    for text in texts:
        for i in range(len(text)):  # a word never runs into the next text
            found, reached = trie.walk(text, i)
            assert length[offset + i] == (found[-1] - i if found else 0)
            assert word[offset + i] == (flat.words.index(text[i:found[-1]]) if found else -1)
            assert reach[offset + i] == reached - i
        offset += len(text)
    assert length.any() and (reach > length).any()  # some walks go past their longest word


def test_transition_table_finds_every_key_and_no_other():
    """The flat trie's open-addressing table, on keys made to collide (many share a home slot)."""
    from graphmatch.knowledge.trie import _hash_table, _home

    rng = np.random.default_rng(0)
    keys = np.unique(rng.integers(0, 1 << 40, 3000))
    keys = np.concatenate([keys, keys[:200] + (1 << 41)])  # more keys, some homes shared
    trie = FlatTrie()
    trie._slots, trie._child = _hash_table(keys, np.arange(1, len(keys) + 1))
    bits = (len(trie._slots) - 1).bit_length()
    assert len(np.unique(_home(keys, bits))) < len(keys) and (trie._slots >= 0).mean() <= 0.5
    assert np.array_equal(trie._children(keys[::-1]), np.arange(len(keys), 0, -1))
    misses = np.setdiff1d(rng.integers(0, 1 << 42, 5000), keys)
    assert not trie._children(misses).any()


def test_query_by_words_and_longest_match():
    kg = KnowledgeGraph([("北京", "p", "城市"), ("北京大学", "p", "学校"), ("大学", "p", "机构")])
    assert kg.longest_matches("我在北京大学上学") == [Span("北京大学", 2, 6)]
    words = [Span("我", 0, 1), Span("在", 1, 2), Span("北京", 2, 4), Span("大学", 4, 6)]
    assert kg.query(words) == [Span("北京", 2, 4), Span("大学", 4, 6)]
    assert kg.longest_matches("") == []


def test_real_hownet_kg(hownet_kg):
    # counts from the K-BERT reference notes: 45,124 subjects, HowNet predicate always 义原
    assert len(hownet_kg) == 45124
    sizes = [len(v) for v in hownet_kg.subjects.values()]
    assert sizes.count(1) == 37822 and sizes.count(2) == 7171 and max(sizes) == 5
    assert all(v.startswith("义原") for v in hownet_kg.values("功能词", 5))
    assert "cpu" in hownet_kg and "CPU" not in hownet_kg


def test_builtin_names(shared_data):
    kg = KnowledgeGraph.load("medical", shared_data)
    assert {p for vals in kg.subjects.values() for p, _ in vals} == {"类别"}


def test_an_empty_kg_file_is_an_error(tmp_path):
    for text in ("", "\n\n"):
        (tmp_path / "empty.spo").write_text(text)
        with pytest.raises(ValueError, match=r"empty\.spo: the knowledge graph is empty"):
            KnowledgeGraph.from_spo(tmp_path / "empty.spo")
    (tmp_path / "bad.spo").write_text("only one field\n")
    with pytest.raises(ValueError, match=r"bad\.spo: the knowledge graph is empty"), pytest.warns(UserWarning):
        KnowledgeGraph.from_spo(tmp_path / "bad.spo", on_error="skip")


def test_kg_files_are_read_as_every_data_file(tmp_path):
    import gzip

    path = tmp_path / "kg.spo"
    path.write_bytes(b"\xef\xbb\xbf\xe5\x8c\x97\tis\tcity\n\xef\xbb\xbfx\ty\tz\n")  # a BOM on any line
    assert set(KnowledgeGraph.from_spo(path).subjects) == {"北", "x"}
    path.write_bytes(b"a\tb\tc\nx\x00\ty\tz\n")
    with pytest.raises(ValueError, match=r"kg\.spo:2: a NUL byte"):
        KnowledgeGraph.from_spo(path)
    packed = tmp_path / "kg.spo.gz"
    packed.write_bytes(gzip.compress(b"a\tb\tc\nx\ty\t\xff\n"))
    with pytest.raises(ValueError, match=r"kg\.spo\.gz:2: not valid UTF-8"):
        KnowledgeGraph.from_spo(packed)
