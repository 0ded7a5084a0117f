"""Processed caches are written atomically: an interrupted build never leaves a file that a
later run would take for a finished cache."""

from __future__ import annotations

import os
from collections.abc import Callable


def write_atomically(path: str, write: Callable[[str], None]) -> None:
    """Call ``write(tmp)`` on a temporary name beside ``path``, then rename it into place."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
