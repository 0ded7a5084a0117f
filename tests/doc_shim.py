"""``graphmatch`` as the documented commands call it in ``tests/test_doc_commands.py``: the
installed command, with two things a reader does by hand done for them.

- A run-folder placeholder (``RUN``, ``RUN_OR_CKPT``, ``runs/<run folder>``, a name with ``…``)
  is the run folder the doc just made: the last one trained or named in this working folder, or
  the newest match of the name with ``…`` read as ``*``.
- ``graphmatch train`` of a run already trained in this test session (by any doc, in any
  worker) does not train it again: its recipe and ``--set`` are checked (``graphmatch recipe``)
  and the run folder it would have made (its ``--out``, or the default name) links to the run
  made before. A run is the recipe, whether it trains several seeds, and its ``--set`` without
  the keys that change only the numbers or the length (:data:`SAME_RUN`) and without a
  ``data.root`` that is ``$GRAPHMATCH_DATA``; every other ``--set`` trains. Every run the docs
  name still trains once, shortened (``GRAPHMATCH_SHORTEN``), and every other command runs as
  written.

Runs trained are listed in ``$GRAPHMATCH_DOC_TEST_RUNS/trained.json``; a run is trained under a
lock of its own there, so a doc that needs a run another doc is training waits for it. A command
that loads e5-small (several GB of memory) holds ``e5.lock`` there: one at a time. The working
folder's ``doc-test-state.json`` names its last run; ``$GRAPHMATCH_DOC_TEST_RUNS/commands.log`` has each
command's time and CPU time.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

STATE = Path("doc-test-state.json")
PLACEHOLDERS = ("RUN", "RUN_OR_CKPT", "runs/<run folder>", "runs/…")
#: ``--set`` keys that change what a run computes only in its numbers or length, not in what is built
SAME_RUN = ("train.seed", "train.threads", "train.progress", "train.epochs", "train.max_steps",
            "train.val_every_steps", "train.patience")
SHARED = Path(os.environ.get("GRAPHMATCH_DOC_TEST_RUNS", "."))
REGISTRY = SHARED / "trained.json"
FORKED_CPU: list[float] = []  # CPU seconds of the commands run by the fork server


@contextmanager
def lock_file(path: Path) -> Iterator[None]:
    """An exclusive lock on the file ``path`` (made if missing), for all processes that take it."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def locked(name: str):
    """:func:`lock_file` on ``$GRAPHMATCH_DOC_TEST_RUNS/<name>.lock``, shared by all workers."""
    return lock_file(SHARED / f"{name}.lock")


def _one_e5(args: list[str]):
    """The e5 lock for a command that loads e5-small (a name or a recipe with ``e5``), else nothing."""
    return locked("e5") if any("e5-small" in a or "_e5" in a for a in args) else nullcontext()


def _graphmatch(real: str, args: list[str]) -> int:
    """The installed ``graphmatch ARGS``: a child of the test worker's fork server
    (``tests/forkserver.py``, at ``$GRAPHMATCH_DOC_TEST_FORKSERVER``), else a fresh process."""
    server = os.environ.get("GRAPHMATCH_DOC_TEST_FORKSERVER")
    if server:
        import forkserver

        code, cpu = forkserver.run(server, args)
        FORKED_CPU.append(cpu)
        return code
    return subprocess.run([real, *args]).returncode


def _read(path: Path, empty: dict) -> dict:
    return json.loads(path.read_text()) if path.is_file() else empty


def _folder(arg: str, last: str | None) -> str:
    if arg.rstrip("/") in PLACEHOLDERS and last:
        return last
    if "…" in arg:
        found = sorted(glob.glob(arg.rstrip("/").replace("…", "*")), key=os.path.getmtime)
        return found[-1] if found else arg
    return arg


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args[:-1] else None


def _sets(args: list[str]) -> list[str]:
    if "--set" not in args:
        return []
    tail = args[args.index("--set") + 1:]
    return tail[:next((i for i, a in enumerate(tail) if a.startswith("--")), len(tail))]


def run_key(args: list[str]) -> str:
    """What identifies the run ``graphmatch train`` of ``args`` makes (see the module's docstring)."""
    recipe = args[1].removesuffix(".yaml")
    recipe = recipe.split("recipes/", 1)[1] if "recipes/" in recipe else recipe
    data = os.path.realpath(os.environ.get("GRAPHMATCH_DATA", ""))
    sets = sorted(s for s in _sets(args) if s.partition("=")[0] not in SAME_RUN
                  and s != f"data.root={data}" and not (s.startswith("data.root=")
                                                      and os.path.realpath(s.partition("=")[2]) == data))
    seeds = " --seeds" if _option(args, "--seeds") not in (None, "1") else ""  # a folder of seeds
    return " ".join([recipe + seeds, *sets])


def _default_folder(real: str, args: list[str]) -> tuple[int, str | None]:
    """``graphmatch recipe`` of the train command's recipe and ``--set`` (its exit code) and the
    default run folder it names."""
    sets = _sets(args)
    done = subprocess.run([real, "recipe", args[1], *(["--set", *sets] if sets else [])], stdout=subprocess.PIPE,
                          text=True)
    fields = dict(line.split(": ", 1) for line in done.stdout.splitlines() if line.startswith(("task: ", "name: ")))
    if done.returncode or len(fields) < 2:
        return done.returncode or 1, None
    from graphmatch.engine.runs.folder import default_run_dir

    return 0, str(default_run_dir(fields["task"], fields["name"]))


def train_once(real: str, args: list[str]) -> tuple[int, str | None]:
    """``graphmatch train`` of ``args`` (no ``--resume``), or a link to the same run trained
    before; its exit code and run folder."""
    key, out = run_key(args), _option(args, "--out")
    with locked("run-" + hashlib.sha1(key.encode()).hexdigest()[:16]):
        before = _read(REGISTRY, {}).get(key)
        if before is not None:
            print(f"doc-test: {key} was trained in this session ({before}): checking its recipe and --set only",
                  file=sys.stderr)
            code, default = _default_folder(real, args)
            folder = out or default
            if code == 0 and folder and not os.path.lexists(folder):
                Path(folder).parent.mkdir(parents=True, exist_ok=True)
                Path(folder).symlink_to(before, target_is_directory=True)
            return code, folder
        made = set(glob.glob("runs/*"))
        with _one_e5(args):
            code = _graphmatch(real, args)
        new = sorted(set(glob.glob("runs/*")) - made, key=os.path.getmtime)
        folder = out or (new[-1] if new else None)
        if code == 0 and folder:
            with locked("registry"):
                REGISTRY.write_text(json.dumps({**_read(REGISTRY, {}), key: os.path.abspath(folder)}))
        return code, folder


def children_cpu() -> float:
    """CPU seconds of this process's children that have ended (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(real: str, args: list[str]) -> int:
    start, cpu, state = time.perf_counter(), children_cpu(), _read(STATE, {"last": None})
    args = [_folder(a, state["last"]) for a in args]
    if args[:1] == ["train"] and len(args) > 1 and not args[1].startswith("-") and "--resume" not in args:
        code, folder = train_once(real, args)
    else:
        with _one_e5(args):
            code = _graphmatch(real, args)
        folder = _option(args, "--resume") if args[:1] == ["train"] else None
    if folder and code == 0:
        STATE.write_text(json.dumps({"last": folder}))
    with open(SHARED / "commands.log", "a") as log:  # where the time goes
        cpu = children_cpu() - cpu + sum(FORKED_CPU)
        print(f"{time.perf_counter() - start:7.1f} s  {cpu:7.1f} s CPU  exit {code}  {Path.cwd().name}: "
              f"graphmatch {' '.join(args)}", file=log)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
