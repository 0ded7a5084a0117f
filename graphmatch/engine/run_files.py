"""What a run folder keeps so that its model can be rebuilt anywhere: the pretrained encoder's
config and tokenizer files (``pretrained/``, a few KB to a few hundred; never its weights, which
are in the checkpoint) and the identity of the other input files (``inputs.json``: path and
sha256 of the knowledge graph, vocabulary, word vectors).

When a run is loaded (:mod:`graphmatch.engine.restore`), ``model.pretrained`` is replaced by the
stored folder, so that ``evaluate`` and ``predict`` work after the pretrained folder is gone and
after the run folder has moved.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from graphmatch.checkpoints import STORED_FILE, stored_files
from graphmatch.datafiles import file_digest, write_atomically
from graphmatch.tasks.base import Task

#: the run's copy of the encoder's config and tokenizer files
ENCODER_DIR = "pretrained"
#: path and sha256 of the run's other input files
INPUTS_FILE = "inputs.json"


def store_run_files(task: Task, run_dir: Path) -> None:
    """Write ``pretrained/`` (when the task has a pretrained encoder) and ``inputs.json`` into ``run_dir``."""
    if task.pretrained is not None and not (task.pretrained.stored and
                                            task.pretrained.path.resolve() == (run_dir / ENCODER_DIR).resolve()):
        task.pretrained.store(run_dir / ENCODER_DIR)
    inputs = {name: {"path": str(Path(path).resolve()), "sha256": file_digest(path)}
              for name, path in task.input_files().items() if Path(path).is_file()}
    if task.pretrained is not None:
        inputs["pretrained"] = {"path": task.pretrained.source, "weights": [str(w) for w in task.pretrained.weights]}
    write_atomically(run_dir / INPUTS_FILE, json.dumps(inputs, indent=2, ensure_ascii=False) + "\n")


def with_stored_encoder(config: dict[str, Any], run_dir: Path) -> tuple[dict[str, Any], list[str]]:
    """``config`` with ``model.pretrained`` pointing at the run's stored encoder, and the stored
    files that are missing (empty when stored, or when the run has no pretrained encoder)."""
    original = config.get("model", {}).get("pretrained")
    if original is None:
        return config, []
    folder = run_dir / ENCODER_DIR
    missing = stored_files(folder)
    if missing:
        return config, [f"{ENCODER_DIR}/{name}" for name in missing]
    config = copy.deepcopy(config)
    config["model"]["pretrained"] = str(folder)
    return config, []


def older_run_error(run_dir: Path, original: str, missing: list[str], err: Exception) -> ValueError:
    """One line for a run folder without its stored encoder whose ``model.pretrained`` is gone."""
    return ValueError(f"run folder {run_dir} lacks the stored encoder files {', '.join(missing)} (made by an older "
                      f"graphmatch, or {STORED_FILE} removed): the original model.pretrained {original!r} is needed, "
                      f"and it cannot be loaded: {err}")
