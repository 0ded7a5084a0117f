"""A KG read from files is held as arrays (issue 45, item 4): the same graph as the ``dict`` one,
cached by the files' digest, never read from a half-written cache, nothing cached for a bad file."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from graphmatch.cli.main import main
from graphmatch.knowledge import KnowledgeGraph, kg_store
from graphmatch.knowledge.strings import Strings, first_of, prefix_levels, take
from graphmatch.knowledge.trie import CACHE_MIN_WORDS
from graphmatch.text.segmenters import Span

CHARS = "苹果酒店早餐火车站地铁房间北京大学"


def triples(n: int, seed: int = 0) -> list[tuple[str, str, str]]:
    """Nested and repeated subjects, a few predicates, repeated triples."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        s = "".join(rng.choice(CHARS) for _ in range(rng.randint(1, 4)))
        o = "".join(rng.choice(CHARS) for _ in range(rng.randint(1, 3)))
        out.append((s, rng.choice(("类别", "别名", "位于")), o))
    return out + out[: n // 10]


def write(path: Path, rows: list[tuple[str, str, str]], bad_at: int | None = None) -> Path:
    lines = ["\t".join(r) for r in rows]
    if bad_at is not None:
        lines.insert(bad_at, "苹果\t类别")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def many(n: int) -> list[tuple[str, str, str]]:
    """``n`` distinct subjects: enough to be cached."""
    return [(f"词{i}", "类别", f"类{i % 7}") for i in range(n)]


def test_strings_and_their_ids() -> None:
    words = ["北京", "", "北京大学", "北", "北京", "𠀀x", ""]
    strings = Strings.of(words)
    assert list(strings) == words and strings[2] == "北京大学" and strings[-2] == "𠀀x" and len(strings) == 7
    node, keys, level_ptr = prefix_levels(strings.codes, strings.ptr)
    ids, first = first_of(node)
    assert ids.tolist() == [0, 1, 2, 3, 0, 4, 1] and first.tolist() == [0, 1, 2, 3, 5]
    assert level_ptr.tolist() == [0, 1, 3, 5, 6, 7] and len(keys) == 6  # 北 𠀀 | 北京 𠀀x | ..., one node each
    ids = [2, 1, 5, 5, 0, 6, 3]  # any order, repeats, empty strings, a character beyond the BMP
    assert strings.take(ids) == [words[i] for i in ids] and strings.take([]) == []
    assert take(strings, ids) == take(words, ids) == [words[i] for i in ids]


def test_a_read_graph_is_the_graph_built_in_memory(tmp_path: Path) -> None:
    rows = triples(3000)
    read = KnowledgeGraph.from_spo(write(tmp_path / "kg.spo", rows), cache_dir=False)
    built = KnowledgeGraph(rows)
    assert read._arrays is not None and built._arrays is None
    assert list(read.subjects) == list(built.subjects) and len(read) == len(built)
    assert all(read.subjects[s] == v for s, v in built.subjects.items())
    assert list(read.subjects.items()) == list(built.subjects.items())
    assert list(read.subjects.values()) == list(built.subjects.values())
    for s in [*built.subjects, "不是", "北京大学城"]:
        assert (s in read) == (s in built)
        assert read.values(s, 2, joiner="|") == built.values(s, 2, joiner="|")
        assert read.values(s, None, predicate=False) == built.values(s, None, predicate=False)
    words = [Span(s, 0, len(s)) for s in ("苹果", "不是", "酒店早")]
    assert read.query(words) == built.query(words)
    text = "".join(random.Random(1).choice(CHARS + "的了") for _ in range(2000))
    codes = np.array([ord(c) for c in text], dtype=np.int64)
    stop = np.full(len(codes), len(codes), dtype=np.int64)
    mine, theirs = read.flat_trie(), built.flat_trie()
    for a, b in zip(mine.walk(codes, stop), theirs.walk(codes, stop), strict=True):
        assert np.array_equal(a, b)
    assert list(mine.words) == theirs.words
    assert [mine.index(w) for w in theirs.words] == list(range(len(theirs.words)))
    assert mine.index("不是") == mine.index("") == -1
    read.add("新词", "类别", "新")  # from now on a dict
    assert read._arrays is None and read.values("新词") == ["类别新"] and read.values("苹果") == built.values("苹果")


def test_a_large_graph_is_cached_and_read_back_memory_mapped(tmp_path: Path, monkeypatch) -> None:
    spo = write(tmp_path / "kg.spo", many(CACHE_MIN_WORDS))
    seen: list[int] = []
    first = KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache", progress=seen.append)
    assert not first.from_cache and sum(seen) == spo.stat().st_size
    (folder,) = (tmp_path / "cache").iterdir()
    assert first.cache_folder == folder and (folder / kg_store.COMPLETE).is_file()
    monkeypatch.setattr(kg_store, "parse_spo", lambda *a, **k: pytest.fail("parsed again"))
    again = KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache")
    assert again.from_cache and isinstance(again._arrays.value_ptr.base, np.memmap)
    assert isinstance(again.flat_trie()._slots.base, np.memmap)
    assert again.values("词42") == first.values("词42") == ["类别类0"] and "词5000" not in again
    assert list(again.subjects)[:3] == ["词0", "词1", "词2"]
    monkeypatch.undo()
    small = KnowledgeGraph.from_spo(write(tmp_path / "small.spo", many(10)), cache_dir=tmp_path / "cache")
    assert small.cache_folder is None and len(list((tmp_path / "cache").iterdir())) == 1


def test_a_cache_without_its_marker_is_never_read(tmp_path: Path) -> None:
    import os

    spo = write(tmp_path / "kg.spo", many(CACHE_MIN_WORDS))
    folder = kg_store.cache_folder([spo], "raise", tmp_path / "cache")
    old, young = (tmp_path / "cache" / f".{folder.name}.{n}.tmp" for n in ("old", "young"))
    for left in (old, young):  # left by processes killed while writing, long ago and now
        left.mkdir(parents=True)
        (left / "value_ptr.npy").write_bytes(b"half")
    os.utime(old, (0, 0))
    KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache")
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [young.name, folder.name]
    (folder / kg_store.COMPLETE).unlink()  # as a process killed before it wrote the marker leaves it
    (folder / "value_ptr.npy").write_bytes(b"damaged")
    again = KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache")
    assert not again.from_cache and again.values("词7") == ["类别类0"]
    assert (folder / kg_store.COMPLETE).is_file()
    assert KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache").from_cache
    spo.write_text(spo.read_text(encoding="utf-8") + "新词\t类别\t新\n", encoding="utf-8")  # another digest
    changed = KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache")
    assert not changed.from_cache and changed.values("新词") == ["类别新"]


def test_a_bad_line_among_many_names_file_and_line_and_caches_nothing(tmp_path: Path, capsys) -> None:
    spo = write(tmp_path / "big.spo", many(3 * CACHE_MIN_WORDS), bad_at=7000)
    with pytest.raises(ValueError, match=rf"^{spo}:7001: expected 'subject<TAB>predicate<TAB>object', got"):
        KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()
    assert main(["kg", "cache", str(spo)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{spo}:7001:" in err and "Traceback" not in err


def test_kg_cache_builds_once_then_reads(tmp_path: Path, capsys, monkeypatch) -> None:
    from graphmatch.io import datafiles

    monkeypatch.setattr(datafiles, "CACHE_DIR", tmp_path / "home")
    spo = write(tmp_path / "kg.spo", many(CACHE_MIN_WORDS))
    assert main(["kg", "cache", str(spo)]) == 0
    first = capsys.readouterr().err.strip().splitlines()
    assert len(first) == 1 and "5,000 subjects; parsed in" in first[0]  # no bar: stderr is no terminal
    assert main(["kg", "cache", str(spo)]) == 0
    assert "read from the cache" in capsys.readouterr().err
    assert len(list((tmp_path / "home" / "kgs").iterdir())) == 1
    assert main(["kg", "cache"]) == 2 and main(["kg", "wordnet"]) == 2
    assert capsys.readouterr().err.count("\n") == 2



def test_a_large_trie_walks_its_prefixes_instead_of_a_table(monkeypatch) -> None:
    from graphmatch.knowledge import trie as trie_module

    rows = triples(2000, seed=4)
    table = KnowledgeGraph(rows).flat_trie().prefixes()
    monkeypatch.setattr(trie_module, "PREFIX_TABLE_NODES", 0)
    walked = KnowledgeGraph(rows).flat_trie().prefixes()
    assert not isinstance(walked, dict) and len(walked) == len(table)
    rng = random.Random(5)
    asked = [*table, *("".join(rng.choice(CHARS + "的") for _ in range(rng.randint(0, 5))) for _ in range(3000))]
    assert [walked.get(p) for p in asked] == [table.get(p) for p in asked]
    assert [walked.get(p) for p in asked] == [table.get(p) for p in asked]  # memoised, the same


def test_kg_cache_shows_a_bar_on_a_terminal(tmp_path: Path, monkeypatch) -> None:
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    spo = write(tmp_path / "kg.spo", many(50))
    assert main(["kg", "cache", str(spo)]) == 0
    shown = sys.stderr.getvalue()
    assert "reading the KG: 100%" in shown and shown.rstrip().endswith("(fewer than 5,000 subjects: not cached)")


def test_a_cached_graph_warns_as_its_parse_did(tmp_path: Path) -> None:
    spo = write(tmp_path / "kg.spo", [*many(CACHE_MIN_WORDS), ("词x ", "类别", " 类")], bad_at=10)
    for cached in (False, True):
        with pytest.warns(UserWarning) as caught:
            kg = KnowledgeGraph.from_spo(spo, on_error="skip", cache_dir=tmp_path / "cache")
        assert kg.from_cache is cached and kg.values("词x") == ["类别类"]
        assert sorted(str(w.message) for w in caught) == [
            f"{spo}:{CACHE_MIN_WORDS + 2}: 1 line(s) of the knowledge graph have spaces around a subject, predicate or "
            "object (first here); read with the spaces stripped", f"skipped 1 malformed line(s) in {spo}"]
    with pytest.raises(ValueError, match=":11: expected"):  # raise and skip are cached apart
        KnowledgeGraph.from_spo(spo, cache_dir=tmp_path / "cache")
