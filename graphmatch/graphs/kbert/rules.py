r"""The rules of a K-BERT sentence tree, written once: the soft positions of a branch, the cut to
``max_length`` and the visibility. Both builders call them: :class:`~graphmatch.graphs.kbert.one.OneTree`
on Python integers, one word or value at a time (its speed is a few calls per input), and
:class:`~graphmatch.graphs.kbert.core.TreeCore` on NumPy arrays of all inputs at once. Each rule is one
arithmetic expression that means the same over an ``int`` and an array; where it takes a minimum, the
caller passes ``min`` (the default) or :func:`numpy.minimum`.

Soft positions: trunk token :math:`o` of an input has position :math:`o`; the :math:`k`-th token
(from 0) of a value on a word whose last trunk token has position :math:`p` has

.. math::
    \operatorname{pos} = p + 1 + k \qquad \text{(siblings reuse the same positions).}

The cut: the tree is built in full, then every token at index :math:`i \ge L` (``max_length``) goes:

.. math::
    \operatorname{kept}(i) = [i < L], \qquad |\text{tree}| = \min(n, L), \qquad
    |\text{value}| = \min(\ell, L - f)

for a tree of :math:`n` tokens and a value of :math:`\ell` tokens whose first token sits at :math:`f`.
A value stays while its first token does, a word while its first branch token does (its trunk tokens
come before it). Visibility follows from the edges the builders write (:func:`tree_visibility`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graphmatch.graphs.kbert.records import ANCHOR_EDGE, ENTITY_EDGE, WORD_EDGE, Trees


def branch_position(last: Any, k: Any) -> Any:
    """The soft position of token ``k`` (from 0) of a value hung on a word whose last trunk token has
    position ``last``: :math:`p + 1 + k` (ints or arrays)."""
    return last + 1 + k


def kept(index: Any, limit: int) -> Any:
    """Whether the token at ``index`` of its input's flattened tree survives the cut to ``limit``
    tokens (a value: its first token; a word: its first branch token)."""
    return index < limit


def tree_size(tokens: Any, limit: int, minimum: Callable[[Any, Any], Any] = min) -> Any:
    """The tokens a tree of ``tokens`` keeps after the cut: :math:`\\min(n, L)`."""
    return minimum(tokens, limit)


def kept_length(length: Any, first: Any, limit: int, minimum: Callable[[Any, Any], Any] = min) -> Any:
    """The tokens a value of ``length`` tokens keeps when its first token sits at ``first`` (kept):
    :math:`\\min(\\ell, L - f)`."""
    return minimum(length, limit - first)


def tree_visibility(trees: Trees) -> np.ndarray:
    r"""The ``[L, L]`` visibility of a :class:`Trees` of **one** input, in NumPy (for inspection
    without torch; batches on a device use :func:`graphmatch.graphs.kbert.visibility_mask`, which
    a test holds equal to this):

    .. math::
        V = t t^\top \;\lor\; [e_i = e_j] \;\lor\; [w(e_i) = u_j] \;\lor\; [u_i = w(e_j)]

    with :math:`t` the trunk indicator, :math:`e_i` the entity of branch token :math:`i`,
    :math:`u_j` the word of trunk token :math:`j` and :math:`w(e)` the word entity :math:`e`
    hangs on. Real tokens always see themselves.
    """
    token = trees.stores["token"]
    trunk = ~token["branch"]
    visible = np.outer(trunk, trunk)
    branch_token, entity = trees.stores[ENTITY_EDGE]["edge_index"]
    word_token, word = trees.stores[WORD_EDGE]["edge_index"]
    anchor_entity, anchor_word = trees.stores[ANCHOR_EDGE]["edge_index"]
    word_of = np.full(int(trees.counts["entity"][0]), -1, dtype=np.int64)
    word_of[anchor_entity] = anchor_word
    visible[np.ix_(branch_token, branch_token)] |= entity[:, None] == entity[None, :]
    hangs = word_of[entity][:, None] == word[None, :]
    visible[np.ix_(branch_token, word_token)] |= hangs
    visible[np.ix_(word_token, branch_token)] |= hangs.T
    return visible


__all__ = ["branch_position", "kept", "kept_length", "tree_size", "tree_visibility"]
