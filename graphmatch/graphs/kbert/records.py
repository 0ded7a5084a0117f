"""The records of K-BERT sentence trees: node and edge types, what a build returns
(:class:`Trees`, :class:`Coverage`), the parts an input is written in, and the arrays each step
of :mod:`~graphmatch.graphs.kbert.core` hands the next."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from graphmatch.utils.ragged_np import ptr

#: the tags K-BERT's reference never splits (``brain/config.py: NEVER_SPLIT_TAG``)
SPECIAL_TAGS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[ENT]", "[SUB]", "[PRE]", "[OBJ]")
CLS, SEP = "[CLS]", "[SEP]"
WORD_EDGE = ("token", "in", "word")
ENTITY_EDGE = ("token", "in", "entity")
ANCHOR_EDGE = ("entity", "on", "word")
IGNORE_INDEX = -100
NODE_TYPES = ("token", "word", "entity")
EDGE_TYPES = (WORD_EDGE, ENTITY_EDGE, ANCHOR_EDGE)
_UNSET = np.iinfo(np.int32).min
_TEXT_A, _TEXT_B, _TAG = 0, 1, 2  # kinds of the parts an input is written out in

#: K-Query on a text part of :meth:`TreeCore.build_parts`: every match, only a match that ends
#: where the part's text ends (trailing whitespace aside; its head word), or none
QUERIES = ("all", "head", "none")
_ALL, _HEAD = 0, 1

#: below this share of trunk tokens matched, :meth:`Coverage.warning` warns (a KG of another language)
MIN_TOKEN_SHARE = 0.02


class Trees(NamedTuple):
    """Sentence trees of ``n`` inputs as flat arrays.

    ``stores[key][name]`` is the attribute ``name`` of node or edge type ``key`` for all inputs
    concatenated (NumPy arrays; lists of strings for ``text``; edge indices local to their
    input) and ``counts[key]`` ``[n]`` the nodes or edges of each input.
    """

    stores: dict[Any, dict[str, Any]]
    counts: dict[Any, np.ndarray]


class Coverage(NamedTuple):
    """How much knowledge a corpus got, after the cut: of ``inputs`` trees, ``with_branch`` hold
    at least one branch (entity), ``branches`` in all; of their ``tokens`` trunk tokens,
    ``matched`` lie inside a word that got a branch."""

    inputs: int
    with_branch: int
    branches: int
    tokens: int
    matched: int

    @classmethod
    def of(cls, counts: Mapping[Any, np.ndarray]) -> Coverage:
        """From per-input counts of nodes and edges, as in :attr:`Trees.counts`."""
        branches = np.asarray(counts["entity"])
        return cls(len(branches), int((branches > 0).sum()), int(branches.sum()),
                   int(np.sum(counts["token"]) - np.sum(counts[ENTITY_EDGE])), int(np.sum(counts[WORD_EDGE])))

    @property
    def share(self) -> float:
        """The fraction of inputs with at least one branch."""
        return self.with_branch / self.inputs if self.inputs else 0.0

    @property
    def per_input(self) -> float:
        """Branches per input."""
        return self.branches / self.inputs if self.inputs else 0.0

    @property
    def token_share(self) -> float:
        """The fraction of trunk tokens inside a word that got a branch."""
        return self.matched / self.tokens if self.tokens else 0.0

    def __str__(self) -> str:
        return (f"knowledge: {100 * self.share:.1f} % of {self.inputs:,} inputs have a branch, "
                f"{self.per_input:.2f} branches per input, {100 * self.token_share:.1f} % of their tokens matched")

    def warning(self, kg: str, below: float = MIN_TOKEN_SHARE) -> str | None:
        """One line when knowledge graph ``kg`` matched under ``below`` of the trunk tokens, else
        ``None``. Tokens, not inputs: a graph of the other language still matches some inputs
        (WordNet finds the digits and Latin words of 37 % of ChnSentiCorp's reviews, 1.0 % of
        their characters; HowNet 3.8 % of SST-2's sentences, 0.3 % of their characters), while
        the right one matches 7.7 % (HowNet, ChnSentiCorp) to 36 % (WordNet, SemEval) of them."""
        if self.token_share >= below:
            return None
        return (f"knowledge graph {kg} matched {100 * self.share:.1f} % of the sentences and "
                f"{100 * self.token_share:.1f} % of their tokens: is it the right language for this text?")


class Part(NamedTuple):
    """One part of an input written out for :meth:`TreeCore.build_parts`: a text, or a tag (one
    trunk token, the vocabulary entry ``text``), with the K-Query of a text (:data:`QUERIES`)."""

    text: str
    tag: bool = False
    query: str = "all"


class _Template(NamedTuple):
    """The parts an input is written out in: ``[CLS]? a`` or ``[CLS]? a [SEP] b [SEP]``."""

    names: list[str]  # [k] the tag, or "a" / "b" for a text
    kind: np.ndarray  # [k] _TEXT_A, _TEXT_B or _TAG
    seg: np.ndarray  # [k] segment: 1 from text b on


class _Layout(NamedTuple):
    """All inputs written out and laid end to end (step 1)."""

    string: str  # every input's ``[CLS]a[SEP]b[SEP]``, end to end
    codes: np.ndarray  # [C] its code points
    input_start: np.ndarray  # [n + 1] where each input starts
    part_start: np.ndarray  # [parts + 1] where each part starts
    char_kind: np.ndarray  # [C] the kind of each character's part
    char_seg: np.ndarray  # [C] its segment
    char_input: np.ndarray  # [C] its input
    char_stop: np.ndarray  # [C] the end of its part
    origin: np.ndarray  # [C] its offset in its own text, -1 inside an added tag
    text_parts: np.ndarray  # the parts that are texts, in order
    tag_parts: np.ndarray  # the parts that are tags, in order
    tag_names: list[str]  # the tag of each of them
    part_query: np.ndarray | None  # [parts] K-Query of each part (an index of QUERIES); None: every match


class _Spans(NamedTuple):
    """Character spans ``[start, end)`` in the layout, with their strings."""

    start: np.ndarray
    end: np.ndarray
    text: list[str]


class _Trunk(NamedTuple):
    """The trunk tokens of all inputs (step 3)."""

    char: np.ndarray  # [T] the (first) character of each token in the layout
    input: np.ndarray  # [T] its input
    ptr: np.ndarray  # [n + 1] the first trunk token of each input
    ordinal: np.ndarray  # [T] its rank in its input's trunk: its position
    ids: np.ndarray  # [T] vocabulary ids
    seg: np.ndarray  # [T] segments
    chars_before: np.ndarray  # [C + 1] trunk tokens before each character of the layout
    text: np.ndarray | None = None  # [T] each token as written (word-piece mode, for ``keep_text``)


class _Values(NamedTuple):
    """The values injected on one subject."""

    lengths: np.ndarray  # [V] tokens of each value
    ids: np.ndarray  # [sum] their token ids
    texts: list[str]  # [V] the values
    chars: list[str]  # [sum] their tokens (characters or word pieces)
    objects: list[str]  # [V] each value's object alone (what a selection scores)

    def taken(self, keep: np.ndarray) -> _Values | None:
        """The values where ``keep`` is set (``None`` if none)."""
        if keep.all():
            return self
        if not keep.any():
            return None
        ptrs = ptr(self.lengths)
        tokens = np.concatenate([np.arange(ptrs[v], ptrs[v + 1]) for v in keep.nonzero()[0].tolist()])
        pick = keep.nonzero()[0].tolist()
        return _Values(self.lengths[keep], self.ids[tokens], [self.texts[v] for v in pick],
                       [self.chars[t] for t in tokens.tolist()], [self.objects[v] for v in pick])


class _Words(NamedTuple):
    """The queried words that carry values, in layout order (step 4)."""

    input: np.ndarray  # [W] input of each word
    first: np.ndarray  # [W] its first trunk token (a global trunk index)
    end: np.ndarray  # [W] one past its last trunk token
    hang: np.ndarray  # [W] the trunk token its branches go before (end, or past the hang_after tags there)
    span: np.ndarray  # [W, 2] its character offsets in its own text
    subject: list[str]  # [W] the KG subject
    values: list[_Values]  # [W] its values
    width: np.ndarray  # [W] its branch tokens
    ptr: np.ndarray  # [n + 1] the first word of each input


class _Branches(NamedTuple):
    """The values (entities) of all words and their tokens."""

    word_ptr: np.ndarray  # [W + 1] the first value of each word
    value_word: np.ndarray  # [V] the word of each value
    value_input: np.ndarray  # [V] its input
    value_length: np.ndarray  # [V] its tokens
    value_ptr: np.ndarray  # [n + 1] the first value of each input
    token_value: np.ndarray  # [B] the value of each branch token
    token_offset: np.ndarray  # [B] its offset in the value (from 0)
    token_ids: np.ndarray  # [B] its vocabulary id


class _Placed(NamedTuple):
    """Indices in each input's flattened tree, before the cut (step 4)."""

    trunk: np.ndarray  # [T] each trunk token
    word: np.ndarray  # [W] each word's first branch token
    value: np.ndarray  # [V] each value's first token
    branch: np.ndarray  # [B] each branch token


class _Kept(NamedTuple):
    """What survives the cut (step 5): indices into the arrays before it."""

    size: np.ndarray  # [n] tokens of each input
    trunk: np.ndarray  # kept trunk tokens
    word: np.ndarray  # kept words
    value: np.ndarray  # kept values
    branch: np.ndarray  # kept branch tokens
    trunk_dest: np.ndarray  # where each kept trunk token goes in the token table of all inputs
    branch_dest: np.ndarray  # where each kept branch token goes


__all__ = ["ANCHOR_EDGE", "CLS", "EDGE_TYPES", "ENTITY_EDGE", "IGNORE_INDEX", "MIN_TOKEN_SHARE", "NODE_TYPES",
           "QUERIES", "SEP", "SPECIAL_TAGS", "WORD_EDGE", "Coverage", "Part", "Trees"]
