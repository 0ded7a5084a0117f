"""A large FlatTrie is compiled once into the cache and read back unchanged (issue 32: the KG
tries of ``predict`` load from a compiled cache)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from graphmatch.knowledge import trie as trie_module
from graphmatch.knowledge.trie import CACHE_MIN_WORDS, FlatTrie

ARRAYS = ("_depth", "_best_word", "_best_length", "_slots", "_child", "_root")


def words(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    chars = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面"
    return ["".join(rng.choice(chars) for _ in range(rng.randint(1, 5))) for _ in range(n)]


def same(a: FlatTrie, b: FlatTrie) -> bool:
    return a.words == b.words and all(np.array_equal(getattr(a, n), getattr(b, n)) for n in ARRAYS)


def test_a_large_trie_is_read_back_from_the_cache_equal(tmp_path, monkeypatch):
    vocab = words(CACHE_MIN_WORDS + 500)
    built = FlatTrie(vocab, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1
    monkeypatch.setattr(FlatTrie, "_build", lambda self, w: pytest.fail("built again instead of read"))
    cached = FlatTrie(vocab, cache_dir=tmp_path)
    monkeypatch.undo()
    assert same(cached, FlatTrie(vocab, cache_dir=False))
    text = "".join(words(400, seed=1))
    codes = np.array([ord(c) for c in text], dtype=np.int64)
    stop = np.full(len(codes), len(codes), dtype=np.int64)
    for a, b in zip(built.walk(codes, stop), cached.walk(codes, stop), strict=True):
        assert np.array_equal(a, b)


def test_other_words_or_order_are_another_cache_entry_and_small_tries_none(tmp_path):
    vocab = words(CACHE_MIN_WORDS + 10)
    FlatTrie(vocab, cache_dir=tmp_path)
    FlatTrie(vocab[::-1], cache_dir=tmp_path)  # the first word of a duplicate wins: order matters
    FlatTrie(vocab[:100], cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 2


def test_a_damaged_cache_file_is_built_again(tmp_path):
    vocab = words(CACHE_MIN_WORDS + 10)
    FlatTrie(vocab, cache_dir=tmp_path)
    (path,) = tmp_path.glob("*.npz")
    path.write_bytes(path.read_bytes()[:100])
    assert same(FlatTrie(vocab, cache_dir=tmp_path), FlatTrie(vocab, cache_dir=False))
    assert path.stat().st_size > 100  # written whole again


def test_the_default_cache_is_under_graphmatch_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(trie_module.datafiles, "CACHE_DIR", tmp_path)
    FlatTrie(words(CACHE_MIN_WORDS + 10))
    assert len(list((tmp_path / "tries").glob("*.npz"))) == 1
