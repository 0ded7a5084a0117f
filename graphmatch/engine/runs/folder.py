"""Which folder a run writes, and when: the run-folder policy of :func:`graphmatch.engine.train`.

* **new**: ``--out DIR`` or ``runs/<task>-<recipe>-<timestamp>`` (:func:`default_run_dir`); an
  existing folder that is not empty is refused (:func:`check_free`), unless nothing was saved in
  it (:func:`nothing_saved`: a run that failed on its data, say), which is started again in place;
* **resume**: a run folder continues in place from its ``last.ckpt`` with its own configuration
  (:func:`plan`); a differing recipe is refused; a finished folder is left alone (:func:`finished`);
  a ``.ckpt`` file continues into a new folder;
* **ranks**: under DDP only rank 0 (:func:`env_rank`) checks, creates and marks folders; it
  announces its folder in ``$GRAPHMATCH_RUN_DIR`` so that the processes Lightning launches write
  the same one (:func:`choose_folder`);
* **one owner**: a training claims its folder (:func:`graphmatch.engine.runs.owner.claim`) before
  anything is built and gives it back at the end; a second training of a claimed folder is refused
  with its owner's pid, host and start time, and a claim left by a killed run is taken over;
* **creation and completion**: :func:`open_folder` makes the folder and writes ``config.yaml``
  once data and model are ready (so a bad input leaves no folder); :func:`close_folder` writes the
  ``COMPLETE`` marker last, and readers refuse a folder without it (:func:`check_complete`).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphmatch.engine.runs import read_yaml, write_json, write_yaml
from graphmatch.engine.runs.owner import OWNER_FILE, Claim, FolderInUse, claim
from graphmatch.io.atomic import write_atomically
from graphmatch.tasks.recipes import shorten
from graphmatch.tasks.recipes.resolve import RUNTIME_KEYS, diff, resolve
from graphmatch.tasks.recipes.sections import Recipe

RUN_DIR_ENV = "GRAPHMATCH_RUN_DIR"  # set by rank 0 so the processes Lightning launches agree
COMPLETE = "COMPLETE"
#: the files a run folder holds before anything of its training is saved
STARTING_FILES = ("config.yaml", "seeds.json", "inputs.json")


def env_rank() -> int:
    """This process's global rank as the launcher announced it (0 when not distributed)."""
    for var in ("RANK", "SLURM_PROCID"):
        if var in os.environ:
            return int(os.environ[var])
    local, node = int(os.environ.get("LOCAL_RANK", 0)), int(os.environ.get("NODE_RANK", 0))
    return local + node  # nonzero exactly when not the first process


# --------------------------------------------------------------------------- what a folder holds
def is_complete(run_dir: str | os.PathLike) -> bool:
    return (Path(run_dir) / COMPLETE).is_file()


def nothing_saved(run_dir: str | os.PathLike) -> bool:
    """Whether ``run_dir`` is a run folder whose run stopped before it saved anything (it failed
    on its data, say): it holds ``config.yaml`` and otherwise only ``config.yaml`` /
    ``seeds.json`` / ``inputs.json`` files, also in ``seed-<n>/`` sub-folders; no checkpoint, no result. Such a
    folder may be started again in place."""
    run_dir = Path(run_dir)
    if not (run_dir / "config.yaml").is_file():
        return False
    for path in run_dir.rglob("*"):
        if path.is_dir():
            if not (path.parent == run_dir and path.name.startswith("seed-")):
                return False
        elif path.name not in (*STARTING_FILES, OWNER_FILE) and not (
                path.name.startswith(".") and path.name.endswith(".tmp")):
            return False
    return True


def check_complete(run_dir: str | os.PathLike) -> None:
    """Raise a ValueError explaining how to resume when ``run_dir`` was interrupted."""
    run_dir = Path(run_dir)
    if is_complete(run_dir):
        return
    if not (run_dir / "config.yaml").is_file():
        raise ValueError(f"{run_dir} is not a graphmatch run folder (no config.yaml)")
    if nothing_saved(run_dir):
        how = (f"it stopped before it saved anything; start it again in place with: graphmatch train --resume "
               f"{run_dir} (add --set KEY=VALUE to change its configuration)")
    else:
        how = f"resume it with: graphmatch train --resume {run_dir}"
    raise ValueError(f"run folder {run_dir} is incomplete (interrupted: no {COMPLETE} marker); {how}")


def seed_dir(base: Path, seed: int) -> Path:
    """The folder of one seed of a several-seed run."""
    return base / f"seed-{seed}"


def has_seeds(base: Path) -> bool:
    """Whether ``base`` is (the start of) a several-seed run."""
    return (base / "seeds.json").is_file()


# --------------------------------------------------------------------------- which folder, which config
@dataclass
class Plan:
    """What :func:`graphmatch.engine.train` runs: the configuration, the folder asked for
    (``None``: a default one), how many seeds, and where it continues from (``ckpt``: a
    checkpoint file; ``resume_dir``: the folder itself, continued in place)."""

    config: dict[str, Any]
    run_dir: Path | None
    seeds: int
    ckpt: Path | None = None
    resume_dir: bool = False

    @property
    def recipe(self) -> Recipe:
        """The configuration, typed."""
        return Recipe.of(self.config)


def plan(
    recipe: str | os.PathLike | Mapping[str, Any] | None,
    overrides: Sequence[str],
    run_dir: str | os.PathLike | None,
    seeds: int,
    resume: str | os.PathLike | None,
) -> Plan:
    """The :class:`Plan` of a ``train`` call (see :func:`graphmatch.engine.train` for the arguments).

    Resuming a folder uses its saved configuration and its number of seeds; a folder that saved
    nothing starts again with ``recipe``/``overrides`` when given. A recipe that differs from
    what is resumed, other than in runtime keys, is a ValueError.
    """
    if seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {seeds}")
    seeds = shorten.seeds(seeds)
    config = resolve(recipe, overrides) if recipe is not None else None
    resume = resume or (Recipe.of(config).train.resume if config else None)
    folder = Path(run_dir) if run_dir is not None else None
    ckpt, resume_dir = None, False
    if resume is not None:
        resume = Path(resume)
        given_overrides = overrides if recipe is None else ()
        if resume.is_dir():
            saved = read_yaml(resume / "config.yaml") if (resume / "config.yaml").is_file() else None
            if saved is None:
                raise ValueError(f"cannot resume {resume}: it is not a run folder (no config.yaml)")
            if nothing_saved(resume):  # nothing to continue: start again, with what is given
                config = config if config is not None else resolve(saved, overrides, stored=True)
            else:  # the given configuration first: --set task= may import the run's task
                given = config if config is not None else resolve(saved, given_overrides, stored=True)
                config = _same_config(resume, resolve(saved, stored=True), given)
            folder, resume_dir = folder or resume, True
            if has_seeds(resume):
                seeds = len(json.loads((resume / "seeds.json").read_text())["seeds"])
        elif resume.is_file():
            from graphmatch.engine.runs.checkpoint import META, read_checkpoint  # torch: only for a .ckpt

            saved = read_checkpoint(resume)[META]["config"]
            given = config if config is not None else resolve(saved, given_overrides, stored=True)
            config, ckpt = _same_config(resume, resolve(saved, stored=True), given), resume
        else:
            raise FileNotFoundError(f"nothing to resume at {resume}")
    if config is None:
        raise ValueError("give a recipe to train, or --resume a run folder or checkpoint")
    return Plan(Recipe.of(config).with_train(resume=None).config, folder, seeds, ckpt, resume_dir)


def _same_config(source: Path, saved: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The saved configuration of what is resumed, with the given runtime keys; a recipe that
    differs in anything else is an error."""
    differ = [k for k in diff(saved, given) if tuple(k.split(".", 1)) not in RUNTIME_KEYS]
    if differ:
        raise ValueError(
            f"cannot resume {source}: the recipe differs from the run's configuration in {', '.join(differ)}; "
            "resume with the same recipe (or without one)"
        )
    for section, key in RUNTIME_KEYS:
        saved[section][key] = given[section][key]
    return saved


def default_run_dir(task: str, recipe: str, root: str | os.PathLike = "runs") -> Path:
    """``<root>/<task>-<recipe>-<YYYYmmdd-HHMMSS>`` (a numeric suffix if it exists)."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    task = task.rpartition(":")[2]
    safe = re.sub(r"[^\w.-]+", "_", f"{task}-{recipe}-{stamp}")
    path, k = Path(root) / safe, 2
    while path.exists():
        path, k = Path(root) / f"{safe}-{k}", k + 1
    return path


def choose_folder(recipe: Recipe | Mapping[str, Any], run_dir: Path | None) -> Path:
    """The run's folder: the one rank 0 announced (in a process it launched), else ``run_dir``,
    else a default one (refused when several processes would each pick their own). Rank 0
    announces it in ``$GRAPHMATCH_RUN_DIR``."""
    if env_rank() != 0 and os.environ.get(RUN_DIR_ENV):
        base = Path(os.environ[RUN_DIR_ENV])  # a process launched by rank 0: same folder
    elif run_dir is not None:
        base = Path(run_dir)
    elif int(os.environ.get("WORLD_SIZE", 1)) > 1:
        raise ValueError("pass --out DIR (run_dir=) when launching several processes, so they share one run folder")
    else:
        recipe = Recipe.of(recipe)
        base = default_run_dir(recipe.task, recipe.name)
    if base.exists() and not base.is_dir():
        raise ValueError(f"the run folder {base} is a file; give --out a folder (new, or a run to --resume)")
    if env_rank() == 0:
        os.environ[RUN_DIR_ENV] = str(base.resolve())
    return base


# --------------------------------------------------------------------------- the folder's life
def finished(run_dir: Path) -> bool:
    """Whether a resumed folder is complete already (rank 0 says so: there is nothing to do)."""
    if not is_complete(run_dir):
        return False
    if env_rank() == 0:
        print(f"{run_dir} is already complete; nothing to resume")
    return True


def resume_point(run_dir: Path) -> Path | None:
    """The checkpoint a resumed folder continues from: its ``last.ckpt``, or ``None`` when it
    stopped before the first checkpoint (it starts over)."""
    last = run_dir / "last.ckpt"
    return last if last.is_file() else None


def check_writable(run_dir: Path) -> None:
    """``run_dir`` (or the nearest folder above it that exists) must take a new file: a read-only
    place is a one-line error before anything is built."""
    place = run_dir
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        with tempfile.TemporaryFile(dir=place):
            pass
    except OSError as err:
        raise ValueError(f"cannot write the run folder {run_dir}: {place} is not writable ({err.strerror}); "
                         "choose another --out") from None


def check_free(run_dir: Path) -> None:
    """A new run may write ``run_dir`` when it is missing, empty or saved nothing, in a place
    that can be written (rank 0 checks)."""
    if env_rank() == 0:
        check_writable(run_dir)
    if (env_rank() == 0 and run_dir.exists() and any(p.name != OWNER_FILE for p in run_dir.iterdir())
            and not nothing_saved(run_dir)):
        raise ValueError(
            f"run folder {run_dir} already exists and is not empty; choose another --out, "
            f"or continue it with --resume {run_dir}"
        )


def claim_folder(recipe: Recipe, run_dir: Path | None, *, resume: bool) -> tuple[Path, Claim | None]:
    """:func:`choose_folder`, then claim it for this run (rank 0; the other ranks get ``None``):
    :class:`~graphmatch.engine.runs.owner.FolderInUse` when another training owns it; a new run
    (not ``resume``) must then find it free (:func:`check_free`). A default folder taken at the
    same moment by another run is replaced by the next free name."""
    for _ in range(5):
        base = choose_folder(recipe, run_dir)
        if env_rank() != 0:
            return base, None
        check_writable(base)
        try:
            owned = claim(base)
        except FolderInUse:
            if run_dir is not None:
                raise
            continue
        try:
            if not resume:
                check_free(base)
        except BaseException:
            owned.release()
            raise
        owned.warn_taken_over()
        return base, owned
    raise AssertionError("five default run folders taken at once")  # pragma: no cover


def open_folder(run_dir: Path, recipe: Recipe | Mapping[str, Any], seeds: Sequence[int] | None = None) -> None:
    """Make ``run_dir`` (rank 0), take away its ``COMPLETE`` marker and write ``config.yaml``
    (and ``seeds.json`` for a several-seed run)."""
    if env_rank() != 0:
        return
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / COMPLETE).unlink(missing_ok=True)
    write_yaml(run_dir / "config.yaml", recipe.config if isinstance(recipe, Recipe) else recipe)
    if seeds is not None:
        write_json(run_dir / "seeds.json", {"seeds": list(seeds)})


def drop_last(run_dir: Path, keep_last: bool) -> None:
    """Remove a complete run's ``last.ckpt`` (rank 0), unless ``train.keep_last``: only a resumption
    reads it, and it holds the optimiser's state besides the weights (``best.ckpt`` holds the weights)."""
    if env_rank() == 0 and not keep_last and is_complete(run_dir):
        (run_dir / "last.ckpt").unlink(missing_ok=True)


def close_folder(run_dir: Path) -> None:
    """Write the ``COMPLETE`` marker (rank 0): every file of the run is in place."""
    if env_rank() == 0:
        write_atomically(run_dir / COMPLETE, dt.datetime.now().isoformat(timespec="seconds") + "\n")
