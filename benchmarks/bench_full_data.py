"""Full datasets: the graph cache of a whole training set against one epoch of e5 training.

For each recipe (default: ``kbert/lcqmc_e5``, all 238,766 LCQMC training pairs, and
``kbert/chnsenticorp_e5`` / ``kbert/chnsenticorp_e5_hownet``, all 9,600 ChnSentiCorp sentences;
every ``data.limit`` lifted), in fresh processes one after the other:

* **build**: an empty cache folder, then the task's datasets built (train, dev and test: the
  seconds, the peak RSS of the process, the cache's size on disk);
* **load**: the same datasets read back from that cache (seconds, peak RSS);
* **first step**: the process start to the first training batch in hand (imports, task, cached
  data, pretrained weights, loader), from the warm cache;
* **steps**: ``--steps`` timed training steps of the recipe's model after two untimed ones
  (batch, dense inputs, forward, backward, clip, AdamW, as :mod:`bench_knowledge_cost` runs them),
  and one epoch estimated as the median step times the epoch's steps.

The builder's share of an epoch is the build (all three splits) over that estimate. One epoch of
e5 over LCQMC is hours on a CPU: it is estimated, never run. Prints a Markdown table.

    PYTHONPATH=. python benchmarks/bench_full_data.py --data-dir ../shared/data --steps 10
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

START = time.perf_counter()
RECIPES = ("kbert/lcqmc_e5", "kbert/chnsenticorp_e5", "kbert/chnsenticorp_e5_hownet")
FULL = ("data.limit.train=null", "data.limit.dev=null", "data.limit.test=null", "train.progress=false")


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB on Linux


def _sets(cache: Path, data_dir: str | None) -> list[str]:
    return [*FULL, f"data.cache_dir={cache}", *([f"data.root={data_dir}"] if data_dir else [])]


def child(mode: str, recipe_name: str, cache: Path, data_dir: str | None, steps: int) -> dict:
    """One measurement in this (fresh) process; see the module's docstring."""
    import torch

    from graphmatch.tasks.base import get_task
    from graphmatch.tasks.recipes.resolve import resolve_recipe

    recipe = resolve_recipe(recipe_name, _sets(cache, data_dir))
    torch.set_num_threads(recipe.train.threads)
    if mode in ("build", "load"):
        start = time.perf_counter()
        datasets = get_task(recipe.task)(recipe).datasets()
        seconds = time.perf_counter() - start
        return {"seconds": seconds, "peak_gb": _peak_gb(),
                "sizes": {split: len(ds) for split, ds in datasets.items() if ds is not None}}
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_knowledge_cost import Arm

    arm = Arm(recipe_name, _sets(cache, data_dir))
    arm.next_batch()
    first = time.perf_counter() - START
    for _ in range(2):
        arm.step(record=False)
    for _ in range(steps):
        arm.step(record=True)
    step = statistics.median(arm.step_times("wall"))
    per_epoch = math.ceil(len(arm.sizes) / arm.recipe.train.batch_size)  # one size per training sample
    return {"first_batch_s": first, "step_s": step, "steps_per_epoch": per_epoch, "peak_gb": _peak_gb()}


def _run_child(mode: str, recipe: str, cache: Path, args: argparse.Namespace) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", mode, "--recipes", recipe, "--cache", str(cache),
                          "--steps", str(args.steps), *(["--data-dir", args.data_dir] if args.data_dir else [])],
                         check=True, stdout=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def _size_gb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e9


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES))
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench_full_data"), help="cache folders go here")
    parser.add_argument("--steps", type=int, default=10, help="timed training steps for the epoch estimate")
    parser.add_argument("--child", choices=["build", "load", "steps"], help=argparse.SUPPRESS)
    parser.add_argument("--cache", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.recipes[0], args.cache, args.data_dir, args.steps)))
        return
    rows = []
    for recipe in args.recipes:
        cache = args.work / recipe.replace("/", "_")
        shutil.rmtree(cache, ignore_errors=True)
        cache.mkdir(parents=True)
        build = _run_child("build", recipe, cache, args)
        size = _size_gb(cache)
        load = _run_child("load", recipe, cache, args)
        steps = _run_child("steps", recipe, cache, args)
        epoch = steps["step_s"] * steps["steps_per_epoch"]
        rows.append((recipe, build["sizes"], build["seconds"], build["peak_gb"], size, load["seconds"],
                     load["peak_gb"], steps["first_batch_s"], steps["step_s"], epoch, 100 * build["seconds"] / epoch))
        print(f"{recipe}: {json.dumps({'build': build, 'load': load, 'steps': steps})}", file=sys.stderr, flush=True)
    from graphmatch.engine.runs.provenance import cpu_model

    load_avg = os.getloadavg()
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs, one torch thread, load "
          f"average {load_avg[0]:.1f} / {load_avg[1]:.1f} (1 / 5 min) at the end; {args.steps} timed steps\n")
    print("| recipe | train / dev / test | build s | build peak GB | cache GB | load s | load peak GB | "
          "start to first batch s | step s | epoch (estimated) s | build / epoch |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for recipe, sizes, *figures in rows:
        split_sizes = " / ".join(f"{sizes.get(s, 0):,}" for s in ("train", "dev", "test"))
        build_s, build_gb, cache_gb, load_s, load_gb, first_s, step_s, epoch_s, share = figures
        print(f"| {recipe} | {split_sizes} | {build_s:.1f} | {build_gb:.2f} | {cache_gb:.2f} | {load_s:.1f} | "
              f"{load_gb:.2f} | {first_s:.1f} | {step_s:.2f} | {epoch_s:,.0f} | {share:.2f} % |")


if __name__ == "__main__":
    main()
