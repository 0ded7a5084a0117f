"""What a run folder keeps so that its model can be rebuilt anywhere: what the task stores
(:meth:`Task.store_run_files <graphmatch.tasks.base.Task.store_run_files>`: a pretrained
encoder's config and tokenizer files, a few KB to a few hundred; never its weights, which are in
the checkpoint) and the identity of the other input files (``inputs.json``: path and sha256 of the
knowledge graph, vocabulary, word vectors).

When a run is loaded (:mod:`graphmatch.engine.restore`), the task is rebuilt from them
(:meth:`Task.from_run_folder <graphmatch.tasks.base.Task.from_run_folder>`), so that ``evaluate``
and ``predict`` work after the pretrained folder is gone and after the run folder has moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import file_digest
from graphmatch.tasks.base import Task

#: path and sha256 of the run's other input files
INPUTS_FILE = "inputs.json"


def store_run_files(task: Task, run_dir: Path) -> None:
    """Write what ``task`` stores (:meth:`~graphmatch.tasks.base.Task.store_run_files`) and
    ``inputs.json`` into ``run_dir``."""
    task.store_run_files(run_dir)
    inputs = {name: {"path": str(Path(path).resolve()), "sha256": file_digest(path)}
              for name, path in task.input_files().items() if Path(path).is_file()}
    if task.pretrained is not None:
        inputs["pretrained"] = {"path": task.pretrained.source, "weights": [str(w) for w in task.pretrained.weights]}
    write_atomically(run_dir / INPUTS_FILE, json.dumps(inputs, indent=2, ensure_ascii=False) + "\n")
