"""What a process reads from a file, kept by the file's content: a checkpoint's ``tokenizer.json``
(e5-small's is 17 MB, seconds to parse) is asked for several times by one command (a task, each
split of its data, a reloaded run with its own copy of the files), and hashing it takes milliseconds.

The :data:`KEEP` readings used last are kept; they are shared, so their readers must not change them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
KEEP = 8
_KEPT: dict[tuple[str, str], object] = {}  # (what, sha256 of the content) → reading, the last used last


def read_once(what: str, content: bytes, read: Callable[[], T]) -> T:
    """``read()``, or what it returned before for the same ``what`` and ``content`` (an error is
    raised again, not kept)."""
    key = (what, hashlib.sha256(content).hexdigest())
    if key not in _KEPT:
        found = read()
        if len(_KEPT) >= KEEP:
            _KEPT.pop(next(iter(_KEPT)))  # the one used longest ago
        _KEPT[key] = found
    _KEPT[key] = _KEPT.pop(key)  # now the last used
    return _KEPT[key]  # type: ignore[return-value]


__all__ = ["KEEP", "read_once"]
