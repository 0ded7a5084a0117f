"""A full disk during a run, said in one line: which file, how much it needed, how much is
free, that the last good checkpoint is kept, and how to go on (:class:`DiskFull`)."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from graphmatch.engine.runs import RunError


def human(size: float) -> str:
    """``1536`` → ``'1.5 KB'`` (powers of 1024)."""
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def free_bytes(folder: Path) -> int | None:
    """Free space where ``folder`` (or the nearest folder above it that exists) lives."""
    place = folder
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        return shutil.disk_usage(place).free
    except OSError:
        return None


def resume_folder(folder: Path) -> Path:
    """The folder ``--resume`` takes for the run folder ``folder``: itself, or the base folder of
    a several-seed run."""
    return folder.parent if (folder.parent / "seeds.json").is_file() else folder


class DiskFull(RunError):
    """The disk filled up while a run wrote ``path``; what is already there is kept."""

    def __init__(self, path: Path, needed: int | None, free: int | None, run_dir: Path | None = None):
        self.path, self.needed, self.free = Path(path), needed, free
        self.run_dir = Path(run_dir) if run_dir is not None else self.path.parent
        super().__init__(str(self))

    def __str__(self) -> str:
        run = resume_folder(self.run_dir)
        need = f"about {human(self.needed)}" if self.needed is not None else "more space"
        free = f"{human(self.free)} free" if self.free is not None else "the free space unknown"
        last = run / "last.ckpt" if (run / "last.ckpt").is_file() else None
        kept = (f"the last good checkpoint {last} is kept" if last is not None
                else "no checkpoint had been saved yet")
        what = f"the results into {self.path}" if self.path.is_dir() else str(self.path)
        return (f"no space left on the disk while writing {what}: it needs {need}, {free} on that disk; "
                f"{kept}; free some space, then continue with: graphmatch train --resume {run}")


def is_disk_full(err: BaseException) -> bool:
    return isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT)


@contextlib.contextmanager
def disk_full_said(path: str | os.PathLike, needed: Callable[[], int | None] = lambda: None,
                   run_dir: str | os.PathLike | None = None) -> Iterator[None]:
    """Turn ENOSPC (or a full quota) while the block writes ``path`` (a file of the run folder
    ``run_dir``, by default the file's folder) into :class:`DiskFull`; ``needed`` estimates the
    bytes the file needs (called only then)."""
    try:
        yield
    except OSError as err:
        if not is_disk_full(err):
            raise
        path = Path(path)
        raise DiskFull(path, needed(), free_bytes(path.parent), None if run_dir is None else Path(run_dir)) from err
