r"""K-BERT sentence trees as heterogeneous graphs.

From `"K-BERT: Enabling Language Representation with Knowledge Graph"
<https://arxiv.org/abs/1909.07606>`_ (Liu et al., AAAI 2020). K-Query finds the words of a
sentence that are subjects of a knowledge graph; K-Inject hangs up to ``max_entities`` of their
values (branches) right after them. The flattened tree is one token sequence:

.. code-block:: text

    data["token"].input_ids  [L] long   trunk characters and branch characters, in K-BERT order
    data["token"].pos        [L] long   soft positions
    data["token"].seg        [L] long   0 for text a ([CLS], first [SEP]), 1 for text b (final [SEP])
    data["token"].branch     [L] bool   True for injected (branch) tokens
    data["token"].char_index [L] long   offset of the token's character in its own text (a or b),
                                        -1 for branch tokens and added [CLS]/[SEP]
    data["token"].y          [L] long   NER tag ids (only with ``tags``), -100 where none applies
    data["word"].span        [W, 2]     (start, end) character offsets of each word that got a branch
    data["entity"].length    [E] long   one node per injected branch: its tokens kept after the cut
    ("token", "in", "word")             trunk token -> its word
    ("token", "in", "entity")           branch token -> its branch
    ("entity", "on", "word")            branch -> the word it hangs on
    data.y                   [1] long   the label, when given

Soft positions number the trunk :math:`0, 1, 2, \dots` as if no branch existed; the
:math:`k`-th character of a branch on a word whose last character has position :math:`p`
gets :math:`p + k` (siblings reuse the same positions). Visibility follows from the edges:

.. math::
    V_{ij} = \begin{cases}
        1 & i, j \text{ trunk} \\
        1 & i, j \text{ in the same branch} \\
        1 & \text{one is in a branch } b \text{, the other a trunk token of the word } b
            \text{ hangs on} \\
        0 & \text{otherwise.}
    \end{cases}

``input_ids``, ``pos``, ``seg`` and ``char_index`` are rows of one ``[4, L]`` tensor. Default
mode runs K-Query on :func:`fold` of the text (lowercase, NFKC: ``ＤＶＤ`` finds ``dvd``).

What is stored per sample is :math:`O(L)`; :func:`visibility_mask` expands a batch into the
dense ``[B, L, L]`` mask on the batch's device, :func:`visible_edge_index` lists the
``(token, sees, token)`` pairs. The whole tree is built first and then cut to
``max_length``; a branch may be cut in the middle and nothing is put back.

``mode="reference"`` reproduces the official knowledge layer (``brain/knowgraph.py`` driven
by ``run_kbert_cls.py``) token for token; ``mode="default"`` fixes what it gets wrong. Every
difference is listed in ``docs/kbert_reference.md``.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import HeteroData

from graphmatch.knowledge import KnowledgeGraph, Trie
from graphmatch.ragged import group_pairs
from graphmatch.text import CharTokenizer, Span, get_segmenter

#: the tags K-BERT's reference never splits (``brain/config.py: NEVER_SPLIT_TAG``)
SPECIAL_TAGS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[ENT]", "[SUB]", "[PRE]", "[OBJ]")
CLS, SEP = "[CLS]", "[SEP]"
WORD_EDGE = ("token", "in", "word")
ENTITY_EDGE = ("token", "in", "entity")
ANCHOR_EDGE = ("entity", "on", "word")
IGNORE_INDEX = -100
_BRANCH = -2  # char_index marker of branch tokens while assembling
_PIECE = re.compile(r"\S+")  # \S is exactly ``not str.isspace()``, the rule of ``str.split()``


class _IdCache(dict):
    """``char -> vocabulary id`` memo; whitespace maps to -1 so it can be dropped in bulk."""

    def __init__(self, lookup: Any, drop_space: bool):
        super().__init__()
        self._lookup = lookup
        self._drop_space = drop_space

    def __missing__(self, ch: str) -> int:
        value = -1 if self._drop_space and ch.isspace() else self._lookup(ch)
        self[ch] = value
        return value


class _Fold(dict):
    """``str.translate`` table, memoised: lowercase and full-width -> half-width, one character
    for one character (a form of another length is left alone, so offsets stay valid)."""

    def __missing__(self, code: int) -> int:
        ch = chr(code)
        folded = unicodedata.normalize("NFKC", ch).lower()
        if len(folded) != 1:
            folded = ch.lower() if len(ch.lower()) == 1 else ch
        self[code] = ord(folded)
        return self[code]


_FOLD = _Fold()


def fold(text: str) -> str:
    """``text`` in NFKC form (full-width -> half-width) and lowercase, character for character:
    a character whose folded form is longer stays as it is, so offsets do not move. Default mode
    runs K-Query on this form (``ＤＶＤ播放机`` finds ``dvd播放机``)."""
    return text.translate(_FOLD)


class _Branches(NamedTuple):
    """The values injected on one subject."""

    block: np.ndarray  # [4, B]: ids, position offsets 1..len per value, segment (0), _BRANCH
    lengths: list[int]  # characters of each value
    chars: list[str]  # [B] the characters
    values: list[str]  # the value strings


class _Trunk(NamedTuple):
    """The trunk of one input before branches are hung."""

    ids: np.ndarray  # [T] vocabulary ids
    char_index: np.ndarray  # [T] offset in its own text, -1 for an added tag
    seg: np.ndarray  # [T] segment
    text: list[str] | None  # [T] token strings (keep_text)
    words: list[tuple[int, int, int, int, str]]  # (first ordinal, end ordinal, char start, char end, subject)


class SentenceTreeBuilder:
    r"""Builds the K-BERT sentence tree of a text (or a text pair) as a :class:`HeteroData`.

    Args:
        kg (KnowledgeGraph, optional): the knowledge graph; ``None`` gives plain BERT input.
        tokenizer (CharTokenizer): the character vocabulary.
        max_length (int, optional): the tree is built in full, then cut to this many tokens.
            (default: :obj:`256`)
        max_entities (int, optional): values injected per word, the first ones in file order.
            (default: :obj:`2`)
        predicate (bool, optional): a value is predicate + object glued (K-BERT's classification
            input); :obj:`False` gives the object alone (its NER input). (default: :obj:`True`)
        mode (str, optional): ``"default"`` or ``"reference"`` (the official knowledge layer,
            quirks included; see ``docs/kbert_reference.md``). (default: :obj:`"default"`)
        query (str, optional): K-Query by a greedy longest-match ``"trie"`` scan over the KG
            subjects, or by the ``"words"`` of :obj:`segmenter`. (default: :obj:`"trie"`)
        segmenter (str, optional): segmenter name for ``query="words"``. (default: :obj:`"jieba"`)
        add_cls (bool, optional): start with ``[CLS]`` (the NER reference has none).
            (default: :obj:`True`)
        tag_to_id (Mapping[str, int], optional): NER tag ids, needed to pass ``tags``.
        keep_text (bool, optional): store ``text`` lists on every node type (for inspection).
            (default: :obj:`False`)
    """

    def __init__(
        self,
        kg: KnowledgeGraph | None,
        tokenizer: CharTokenizer,
        max_length: int = 256,
        max_entities: int = 2,
        predicate: bool = True,
        mode: str = "default",
        query: str = "trie",
        segmenter: str = "jieba",
        add_cls: bool = True,
        tag_to_id: Mapping[str, int] | None = None,
        keep_text: bool = False,
    ):
        if mode not in ("default", "reference"):
            raise ValueError(f"mode must be 'default' or 'reference', got {mode!r}")
        if query not in ("trie", "words"):
            raise ValueError(f"query must be 'trie' or 'words', got {query!r}")
        if mode == "reference" and query != "trie":
            raise ValueError("mode='reference' queries by the reference's own trie scan; use query='trie'")
        if max_length < 1:
            raise ValueError(f"max_length must be at least 1, got {max_length}")
        if max_entities < 0:
            raise ValueError(f"max_entities must be >= 0, got {max_entities}")
        self.kg = kg
        self.tokenizer = tokenizer
        self.max_length = max_length
        self.max_entities = max_entities
        self.predicate = predicate
        self.mode = mode
        self.query = query
        self.segmenter = segmenter
        self.add_cls = add_cls
        self.tag_to_id = dict(tag_to_id) if tag_to_id is not None else None
        self.keep_text = keep_text
        reference = mode == "reference"
        lookup = tokenizer.exact_id if reference else tokenizer.token_to_id
        self._ids = _IdCache(lookup, drop_space=not reference)
        self._values: dict[str, _Branches | None] = {}
        self._scan_trie: Trie | None = None
        if reference:  # pkuseg's user dictionary: every subject (stripped) and the special tags
            subjects = (s.strip() for s in kg.subjects) if kg is not None else ()
            self._scan_trie = Trie(chain(subjects, SPECIAL_TAGS))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(mode={self.mode!r}, query={self.query!r}, max_length={self.max_length}, "
                f"max_entities={self.max_entities}, predicate={self.predicate}, kg={self.kg is not None})")

    # ------------------------------------------------------------------ public
    def __call__(
        self,
        text_a: str,
        text_b: str | None = None,
        label: int | None = None,
        tags: Sequence[str] | None = None,
    ) -> HeteroData:
        """The sentence tree of ``text_a`` (and ``text_b``) as a graph.

        Args:
            text_a (str): the text; whitespace gives no token and no position.
            text_b (str, optional): the second text of a pair.
            label (int, optional): stored as ``data.y``.
            tags (Sequence[str], optional): NER tags, one per character of ``text_a``
                (whitespace included); stored as ``data["token"].y``.

        Raises :class:`ValueError` for an empty (or whitespace-only) text, and for ``tags``
        without ``tag_to_id``, with a pair, of the wrong length or with an unknown tag.
        """
        self.check(text_a, text_b, tags)
        trunk = self._reference_trunk(text_a, text_b) if self.mode == "reference" else self._trunk(text_a, text_b)
        tag_ids = None
        if tags is not None:
            tag_ids = np.fromiter(map(self.tag_to_id.__getitem__, tags), dtype=np.int64, count=len(tags))
        return self._assemble(trunk, label, tag_ids)

    def check(self, text_a: str, text_b: str | None = None, tags: Sequence[str] | None = None) -> None:
        """Raise :class:`TypeError` / :class:`ValueError` for an input :meth:`__call__` refuses."""
        for name, text in (("text_a", text_a), ("text_b", text_b)):
            if text is not None and not isinstance(text, str):
                raise TypeError(f"{name} must be a str, got {type(text).__name__}")
            if text is not None and not text.strip():
                raise ValueError(f"empty text ({name})")
        if tags is None:
            return
        if self.tag_to_id is None:
            raise ValueError("tags given but the builder has no tag_to_id")
        if text_b is not None:
            raise ValueError("tags apply to a single text, not to a pair")
        if len(tags) != len(text_a):
            raise ValueError(f"{len(tags)} tags for {len(text_a)} characters")
        unknown = sorted({t for t in tags if t not in self.tag_to_id})
        if unknown:
            raise ValueError(f"unknown tag(s) {unknown}; known: {sorted(self.tag_to_id)}")

    # ------------------------------------------------------------------ trunk
    def _query(self, text: str) -> list[Span]:
        text = fold(text)  # so that ``DVD播放机`` finds the subject ``dvd播放机``
        if self.query == "trie":
            return self.kg.longest_matches(text)
        return self.kg.query(get_segmenter(self.segmenter).segment(text))

    def _trunk(self, text_a: str, text_b: str | None) -> _Trunk:
        """Default mode: [CLS]/[SEP] are tokens added here; each text is queried on its own."""
        tok = self.tokenizer
        texts = [text_a] if text_b is None else [text_a, text_b]
        chunks: list[Any] = [(tok.cls_id,)] if self.add_cls else []
        starts = []
        size = len(chunks)
        for text in texts:
            starts.append(size)
            chunks.append(map(self._ids.__getitem__, text))
            size += len(text)
            if text_b is not None:
                chunks.append((tok.sep_id,))
                size += 1
        raw = np.fromiter(chain.from_iterable(chunks), dtype=np.int64, count=size)
        keep = np.flatnonzero(raw >= 0)  # whitespace maps to -1
        if text_b is None:
            char_index = keep - starts[0]  # [CLS] at -1
            seg = np.zeros(len(keep), dtype=np.int64)
        else:
            full = np.concatenate([np.full(starts[0], -1), np.arange(len(text_a)), [-1],
                                   np.arange(len(text_b)), [-1]])
            char_index = full[keep]
            seg = (keep > starts[0] + len(text_a)).astype(np.int64)  # the first [SEP] is in segment 0
        words = []
        if self.kg is not None and self.max_entities > 0:
            whole = len(keep) == size
            for start, text in zip(starts, texts, strict=True):
                for span in self._query(text):
                    if self._branches(span.word) is None:
                        continue
                    first, end = start + span.start, start + span.end
                    if not whole:
                        first, end = np.searchsorted(keep, (first, end)).tolist()
                    if end > first:
                        words.append((first, end, span.start, span.end, span.word))
        text = None
        if self.keep_text:
            marks = ([CLS] if self.add_cls else []) + list(text_a) + ([] if text_b is None else [SEP, *text_b, SEP])
            text = [marks[i] for i in keep.tolist()]
        return _Trunk(raw[keep], char_index, seg, text, words)

    def _reference_trunk(self, text_a: str, text_b: str | None) -> _Trunk:
        """Reference mode: glue ``[CLS]a[SEP]b[SEP]`` as text and scan it like pkuseg's user dictionary."""
        parts: list[tuple[str, bool]] = [(text_a, True)]
        if text_b is not None:
            parts += [(SEP, False), (text_b, True), (SEP, False)]
        if self.add_cls:
            parts.insert(0, (CLS, False))
        glued = "".join(p for p, _ in parts)
        # for every character of the glued string: its offset in its own text, -1 inside a glued tag
        origin = np.concatenate([np.arange(len(p)) if is_text else np.full(len(p), -1) for p, is_text in parts])
        # strip() + split() as pkuseg does, then its forced-word scan of each piece
        tokens: list[str] = []
        starts: list[int] = []
        found = []
        trie = self._scan_trie
        inject = self.kg is not None and self.max_entities > 0
        for match in _PIECE.finditer(glued):
            piece, p0 = match.group(), match.start()
            n = len(piece)
            last = i = 0
            while i < n:
                ends, reached = trie.walk(piece, i)
                if not ends:
                    i += 1
                    continue
                # the forced word: everything walked, unless the piece ran out (then the last word)
                j = ends[-1] if reached == n else reached
                tokens.extend(piece[last:i])
                starts.extend(range(p0 + last, p0 + i))
                word = piece[i:j]
                first = len(tokens)
                if word in SPECIAL_TAGS:
                    tokens.append(word)
                    starts.append(p0 + i)
                else:
                    tokens.extend(word)
                    starts.extend(range(p0 + i, p0 + j))
                if inject and self._branches(word) is not None:
                    found.append((first, len(tokens), p0 + i, p0 + j, word))
                last = i = j
            tokens.extend(piece[last:n])
            starts.extend(range(p0 + last, p0 + n))
        ids = np.fromiter(map(self._ids.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        if text_b is None:
            seg = np.zeros(len(tokens), dtype=np.int64)
        else:  # run_kbert_cls's mask counter (1, then +1 after each [SEP]) minus 1, clipped to 1
            is_sep = np.fromiter((t == SEP for t in tokens), dtype=bool, count=len(tokens))
            seg = np.minimum(np.cumsum(is_sep) - is_sep, 1)
        # glued-string offsets -> offsets in each word's own text
        words = [(f, e, int(origin[a]), int(origin[a]) + (b - a), w) for f, e, a, b, w in found]
        return _Trunk(ids, origin[np.asarray(starts, dtype=np.int64)], seg, tokens if self.keep_text else None, words)

    def _branches(self, subject: str) -> _Branches | None:
        """The values injected on ``subject`` as a ``[4, B]`` block (memoised), ``None`` if none."""
        if subject in self._values:
            return self._values[subject]
        result = None
        values = self.kg.values(subject, self.max_entities, self.predicate) if subject in self.kg else []
        kept = [[ch for ch in value if self._ids[ch] >= 0] for value in values]
        values = [v for v, chars in zip(values, kept, strict=True) if chars]
        kept = [chars for chars in kept if chars]
        if kept:
            chars = list(chain.from_iterable(kept))
            block = np.empty((4, len(chars)), dtype=np.int64)
            block[0] = [self._ids[ch] for ch in chars]
            block[1] = [k for v in kept for k in range(1, len(v) + 1)]  # offset from the word's last position
            block[2] = 0  # segment, set per use
            block[3] = _BRANCH  # char_index marker of branch tokens
            result = _Branches(block, [len(v) for v in kept], chars, values)
        self._values[subject] = result
        return result

    # --------------------------------------------------------------- assemble
    def _assemble(self, trunk: _Trunk, label: int | None, tag_ids: np.ndarray | None) -> HeteroData:
        """Hang the branches after their words, number positions, cut to ``max_length``."""
        limit = self.max_length
        n_trunk = len(trunk.ids)
        rows = np.empty((4, n_trunk), dtype=np.int64)  # input_ids, pos, seg, char_index
        rows[0] = trunk.ids
        rows[1] = np.arange(n_trunk)
        rows[2] = trunk.seg
        rows[3] = trunk.char_index
        word_edge: tuple[list[int], list[int]] = ([], [])
        entity_edge: tuple[list[int], list[int]] = ([], [])
        anchor_edge: tuple[list[int], list[int]] = ([], [])
        spans: list[tuple[int, int]] = []
        pieces, texts, entity_text = [], [], []
        prev = shift = 0  # trunk tokens placed so far, branch tokens inserted so far
        for w, (first, end, c_start, c_end, subject) in enumerate(trunk.words):
            start = end + shift  # final index of the word's first branch token
            if start >= limit:  # this word's branches and everything after are cut
                break
            branches = self._values[subject]
            block = branches.block.copy()
            block[1] += end - 1  # the position of the word's last character
            block[2] = trunk.seg[end - 1]
            pieces += [rows[:, prev:end], block]
            if trunk.text is not None:
                texts += [trunk.text[prev:end], branches.chars]
            spans.append((c_start, c_end))
            word_edge[0].extend(range(first + shift, end + shift))
            word_edge[1].extend([w] * (end - first))
            for length, value in zip(branches.lengths, branches.values, strict=True):
                if start >= limit:
                    break
                stop = min(start + length, limit)
                entity = len(anchor_edge[0])
                entity_edge[0].extend(range(start, stop))
                entity_edge[1].extend([entity] * (stop - start))
                anchor_edge[0].append(entity)
                anchor_edge[1].append(w)
                entity_text.append(value)
                start += length
            shift += block.shape[1]
            prev = end
        if pieces:
            pieces.append(rows[:, prev:])
            table = np.concatenate(pieces, axis=1)[:, :limit]
        else:
            table = rows[:, :limit]
        table = np.ascontiguousarray(table)
        length = table.shape[1]
        branch = table[3] == _BRANCH
        table[3, branch] = -1
        columns = torch.from_numpy(table)
        token: dict[str, Any] = {"input_ids": columns[0], "pos": columns[1], "seg": columns[2],
                                 "branch": torch.from_numpy(branch), "char_index": columns[3], "num_nodes": length}
        if tag_ids is not None:
            y = np.full(length, IGNORE_INDEX, dtype=np.int64)
            real = table[3] >= 0
            y[real] = tag_ids[table[3, real]]
            token["y"] = torch.from_numpy(y)
        word: dict[str, Any] = {"span": torch.from_numpy(np.array(spans, dtype=np.int64).reshape(-1, 2)),
                                "num_nodes": len(spans)}
        # each branch's kept token count (a branch can be cut): also gives PyG an attribute to
        # separate this node type by when a dataset is collated
        kept = np.bincount(np.asarray(entity_edge[1], dtype=np.int64), minlength=len(entity_text))
        entity: dict[str, Any] = {"length": torch.from_numpy(kept), "num_nodes": len(entity_text)}
        if trunk.text is not None:
            texts.append(trunk.text[prev:])
            token["text"] = list(chain.from_iterable(texts))[:limit]
            word["text"] = [w[4] for w in trunk.words[: len(spans)]]
            entity["text"] = entity_text
        graph = {"token": token, "word": word, "entity": entity}
        for key, pairs in ((WORD_EDGE, word_edge), (ENTITY_EDGE, entity_edge), (ANCHOR_EDGE, anchor_edge)):
            graph[key] = {"edge_index": torch.from_numpy(np.array(pairs, dtype=np.int64).reshape(2, -1))}
        return _new_graph(graph, {"y": torch.tensor([int(label)])} if label is not None else {})


def _template() -> HeteroData:
    """An empty graph with every node and edge type of a sentence tree."""
    data = HeteroData()
    for key in ("token", "word", "entity", WORD_EDGE, ENTITY_EDGE, ANCHOR_EDGE):
        _ = data[key]  # creates the storage
    return data


_TEMPLATE = _template()


def _new_graph(stores: dict[Any, dict[str, Any]], graph_attrs: dict[str, Any]) -> HeteroData:
    """A graph shaped like ``_TEMPLATE`` whose storages hold the given mappings.

    This is what ``copy.copy(_TEMPLATE)`` followed by filling each storage does, without the
    per-attribute ``setattr`` bookkeeping that makes up most of the cost of a small graph.
    """
    data = HeteroData.__new__(HeteroData)
    data.__dict__.update(_TEMPLATE.__dict__)
    parent = weakref.ref(data)
    for name in ("_node_store_dict", "_edge_store_dict"):
        fresh = {}
        for key, template in _TEMPLATE.__dict__[name].items():
            store = template.__class__.__new__(template.__class__)
            store.__dict__.update(template.__dict__)
            store.__dict__["_parent"] = parent
            store.__dict__["_mapping"] = stores[key]
            fresh[key] = store
        data.__dict__[name] = fresh
    glob = _TEMPLATE._global_store
    store = glob.__class__.__new__(glob.__class__)
    store.__dict__.update(glob.__dict__)
    store.__dict__["_parent"] = parent
    store.__dict__["_mapping"] = graph_attrs
    data.__dict__["_global_store"] = store
    return data


# ---------------------------------------------------------------- batch-level
def _token_layout(data: HeteroData) -> tuple[Tensor, Tensor, Tensor, int]:
    """Graph index and position inside its graph of every token, the graphs' first-token
    offsets ``ptr`` ``[B + 1]`` and the longest graph's length."""
    store = data["token"]
    n = store.num_nodes
    device = store.input_ids.device
    batch = getattr(store, "batch", None)
    if batch is None:
        return (torch.zeros(n, dtype=torch.long, device=device), torch.arange(n, device=device),
                torch.tensor([0, n], device=device), n)
    ptr = store.ptr
    sizes = ptr[1:] - ptr[:-1]
    return batch, torch.arange(n, device=device) - ptr[batch], ptr, int(sizes.max()) if len(sizes) else 0


def visibility_mask(batch: HeteroData) -> tuple[Tensor, Tensor]:
    r"""Expand sentence trees into the dense visibility mask, on the batch's device.

    Trunk tokens see each other (one outer product); the branch links are few and are set
    from the ``(token, in, entity)``, ``(token, in, word)`` and ``(entity, on, word)`` edges.

    Args:
        batch (HeteroData): one graph or a PyG batch of K-BERT sentence trees.

    Returns:
        ``(visible [B, L, L] bool, token_mask [B, L] bool)``; padding rows and columns are all
        :obj:`False`, real tokens always see themselves.
    """
    graph, local, ptr, length = _token_layout(batch)
    num_graphs = len(ptr) - 1
    tok = batch["token"]
    device = tok.input_ids.device
    real = torch.zeros(num_graphs, length, dtype=torch.bool, device=device)
    real[graph, local] = True
    trunk = torch.zeros(num_graphs, length, dtype=torch.uint8, device=device)
    trunk[graph, local] = (~tok.branch).to(torch.uint8)
    # a uint8 product viewed as bool: the same 0/1 cells, many times faster than a bool "&" on CPU
    visible = (trunk.unsqueeze(2) * trunk.unsqueeze(1)).view(torch.bool)
    ent_edge = batch[ENTITY_EDGE].edge_index
    if ent_edge.numel():
        word_edge = batch[WORD_EDGE].edge_index
        anchor = batch[ANCHOR_EDGE].edge_index
        num_entities = batch["entity"].num_nodes
        num_words = batch["word"].num_nodes
        word_of = torch.full((num_entities,), -1, dtype=torch.long, device=device)
        word_of[anchor[0]] = anchor[1]
        src, dst = group_pairs(ent_edge[0], ent_edge[1], ent_edge[0], ent_edge[1], num_entities)
        wsrc, wdst = group_pairs(ent_edge[0], word_of[ent_edge[1]], word_edge[0], word_edge[1], num_words)
        rows = torch.cat([src, wsrc, wdst])
        cols = torch.cat([dst, wdst, wsrc])
        visible[graph[rows], local[rows], local[cols]] = True
    return visible, real


def dense_inputs(batch: HeteroData, pad_id: int = 0) -> dict[str, Tensor]:
    """Padded ``[B, L]`` inputs and the ``[B, L, L]`` visibility of a batch of sentence trees.

    Returns ``input_ids`` (padding ``pad_id``), ``pos``, ``seg`` (padding 0), ``branch``
    (padding :obj:`False`), ``char_index`` (padding -1), ``token_mask``, ``visible`` and, when
    the graphs carry NER tags, ``labels`` (padding -100).
    """
    graph, local, ptr, length = _token_layout(batch)
    num_graphs = len(ptr) - 1
    tok = batch["token"]
    columns = [tok.input_ids, tok.pos, tok.seg, tok.char_index, tok.branch.long()]
    fills = [pad_id, 0, 0, -1, 0]
    if "y" in tok:
        columns.append(tok.y)
        fills.append(IGNORE_INDEX)
    stacked = torch.stack(columns, dim=1)
    dense = torch.tensor(fills, dtype=torch.long, device=stacked.device).repeat(num_graphs, length, 1)
    dense[graph, local] = stacked
    visible, real = visibility_mask(batch)
    out = {"input_ids": dense[..., 0], "pos": dense[..., 1], "seg": dense[..., 2],
           "char_index": dense[..., 3], "branch": dense[..., 4].bool(), "token_mask": real, "visible": visible}
    if "y" in tok:
        out["labels"] = dense[..., 5]
    return out


def visible_edge_index(data: HeteroData) -> Tensor:
    """The ``(token, sees, token)`` pairs of one graph or a batch, as a ``[2, E]`` edge index
    over the (batched) token nodes, self-pairs included."""
    _, _, ptr, _ = _token_layout(data)
    visible, _ = visibility_mask(data)
    g, i, j = visible.nonzero(as_tuple=True)
    return torch.stack([ptr[g] + i, ptr[g] + j])


__all__ = ["SPECIAL_TAGS", "SentenceTreeBuilder", "fold", "dense_inputs", "visibility_mask", "visible_edge_index"]
