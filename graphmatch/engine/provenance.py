"""What made a run: the package and library versions, and the git commit of the code.

A run folder records :func:`provenance` in ``metrics.json`` and ``summary.md``, so that a table
made from run folders can say which code its figures came from and refuse runs of other code.
"""

from __future__ import annotations

import platform
import subprocess
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import graphmatch

#: the libraries whose versions change what a run computes
LIBRARIES = ("torch", "torch_geometric", "transformers", "numpy")


def git_state(where: str | Path | None = None) -> dict[str, Any]:
    """``{"commit": sha, "dirty": bool}`` of the git checkout holding ``where`` (default: this
    package's source); both ``None`` when it is not in a checkout (an installed wheel) or git is
    missing. ``dirty`` is true when tracked files differ from the commit."""
    folder = Path(where) if where is not None else Path(graphmatch.__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=30, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit or None, "dirty": bool(status.strip()) if commit else None}


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return None


def provenance(caches: Mapping[str, str] | None = None, where: str | Path | None = None) -> dict[str, Any]:
    """The record of what made a run: ``graphmatch`` (version), ``commit`` and ``dirty``
    (:func:`git_state`), ``python`` and each of :data:`LIBRARIES`' versions, and ``caches``
    (the cache key of each processed dataset used, by split)."""
    return {"graphmatch": graphmatch.__version__, **git_state(where), "python": platform.python_version(),
            **{lib: _version(lib) for lib in LIBRARIES}, "caches": dict(caches or {})}


def describe(record: Mapping[str, Any]) -> str:
    """One line for a summary: ``graphmatch 0.1.0, commit 1a2b3c4 (dirty), torch 2.13.0, ...``."""
    commit = record.get("commit")
    where = "no git commit" if not commit else f"commit {commit[:12]}{' (dirty)' if record.get('dirty') else ''}"
    libs = ", ".join(f"{lib} {record[lib]}" for lib in LIBRARIES if record.get(lib))
    return f"graphmatch {record.get('graphmatch')}, {where}, python {record.get('python')}, {libs}"
