"""``graphmatch`` as the documented commands call it in ``tests/test_doc_commands.py``: the
installed command, with two things a reader does by hand done for them.

- A run-folder placeholder (``RUN``, ``RUN_OR_CKPT``, ``runs/<run folder>``, a name with ``…``)
  is the run folder the docs just made: the last one trained or named, or the newest match of
  the name with ``…`` read as ``*``.
- ``graphmatch train`` of a recipe already trained in this session does not train it again:
  its recipe and ``--set`` are checked (``graphmatch recipe``) and its ``--out``, if given, links
  to the run made before. Every recipe the docs name still trains once, shortened
  (``GRAPHMATCH_SHORTEN``), and every other command runs as written.

Its state (``doc-test-state.json`` in the working folder) says which recipes were trained where.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from pathlib import Path

STATE = Path("doc-test-state.json")
PLACEHOLDERS = ("RUN", "RUN_OR_CKPT", "runs/<run folder>", "runs/…")


def _state() -> dict:
    return json.loads(STATE.read_text()) if STATE.is_file() else {"trained": {}, "last": None}


def _folder(arg: str, state: dict) -> str:
    if arg.rstrip("/") in PLACEHOLDERS and state["last"]:
        return state["last"]
    if "…" in arg:
        found = sorted(glob.glob(arg.rstrip("/").replace("…", "*")), key=os.path.getmtime)
        return found[-1] if found else arg
    return arg


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args[:-1] else None


def _recipe_name(recipe: str) -> str:
    name = recipe.removesuffix(".yaml")
    return name.split("recipes/", 1)[1] if "recipes/" in name else name


def main(real: str, args: list[str]) -> int:
    state = _state()
    args = [_folder(a, state) for a in args]
    if args[:1] == ["train"] and len(args) > 1 and not args[1].startswith("-"):
        recipe, out = _recipe_name(args[1]), _option(args, "--out")
        recipe += " --seeds" if _option(args, "--seeds") not in (None, "1") else ""  # a folder of seeds
        before = state["trained"].get(recipe)
        if before is not None and "--resume" not in args:
            sets = []
            for a in args[args.index("--set"):] if "--set" in args else []:
                if a.startswith("--") and a != "--set":
                    break
                sets.append(a)
            print(f"doc-test: {recipe} was trained in this session ({before}): checking its recipe and --set only",
                  file=sys.stderr)
            code = subprocess.run([real, "recipe", args[1], *sets], stdout=subprocess.DEVNULL).returncode
            if code == 0 and out and not Path(out).exists():
                Path(out).parent.mkdir(parents=True, exist_ok=True)
                Path(out).symlink_to(Path(before).resolve(), target_is_directory=True)
            state["last"] = out or before
            STATE.write_text(json.dumps(state))
            return code
        made = set(glob.glob("runs/*"))
        code = subprocess.run([real, *args]).returncode
        if code == 0:
            new = sorted(set(glob.glob("runs/*")) - made, key=os.path.getmtime)
            folder = out or (new[-1] if new else None)
            if folder:
                state["trained"][recipe] = state["last"] = folder
                STATE.write_text(json.dumps(state))
        return code
    if args[:1] == ["train"] and "--resume" in args:
        state["last"] = _option(args, "--resume")
        STATE.write_text(json.dumps(state))
    return subprocess.run([real, *args]).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
