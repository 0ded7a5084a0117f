"""What a run folder keeps so that its model can be rebuilt anywhere: what the task stores
(:meth:`Task.store_run_files <graphmatch.tasks.base.Task.store_run_files>`: a pretrained
encoder's config and tokenizer files, a few KB to a few hundred; never its weights, which are in
the checkpoint) and the identity of the other input files (``inputs.json``: path and sha256 of the
knowledge graph, vocabulary, word vectors and each split's data file), written when training
starts and again when it ends; a run continued from a checkpoint warns about each of them that
changed since (:func:`warn_changed_inputs`).

When a run is loaded (:mod:`graphmatch.engine.restore`), the task is rebuilt from them
(:meth:`Task.from_run_folder <graphmatch.tasks.base.Task.from_run_folder>`), so that ``evaluate``
and ``predict`` work after the pretrained folder is gone and after the run folder has moved.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import file_digest
from graphmatch.tasks.base import Task

#: path and sha256 of the run's other input files
INPUTS_FILE = "inputs.json"


def input_paths(task: Task, datasets: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The files whose identity a run records: the task's (:meth:`Task.input_files
    <graphmatch.tasks.base.Task.input_files>`) and each split's data file (``"train data"``...)."""
    paths = {name: str(path) for name, path in task.input_files().items()}
    for split, dataset in (datasets or {}).items():
        source = dataset.input_files().get("source") if hasattr(dataset, "input_files") else None
        if source is not None:
            paths[f"{split} data"] = str(source)
    return paths


def write_inputs(task: Task, run_dir: Path, datasets: Mapping[str, Any] | None = None) -> None:
    """``inputs.json``: path and sha256 of each of :func:`input_paths` (and the pretrained source)."""
    inputs: dict[str, Any] = {name: {"path": str(Path(path).resolve()), "sha256": file_digest(path)}
                              for name, path in input_paths(task, datasets).items() if Path(path).is_file()}
    if task.pretrained is not None:
        inputs["pretrained"] = {"path": task.pretrained.source, "weights": [str(w) for w in task.pretrained.weights]}
    write_atomically(run_dir / INPUTS_FILE, json.dumps(inputs, indent=2, ensure_ascii=False) + "\n")


def store_run_files(task: Task, run_dir: Path, datasets: Mapping[str, Any] | None = None) -> None:
    """Write what ``task`` stores (:meth:`~graphmatch.tasks.base.Task.store_run_files`) and
    ``inputs.json`` into ``run_dir``."""
    task.store_run_files(run_dir)
    write_inputs(task, run_dir, datasets)


def warn_changed_inputs(task: Task, saved_dir: Path, datasets: Mapping[str, Any] | None = None) -> list[str]:
    """Warn once for each input file whose sha256 differs from the one ``saved_dir/inputs.json``
    recorded (a run continued from a checkpoint of that folder); returns the messages. A folder
    without ``inputs.json`` (or an unreadable one) is not compared."""
    try:
        saved = json.loads((saved_dir / INPUTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    messages = []
    for name, path in input_paths(task, datasets).items():
        before = saved.get(name) if isinstance(saved, dict) else None
        if not isinstance(before, dict) or not isinstance(before.get("sha256"), str) or not Path(path).is_file():
            continue
        now = file_digest(path)
        if now != before["sha256"]:
            messages.append(f"{path}: the {name} file changed since the checkpoint was trained (sha256 "
                            f"{before['sha256'][:16]}… then, {now[:16]}… now); the run goes on with it as it is now")
    for message in messages:
        warnings.warn(message, UserWarning, stacklevel=2)
    return messages
