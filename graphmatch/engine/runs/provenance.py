"""What made a run: the package and library versions, the git commit of the code, what of the
environment the task read (LET: its segmenters) and the machine (CPU, cores, torch's BLAS and oneDNN).

A run folder records :func:`provenance` in ``metrics.json`` and ``summary.md``, so that a table
made from run folders can say which code its figures came from and refuse runs of other code.
"""

from __future__ import annotations

import os
import platform
import re
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
    missing. ``dirty`` is true when tracked files other than Markdown differ from the commit: a
    ``.md`` file changes no figure, and ``benchmarks/results.py`` writes its tables into
    ``docs/results.md`` of the checkout whose other runs may still be training."""
    folder = Path(where) if where is not None else Path(graphmatch.__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=30, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no", "--",
                                 ":(top)", ":(top,exclude,glob)**/*.md"],  # the whole checkout, not the folder
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit or None, "dirty": bool(status.strip()) if commit else None}


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s ``model name``, else :func:`platform.processor`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(("model name", "Hardware", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """The machine a run computed on: ``cpu`` (:func:`cpu_model`), ``cores``, ``platform``, and
    torch's ``blas`` (its build's ``BLAS_INFO``), ``cpu_capability`` and ``onednn`` (the oneDNN
    version, ``None`` when torch has none), read from ``torch.__config__.show()``."""
    import torch

    shown = torch.__config__.show()

    def found(pattern: str) -> str | None:
        match = re.search(pattern, shown)
        return match[1].strip() if match else None

    onednn = found(r"(?:MKL-DNN|oneDNN) (v[\w.]+)") if torch.backends.mkldnn.is_available() else None
    return {"cpu": cpu_model(), "cores": os.cpu_count(), "platform": platform.platform(),
            "blas": found(r"BLAS_INFO=([^,\s]+)"), "cpu_capability": found(r"CPU capability usage: (\S+)"),
            "onednn": onednn}


#: the fields of :func:`machine` that change what a run computes (the platform string is only informative)
MACHINE_FIELDS = ("cpu", "cores", "blas", "cpu_capability", "onednn")


def provenance(caches: Mapping[str, str] | None = None, where: str | Path | None = None,
               environment: Mapping[str, Any] | None = None,
               precision: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The record of what made a run: ``graphmatch`` (version), ``commit`` and ``dirty``
    (:func:`git_state`), ``python`` and each of :data:`LIBRARIES`' versions, ``caches`` (the
    cache key of each processed dataset used, by split), the task's ``environment`` (LET:
    ``segmenters``, name → version), the ``machine`` (:func:`machine`) and, for a run that trained,
    its ``precision`` (:func:`~graphmatch.engine.training.precision.precision_record`: requested, in force,
    and the CPU's bf16 flags that chose it)."""
    record = {"graphmatch": graphmatch.__version__, **git_state(where), "python": platform.python_version(),
              **{lib: _version(lib) for lib in LIBRARIES}, "caches": dict(caches or {}), **dict(environment or {}),
              "machine": machine()}
    if precision is not None:
        record["precision"] = dict(precision)
    return record


def machine_difference(recorded: Mapping[str, Any] | None, here: Mapping[str, Any]) -> list[str]:
    """How the machine of a run's ``recorded`` provenance differs from ``here`` (:func:`machine`):
    ``["cpu: AMD EPYC → Intel Xeon", ...]`` over :data:`MACHINE_FIELDS`; ``["not recorded"]`` for
    a record without a machine."""
    if not recorded:
        return ["not recorded"]
    return [f"{name}: {recorded.get(name)} → {here.get(name)}" for name in MACHINE_FIELDS
            if recorded.get(name) != here.get(name)]


def describe(record: Mapping[str, Any]) -> str:
    """One line for a summary: ``graphmatch 0.1.0, commit 1a2b3c4 (dirty), torch 2.13.0, ..., on
    AMD EPYC (2 cores, BLAS mkl, oneDNN v3.12.0)``."""
    commit = record.get("commit")
    where = "no git commit" if not commit else f"commit {commit[:12]}{' (dirty)' if record.get('dirty') else ''}"
    libs = ", ".join(f"{lib} {record[lib]}" for lib in LIBRARIES if record.get(lib))
    line = f"graphmatch {record.get('graphmatch')}, {where}, python {record.get('python')}, {libs}"
    if record.get("segmenters"):
        line += ", segmenters " + ", ".join(f"{n} {v}" for n, v in record["segmenters"].items())
    box = record.get("machine")
    if box:
        line += (f", on {box.get('cpu')} ({box.get('cores')} cores, BLAS {box.get('blas')}, "
                 f"oneDNN {box.get('onednn') or 'none'})")
    precision = record.get("precision")
    if precision:
        units = ", ".join(precision.get("cpu_bf16") or []) or "no bf16 units"
        line += f", precision {precision.get('in_force')} ({precision.get('requested')}; CPU: {units})"
    return line
