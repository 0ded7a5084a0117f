"""An exclusive advisory lock on a path, for processes that must take turns (POSIX ``flock``;
elsewhere nothing is locked)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def held(path: str | os.PathLike) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (a folder, or a file made if missing) until the block ends;
    another process asking for it waits."""
    if fcntl is None:  # pragma: no cover
        yield
        return
    fd = os.open(path, os.O_RDONLY if Path(path).is_dir() else os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


__all__ = ["held"]
