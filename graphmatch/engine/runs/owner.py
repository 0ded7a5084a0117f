"""One owner per run folder: a training claims its folder before it builds anything and gives
it back at the end, so that two trainings started at once on one ``--out`` never mix it.

The claim is the file :data:`OWNER_FILE` inside the folder, made by an exclusive create
(``O_CREAT | O_EXCL``: of two processes exactly one succeeds) and holding the owner's pid, host,
start time and, on Linux, the kernel's start tick of that pid (so that a reused pid is not taken
for the owner). A claim whose process is gone (same host, pid not running or not the same
process) is *stale*: it is what a killed run leaves, and the next training of the folder
(``--resume``) takes it over; taking over is serialised by an advisory lock on the folder, so two
resumers cannot both win. A claim from another host cannot be checked and is respected.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphmatch.engine.runs import RunError
from graphmatch.io.lock import held

#: the claim's file name inside a run folder (ignored when a folder's contents are judged)
OWNER_FILE = ".owner.lock"
#: how long a claim that cannot be read yet (its owner is writing it) is read again
_READ_WAIT_S = 1.0


class FolderInUse(RunError):
    """``run_dir`` is claimed by another training that is (or may be) still running."""

    def __init__(self, run_dir: Path, owner: dict[str, Any]):
        self.run_dir, self.owner = Path(run_dir), owner
        super().__init__(str(self))

    def __str__(self) -> str:
        o = self.owner
        who = f"pid {o.get('pid', '?')} on {o.get('host', '?')}, started {o.get('started', '?')}"
        if o.get("host") != socket.gethostname():
            hint = f"if that run is no longer running, remove {self.run_dir / OWNER_FILE}"
        else:
            hint = f"wait for it to finish, or choose another --out (it resumes with --resume {self.run_dir})"
        return f"run folder {self.run_dir} is in use by another training ({who}); {hint}"


def _start_tick(pid: int) -> int | None:
    """The kernel's start time of process ``pid`` in clock ticks since boot (Linux), else None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rpartition(")")[2].split()[19])  # field 22 of stat(5), after the command name


def _running(owner: dict[str, Any]) -> bool:
    """Whether the claim's process still runs (``True`` when that cannot be told: another host;
    ``False`` for a claim that says nothing: its owner died while writing it)."""
    if not owner:
        return False
    if owner.get("host") != socket.gethostname():
        return True
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it runs
        pass
    tick = owner.get("tick")
    return tick is None or _start_tick(pid) in (None, tick)  # a reused pid is another process


def me() -> dict[str, Any]:
    """This process as a claim records it."""
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "started": dt.datetime.now().astimezone().isoformat(timespec="seconds"), "tick": _start_tick(os.getpid())}


def read_owner(run_dir: Path) -> tuple[str, dict[str, Any]] | None:
    """The claim of ``run_dir`` (its text and what it says), ``None`` when there is none; a claim
    that stays unreadable (its owner died while writing it) says nothing (``{}``)."""
    path = Path(run_dir) / OWNER_FILE
    deadline = time.monotonic() + _READ_WAIT_S
    while True:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        try:
            owner = json.loads(text)
            if isinstance(owner, dict):
                return text, owner
        except ValueError:
            pass
        if time.monotonic() > deadline:
            return text, {}
        time.sleep(0.02)  # being written right now


@dataclass
class Claim:
    """A run folder owned by this process; :meth:`release` gives it back (removing the folders
    the claim made when they are still empty: a run that failed on its data leaves nothing)."""

    run_dir: Path
    text: str
    made: list[Path] = field(default_factory=list)
    #: the stale claim this one replaced (``None``: there was none)
    took_over: dict[str, Any] | None = None

    def warn_taken_over(self) -> None:
        """Say (one warning) that a stale claim was taken over."""
        if self.took_over:
            warnings.warn(f"run folder {self.run_dir} was claimed by pid {self.took_over.get('pid')}, started "
                          f"{self.took_over.get('started')}, which no longer runs; this run takes it over",
                          stacklevel=2)

    def release(self) -> None:
        path = self.run_dir / OWNER_FILE
        with contextlib.suppress(OSError):
            if path.read_text(encoding="utf-8") == self.text:  # never another owner's claim
                path.unlink()
        for folder in reversed(self.made):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only when empty

    def __enter__(self) -> Claim:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _make_folders(run_dir: Path) -> list[Path]:
    """Make ``run_dir`` and its missing parents; returns those this call made, outermost first."""
    missing = []
    place = run_dir
    while not place.exists() and place != place.parent:
        missing.append(place)
        place = place.parent
    made = []
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:  # another process made it at the same moment
            continue
        made.append(folder)
    return made


def claim(run_dir: str | os.PathLike) -> Claim:
    """Claim ``run_dir`` for this process (making it if needed), or raise :class:`FolderInUse`
    naming the owner. A stale claim (see the module's docstring) is taken over
    (:attr:`Claim.took_over`)."""
    run_dir = Path(run_dir)
    made = _make_folders(run_dir)
    path = run_dir / OWNER_FILE
    text = json.dumps(me()) + "\n"
    stale: dict[str, Any] | None = None
    try:
        for _ in range(10):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                found = read_owner(run_dir)
                if found is None:
                    continue  # released meanwhile: try again
                old_text, owner = found
                if _running(owner):
                    raise FolderInUse(run_dir, owner) from None
                with held(run_dir):  # the folder itself, while a stale claim is taken over
                    again = read_owner(run_dir)
                    if again is not None and again[0] == old_text:
                        path.unlink()
                        stale = owner
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            return Claim(run_dir, text, made, stale)
        raise FolderInUse(run_dir, (read_owner(run_dir) or ("", {}))[1])
    except BaseException:
        Claim(run_dir, "\0", made).release()  # folders this call made, when empty
        raise
