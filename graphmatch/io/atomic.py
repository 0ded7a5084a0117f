"""Every file the project writes (caches, downloads, run folders, checkpoints) goes through
:func:`write_atomically`: complete under its real name, or not there at all."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path


def write_atomically(path: str | os.PathLike, content: Callable[[str], None] | str | bytes) -> None:
    """Write ``path`` so that it is either absent, its old self, or complete: never a partial file.

    ``content`` is the text (UTF-8) or bytes to write, or a function ``write(tmp)`` that writes the
    file at the path it is given. The file is written under a temporary name in the same folder
    (``.<name>.<random>.tmp``), flushed to disk (``fsync``) and renamed over ``path``; when the
    write fails the temporary file is removed and ``path`` is left as it was. Missing parent
    folders are made.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        if callable(content):
            content(str(tmp))
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        else:
            data = content.encode("utf-8") if isinstance(content, str) else content
            with open(tmp, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
