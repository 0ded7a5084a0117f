"""``graphmatch train RECIPE [--set key=value ...] [--seeds N] [--out DIR] [--resume RUN]``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_set_argument(p: argparse.ArgumentParser, help: str) -> None:
    """``--set KEY=VALUE ...`` (repeatable), collected in ``args.overrides``."""
    p.add_argument("--set", dest="overrides", nargs="+", action="extend", default=[], metavar="KEY=VALUE", help=help)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train a recipe and write a run folder",
        description="Train a recipe (a YAML file, or a name under recipes/ such as kbert/chnsenticorp_hownet_quick). "
        "The checkpoint is selected on dev; test is evaluated once, with it.",
    )
    p.add_argument("recipe", nargs="?", help="recipe file or name (optional with --resume)")
    add_set_argument(p, "override recipe keys, e.g. --set train.epochs=1 optim.lr=2e-5 (values are YAML)")
    p.add_argument("--seeds", type=int, default=1, help="train N seeds (seed, seed+1, ...) and report mean ± std")
    p.add_argument("--out", help="run folder (default: runs/<task>-<recipe>-<timestamp>)")
    p.add_argument("--resume", metavar="RUN_OR_CKPT", help="continue an interrupted run folder (or a .ckpt)")
    p.set_defaults(func=run)


def _figure(value: object) -> str:
    if isinstance(value, dict):
        return f"{value['mean']:.2f} ± {value['std']:.2f}"
    return f"{value:.2f}"


def run(args: argparse.Namespace) -> int:
    """Reads and checks the recipe (and the run folder to resume) before torch and Lightning are
    imported, so that a bad recipe is refused at once; on a terminal, says what comes next."""
    from graphmatch.engine.runs.folder import plan  # no torch

    checked = plan(args.recipe, args.overrides, args.out, args.seeds, args.resume)
    recipe = checked.recipe
    if sys.stderr.isatty() and recipe.train.progress:
        print(f"graphmatch train: recipe {recipe.name} (task {recipe.task}) checked; "
              "loading torch and Lightning, then the data", file=sys.stderr, flush=True)
    from graphmatch.engine.runner import train_plan
    from graphmatch.engine.runs.folder import env_rank

    run_dir = train_plan(checked)
    if env_rank() != 0:
        return 0
    metrics = json.loads((Path(run_dir) / "metrics.json").read_text(encoding="utf-8"))
    print(f"run folder: {run_dir}")
    for split in ("dev", "test"):
        if metrics.get(split):
            print(f"{split}: " + ", ".join(f"{k} {_figure(v)}" for k, v in metrics[split].items()))
    return 0
