"""The cut and soft-position rules (graphmatch/graphs/kbert/rules.py) are written once: the same
function gives the same value on ints (the one-input path) and on arrays (the corpus core), and a
changed rule changes the trees of both builders alike."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_kbert_one import core_graph, same

from graphmatch.graphs.kbert import OneTree, SentenceTreeBuilder, TreeOptions, rules
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

TOK = CharTokenizer({t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *"abcdxyz"])})
KG = KnowledgeGraph([("ab", "r", "xyz"), ("ab", "s", "zz"), ("c", "r", "yy")])


def test_each_rule_is_the_same_on_ints_and_arrays():
    last, k = np.array([0, 3, 7]), np.array([0, 2, 1])
    assert rules.branch_position(last, k).tolist() == [rules.branch_position(a, b)
                                                       for a, b in zip([0, 3, 7], [0, 2, 1], strict=True)]
    assert rules.branch_position(4, 0) == 5  # the first token of a value follows its word's last position
    index = np.arange(6)
    assert rules.kept(index, 4).tolist() == [rules.kept(i, 4) for i in range(6)] == [True] * 4 + [False] * 2
    assert rules.tree_size(np.array([3, 9]), 5, np.minimum).tolist() == [rules.tree_size(3, 5), rules.tree_size(9, 5)]
    assert rules.tree_size(9, 5) == 5
    length, first = np.array([3, 3, 1]), np.array([0, 3, 4])
    assert (rules.kept_length(length, first, 5, np.minimum).tolist()
            == [rules.kept_length(a, b, 5) for a, b in zip([3, 3, 1], [0, 3, 4], strict=True)] == [3, 2, 1])


def positions(max_length: int) -> tuple[list[int], list[int]]:
    builder = SentenceTreeBuilder(KG, TOK, TreeOptions(max_length=max_length))
    fast, slow = OneTree(builder)("abc d", "c ab"), core_graph(builder, "abc d", "c ab")
    same(fast, slow)
    return fast["token"].pos.tolist(), fast["entity"].length.tolist()


@pytest.mark.parametrize("max_length", [4, 7, 64])
def test_a_changed_rule_changes_both_builders(monkeypatch, max_length):
    pos, lengths = positions(max_length)
    # [CLS] a b (r x y z)(s z z) c (r y y) d ...: a branch continues from its word's last position
    assert pos[:14] == [0, 1, 2, 3, 4, 5, 6, 3, 4, 5, 3, 4, 5, 6][:len(pos[:14])]
    monkeypatch.setattr(rules, "branch_position", lambda last, k: last + 10 + k)
    monkeypatch.setattr(rules, "kept_length", lambda length, first, limit, minimum=min: minimum(length, 1))
    moved, cut = positions(max_length)  # both builders still agree (positions() checks it), and both moved
    branch = [p != q for p, q in zip(pos, moved, strict=True)]
    assert any(branch) and all(q == p + 9 for p, q, b in zip(pos, moved, branch, strict=True) if b)
    assert cut == [1] * len(lengths)
    assert torch.equal(torch.tensor(lengths).clamp(max=1), torch.tensor(cut))
