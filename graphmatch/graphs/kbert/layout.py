"""Step 1 of the core: inputs written out as parts and laid end to end as one array of code
points (:class:`~graphmatch.graphs.kbert.records.Layout`)."""

from __future__ import annotations

import numpy as np

from graphmatch.graphs.kbert.records import (
    _TAG,
    _Layout,
    _Spans,
    _Template,
    _Trunk,
)
from graphmatch.utils.ragged_np import ptr


def _template(parts: list[tuple[str, int, int]]) -> _Template:
    """A :class:`_Template` from ``(name, kind, segment)`` of each part."""
    return _Template([name for name, _, _ in parts], np.array([kind for _, kind, _ in parts]),
                     np.array([seg for _, _, seg in parts]))


def _written(parts: list[str], kind: np.ndarray, seg: np.ndarray, part_input: np.ndarray, n: int,
             query: np.ndarray | None = None) -> _Layout:
    """The :class:`_Layout` of ``n`` inputs written out as ``parts`` (strings, in order), with the
    kind, segment and input of each part (and its K-Query)."""
    part_len = np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))
    part_start = ptr(part_len)
    string = "".join(parts)
    codes = np.frombuffer(string.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    char_part = np.arange(len(parts)).repeat(part_len)
    char_kind = kind[char_part]
    origin = np.arange(len(codes)) - part_start[char_part]
    origin[char_kind == _TAG] = -1
    tag_parts = (kind == _TAG).nonzero()[0]
    return _Layout(string, codes, part_start[part_input.searchsorted(np.arange(n + 1))], part_start, char_kind,
                   seg[char_part], part_input[char_part], part_start[char_part + 1], origin,
                   (kind != _TAG).nonzero()[0], tag_parts, [parts[i] for i in tag_parts.tolist()], query)


def _ordinals(layout: _Layout, char: np.ndarray, chars_before: np.ndarray) -> tuple[np.ndarray, ...]:
    """The input of trunk tokens starting at ``char``, each input's first token and each token's
    rank in its input (its position)."""
    token_ptr = chars_before[layout.input_start]
    token_input = layout.char_input[char]
    return token_input, token_ptr, np.arange(len(char)) - token_ptr[token_input]



def _trunk_text(layout: _Layout, trunk: _Trunk, specials: _Spans) -> np.ndarray:
    """The string of every trunk token as written: its character, or a special tag's text whole."""
    if trunk.text is not None:
        return trunk.text
    char_text = np.array(list(layout.string), dtype=object)
    char_text[specials.start] = specials.text
    return char_text[trunk.char]


__all__ = []
