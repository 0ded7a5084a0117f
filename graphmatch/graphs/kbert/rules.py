"""The rules of the tree, written once."""

from __future__ import annotations

import numpy as np

from graphmatch.graphs.kbert.records import (
    ANCHOR_EDGE,
    ENTITY_EDGE,
    WORD_EDGE,
    Trees,
)


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


__all__ = ["tree_visibility"]
