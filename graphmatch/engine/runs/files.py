"""What a run folder keeps so that its model can be rebuilt anywhere: what the task stores
(:meth:`Task.store_run_files <graphmatch.tasks.base.Task.store_run_files>`: a pretrained
encoder's config and tokenizer files, a few KB to a few hundred; never its weights, which are in
the checkpoint) and the identity of the other input files (``inputs.json``: path and sha256 of the
knowledge graph, vocabulary, word vectors and each split's data file), written when training
starts and again when it ends; a run continued from a checkpoint warns about each of them that
changed since (:func:`warn_changed_inputs`). A file the user gave by path (:meth:`Task.user_files
<graphmatch.tasks.base.Task.user_files>`: a ``.spo`` knowledge graph, a vocabulary) is copied into
``inputs/<name>/`` as well, and a run that is loaded reads that copy (:func:`stored_inputs`), so
that moving or deleting the data changes nothing for ``predict``; :func:`check_run_inputs` warns
when a file the run reads, or the user's original, differs from what the run was trained on.

When a run is loaded (:mod:`graphmatch.engine.runs.restore`), the task is rebuilt from them
(:meth:`Task.from_run_folder <graphmatch.tasks.base.Task.from_run_folder>`), so that ``evaluate``
and ``predict`` work after the pretrained folder is gone and after the run folder has moved.
"""

from __future__ import annotations

import json
import shutil
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
    <graphmatch.tasks.base.Task.input_files>`) and each split's data file (``"train data"``...): a
    dataset's ``source``, or the file it names after its split (a relation dataset names all three)."""
    paths = {name: str(path) for name, path in task.input_files().items()}
    for split, dataset in (datasets or {}).items():
        files = dataset.input_files() if hasattr(dataset, "input_files") else {}
        source = files.get("source") or files.get(split)
        if source is not None:
            paths[f"{split} data"] = str(source)
    return paths


#: the run folder's copies of the files a user gave by path
COPIES_DIR = "inputs"


def write_inputs(task: Task, run_dir: Path, datasets: Mapping[str, Any] | None = None) -> None:
    """``inputs.json``: path and sha256 of each of :func:`input_paths` (and the pretrained source);
    a file of :meth:`Task.user_files <graphmatch.tasks.base.Task.user_files>` also gets its copy in the
    run folder (``copy``, relative to it) and the recipe key that names it (``key``)."""
    inputs: dict[str, Any] = {name: {"path": str(Path(path).resolve()), "sha256": file_digest(path)}
                              for name, path in input_paths(task, datasets).items() if Path(path).is_file()}
    for name, key in task.user_files().items():
        if name in inputs:
            inputs[name].update(key=key, copy=_copy_into(Path(inputs[name]["path"]), run_dir, name))
    if task.pretrained is not None:
        inputs["pretrained"] = {"path": task.pretrained.source, "weights": [str(w) for w in task.pretrained.weights]}
    write_atomically(run_dir / INPUTS_FILE, json.dumps(inputs, indent=2, ensure_ascii=False) + "\n")


def _copy_into(path: Path, run_dir: Path, name: str) -> str:
    """Copy ``path`` to ``run_dir/inputs/<name>/`` (atomically; not when it is that copy already)."""
    copy = run_dir / COPIES_DIR / name / path.name
    if not (copy.is_file() and copy.resolve() == path.resolve()):
        copy.parent.mkdir(parents=True, exist_ok=True)
        partial = copy.with_name(copy.name + ".partial")
        shutil.copyfile(path, partial)
        partial.replace(copy)
    return copy.relative_to(run_dir).as_posix()


def _saved_inputs(run_dir: Path) -> dict[str, Any]:
    """``run_dir/inputs.json`` (empty where there is none or it cannot be read)."""
    try:
        saved = json.loads((run_dir / INPUTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return saved if isinstance(saved, dict) else {}


def stored_inputs(config: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """``config`` with each recipe key of a copied user file (``inputs.json``'s ``key``) set to the
    run folder's copy, else to the original where the run recorded it (absolute); neither there: a
    one-line ValueError naming where it looked."""
    for name, entry in _saved_inputs(run_dir).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) or "." not in entry["key"]:
            continue
        section, key = entry["key"].split(".", 1)
        copy = run_dir / str(entry.get("copy", ""))
        original = Path(str(entry.get("path", "")))
        found = next((p for p in (copy, original) if p.is_file()), None)
        if found is None:
            raise ValueError(f"{entry['key']}: the run's {name} file is missing: looked for its copy {copy} and "
                             f"for the original {original}")
        if isinstance(config.get(section), dict):
            config = {**config, section: {**config[section], key: str(found.resolve())}}
    return config


def check_run_inputs(task: Task, run_dir: Path) -> list[str]:
    """Warn once, in one line, for each input file a loaded run reads whose sha256 differs from
    the one ``inputs.json`` recorded, and for each user original that changed since the run
    copied it (the run goes on with its copy); returns the messages."""
    saved = _saved_inputs(run_dir)
    messages = []
    for name, path in task.input_files().items():
        entry = saved.get(name)
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str) or not Path(path).is_file():
            continue
        if file_digest(path) != entry["sha256"]:
            messages.append(f"{path}: the {name} file differs from the one the run was trained with "
                            f"(sha256 {entry['sha256'][:16]}…); the model reads it as it is now")
        original = Path(str(entry.get("path", "")))
        if entry.get("copy") and original.is_file() and original.resolve() != Path(path).resolve() \
                and file_digest(original) != entry["sha256"]:
            messages.append(f"{original}: the {name} file changed since the run was trained; the run reads its "
                            f"copy {run_dir / entry['copy']}, as it was then")
    for message in messages:
        warnings.warn(message, UserWarning, stacklevel=2)
    return messages


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
