"""A slow, plain K-BERT sentence tree for one input, to check the vectorised core against.

Written from the paper and from the reference's observed behaviour
(``docs/kbert_reference.md``), not from ``graphmatch.graphs.kbert.core``: lists of token
records, a word by word walk, brute-force dictionary lookups and the visible matrix filled
cell by cell from its definition.
"""

from __future__ import annotations

import functools
import unicodedata
from dataclasses import dataclass, field

SPECIAL_TAGS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[ENT]", "[SUB]", "[PRE]", "[OBJ]")


@dataclass
class Token:
    text: str
    id: int
    pos: int
    seg: int
    char_index: int  # offset of its (first) character in its own text, -1 if none
    tag: int = -100  # NER tag id
    word: int | None = None  # for a trunk token: the word (with branches) it belongs to
    entity: int | None = None  # for a branch token: its value


@dataclass
class Unit:
    """A trunk word (or single character) and where it came from."""

    tokens: list[tuple[str, int, int]]  # (token text, char index, segment)
    subject: str | None = None  # the string looked up in the KG
    span: tuple[int, int] | None = None  # its character offsets in its own text
    values: list[str] = field(default_factory=list)


def fold_char(ch: str) -> str:
    """Lowercase and NFKC, one character for one character."""
    for form in (unicodedata.normalize("NFKC", ch).lower(), ch.lower()):
        if len(form) == 1:
            return form
    return ch


def longest_matches(text: str, subjects: set[str]) -> list[tuple[int, int]]:
    """Greedy left to right, the longest subject at each offset (brute force)."""
    out, i = [], 0
    while i < len(text):
        best = max((k for k in range(1, len(text) - i + 1) if text[i:i + k] in subjects), default=0)
        if best:
            out.append((i, i + best))
            i += best
        else:
            i += 1
    return out


def forced_words(piece: str, dictionary: frozenset[str]) -> list[tuple[int, int]]:
    """pkuseg's user-dictionary scan of one whitespace-free piece: from i, walk while the text
    read so far is a prefix of a dictionary word; if a whole word was passed, the forced word is
    everything walked, or up to the last whole word when the piece ran out."""
    prefixes = _prefixes(dictionary)
    out, i = [], 0
    while i < len(piece):
        j, last = i, None
        while j < len(piece) and piece[i:j + 1] in prefixes:
            j += 1
            if piece[i:j] in dictionary:
                last = j
        if last is None:
            i += 1
            continue
        end = last if j == len(piece) else j
        out.append((i, end))
        i = end
    return out


@functools.lru_cache(maxsize=4)
def _prefixes(dictionary: frozenset[str]) -> frozenset[str]:
    return frozenset(w[:k] for w in dictionary for k in range(1, len(w) + 1))


def _units_default(kg, text: str, seg: int, query: str, segmenter) -> list[Unit]:
    folded = "".join(fold_char(ch) for ch in text)
    if query == "trie":
        spans = longest_matches(folded, set(kg.subjects)) if kg is not None else []
    else:
        spans = [(w.start, w.end) for w in segmenter(folded) if w.word in kg.subjects] if kg is not None else []
    units, i = [], 0
    for start, end in spans + [(len(text), len(text))]:
        units += [Unit([(text[c], c, seg)]) for c in range(i, start) if not text[c].isspace()]
        if end > start:
            tokens = [(text[c], c, seg) for c in range(start, end) if not text[c].isspace()]
            units.append(Unit(tokens, folded[start:end], (start, end)))
        i = end
    return units


def _trunk_default(kg, text_a, text_b, add_cls, query, segmenter) -> list[Unit]:
    units = [Unit([("[CLS]", -1, 0)])] if add_cls else []
    units += _units_default(kg, text_a, 0, query, segmenter)
    if text_b is not None:
        units.append(Unit([("[SEP]", -1, 0)]))
        units += _units_default(kg, text_b, 1, query, segmenter)
        units.append(Unit([("[SEP]", -1, 1)]))
    return units


def _trunk_reference(kg, text_a, text_b, add_cls) -> list[Unit]:
    # the string the classification script hands the layer, and where each character came from
    pieces = [("[CLS]", None)] if add_cls else []
    pieces += [(text_a, "a")] if text_b is None else [(text_a, "a"), ("[SEP]", None), (text_b, "b"), ("[SEP]", None)]
    string = "".join(p for p, _ in pieces)
    origin = [c if kind else -1 for p, kind in pieces for c in range(len(p))]
    dictionary = frozenset({s.strip() for s in (kg.subjects if kg is not None else ())} | set(SPECIAL_TAGS)) - {""}
    units: list[Unit] = []
    i = 0
    while i < len(string):
        if string[i].isspace():
            i += 1
            continue
        j = i
        while j < len(string) and not string[j].isspace():
            j += 1
        piece = string[i:j]
        cursor = 0
        for start, end in forced_words(piece, dictionary) + [(len(piece), len(piece))]:
            units += [Unit([(piece[c], origin[i + c], 0)]) for c in range(cursor, start)]
            if end > start:
                word = piece[start:end]
                tokens = [(word, origin[i + start], 0)] if word in SPECIAL_TAGS else \
                    [(piece[c], origin[i + c], 0) for c in range(start, end)]
                o = origin[i + start]
                units.append(Unit(tokens, word, (o, o + end - start)))
            cursor = end
        i = j
    if text_b is not None:  # the script's mask counter: 1, then +1 after each [SEP] token; seg = mask - 1, <= 1
        seps = 0
        for unit in units:
            for k, (t, c, _) in enumerate(unit.tokens):
                unit.tokens[k] = (t, c, min(seps, 1))
                seps += t == "[SEP]"
    return units


def oracle_tree(kg, tokenizer, text_a, text_b=None, tags=None, *, max_length=256, max_entities=2,
                predicate=True, mode="default", query="trie", segmenter=None, add_cls=True, tag_to_id=None):
    """Tokens (:class:`Token`), word spans and subjects, entity values and lengths, and the
    visible matrix of one input's tree after the cut; also every queried word (a subject or not)."""
    reference = mode == "reference"
    if reference:
        units = _trunk_reference(kg, text_a, text_b, add_cls)
    else:
        units = _trunk_default(kg, text_a, text_b, add_cls, query, segmenter)
    lookup = tokenizer.exact_id if reference else tokenizer.token_to_id
    # K-Inject: the first max_entities values in file order, as characters
    for unit in units:
        if unit.subject is None or kg is None or unit.subject not in kg.subjects or not unit.tokens:
            continue
        for p, o in kg.subjects[unit.subject][:max_entities]:
            value = p + o if predicate else o
            if _value_chars(value, reference):  # a value with no token is no branch
                unit.values.append(value)
    # flatten: each unit's characters, then its values' characters
    tokens: list[Token] = []
    words, entities = [], []
    position = 0
    for unit in units:
        word = len(words) if unit.values else None
        for text, char_index, seg in unit.tokens:
            tag = tag_to_id[tags[char_index]] if tags is not None and char_index >= 0 else -100
            tokens.append(Token(text, lookup(text), position, seg, char_index, tag, word=word))
            position += 1
        if word is None:
            continue
        words.append((unit.span, unit.subject))
        last = position - 1
        for value in unit.values:
            for k, ch in enumerate(_value_chars(value, reference), 1):
                tokens.append(Token(ch, lookup(ch), last + k, unit.tokens[-1][2], -1, entity=len(entities)))
            entities.append((value, word))
    # the cut: entities keep their surviving tokens, words keep entities
    tokens = tokens[:max_length]
    kept_entities = sorted({t.entity for t in tokens if t.entity is not None})
    kept_words = sorted({entities[e][1] for e in kept_entities})
    assert kept_entities == list(range(len(kept_entities))) and kept_words == list(range(len(kept_words)))
    for t in tokens:
        if t.word is not None and t.word not in kept_words:
            t.word = None
    lengths = [sum(t.entity == e for t in tokens) for e in kept_entities]
    visible = [[_sees(a, b, entities) for b in tokens] for a in tokens]
    return {"tokens": tokens, "words": words[:len(kept_words)],
            "queried": [unit.subject for unit in units if unit.subject is not None],
            "entities": [(entities[e][0], entities[e][1], lengths[e]) for e in kept_entities], "visible": visible}


def _value_chars(value: str, reference: bool) -> list[str]:
    """The tokens of a value: every code point in the reference, whitespace dropped otherwise."""
    return list(value) if reference else [ch for ch in value if not ch.isspace()]


def _sees(a: Token, b: Token, entities) -> bool:
    if a.entity is None and b.entity is None:  # trunk sees trunk
        return True
    if a.entity is not None and b.entity is not None:  # a branch sees its own branch
        return a.entity == b.entity
    branch, trunk = (a, b) if a.entity is not None else (b, a)
    return trunk.word is not None and trunk.word == entities[branch.entity][1]  # ... and its word
