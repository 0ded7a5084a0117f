"""Equal-budget comparison on SemEval-2010 Task 8: our relation models against the plain baselines.

For every model (``att_blstm``, ``entity_attention``) and seed, trains

* **ours**: ``graphmatch train relation/semeval_<model>`` (the paper-named recipe) with
  ``train.epochs=<epochs> train.patience=null train.seed=<seed> train.threads=<threads>``;
* **baseline**: ``benchmarks/baseline_relation.py <model> --epochs <epochs> --seed <seed>``
  (plain PyTorch, same data, same scorer),

each into its own run folder under ``--out`` (a folder that already holds ``metrics.json`` is
kept, so an interrupted comparison continues where it stopped; but only when its recorded
``provenance`` names the current commit with a clean tree, or a commit given with ``--reuse-from``:
a finished run of other code is an error naming both commits), at most ``--parallel`` at a time,
then reads every run folder and writes ``table.md`` and ``table.json``: mean ± sample std over
the seeds of the official test F1 (checkpoint selected on dev, test scored once), dev F1, the
selected epoch and the training time, and for each pair compared the difference of the means
and whether it exceeds the spread (``|Δ| > std_a + std_b``), and under the table the commit that
made its runs. ``python benchmarks/results.py --verify --only relation_budget`` retrains seed 42
of each row from an empty cache and compares its figures.

    PYTHONPATH=. python benchmarks/relation_budget.py --data-dir $GRAPHMATCH_DATA --seeds 3 --epochs 17 \\
        --out runs/relation_budget
    PYTHONPATH=. python benchmarks/relation_budget.py --out runs/relation_budget --table-only --doc docs/results.md
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("att_blstm", "entity_attention")
IMPLS = ("ours", "baseline")
#: the budget of the table in docs/results.md
EPOCHS = 17


def command(impl: str, model: str, seed: int, run_dir: Path, args: argparse.Namespace) -> list[str]:
    if impl == "baseline":
        cmd = [sys.executable, str(ROOT / "benchmarks" / "baseline_relation.py"), model, "--epochs", str(args.epochs),
               "--seed", str(seed), "--threads", str(args.threads), "--out", str(run_dir)]
        return cmd + (["--data-dir", args.data_dir] if args.data_dir else [])
    sets = [f"train.epochs={args.epochs}", "train.patience=null", f"train.seed={seed}", f"train.threads={args.threads}",
            "train.progress=false", "train.precision=32-true",  # the table's precision, on any CPU,
            "optim.fused=false",  # and its optimiser (the loop over tensors)
            f"data.cache_dir={args.out / 'cache'}"]
    if args.data_dir:
        sets.append(f"data.root={args.data_dir}")
    return [sys.executable, "-m", "graphmatch.cli.main", "train", f"relation/semeval_{model}", "--out", str(run_dir),
            "--set", *sets]


def results():
    """``benchmarks/results.py`` as a module (its blocks and its provenance checks)."""
    if "results" not in sys.modules:
        spec = importlib.util.spec_from_file_location("results", ROOT / "benchmarks" / "results.py")
        module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # its dataclasses look it up
        spec.loader.exec_module(module)
    return sys.modules["results"]


def run_folder(out: Path, impl: str, model: str, seed: int) -> Path:
    return out / f"{impl}-{model}" / f"seed-{seed}"


def run_one(job: tuple[str, str, int], args: argparse.Namespace) -> str:
    impl, model, seed = job
    run_dir = run_folder(args.out, impl, model, seed)
    if (run_dir / "metrics.json").is_file():  # made by allowed code: main checked it first
        return f"{run_dir}: done before"
    if impl == "ours" and run_dir.exists():
        # an unfinished run: graphmatch continues it from its last checkpoint
        cmd = [sys.executable, "-m", "graphmatch.cli.main", "train", "--resume", str(run_dir)]
    else:
        cmd = command(impl, model, seed, run_dir, args)
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    start = time.time()
    with open(run_dir.parent / f"seed-{seed}.log", "w", encoding="utf-8") as log:
        rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed with exit code {rc}; see {run_dir.parent / f'seed-{seed}.log'}")
    results().stamp(run_dir)  # the baseline script records no provenance of its own
    return f"{run_dir}: {time.time() - start:.0f} s"


def prepare_cache(args: argparse.Namespace) -> None:
    """Build the processed graphs once, before parallel runs would each build them."""
    from graphmatch.tasks.base import get_task
    from graphmatch.tasks.recipes.resolve import resolve

    for model in args.models:
        sets = [f"data.cache_dir={args.out / 'cache'}"] + ([f"data.root={args.data_dir}"] if args.data_dir else [])
        get_task("relation")(resolve(f"relation/semeval_{model}", sets)).datasets()


def mean_std(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def collect(out: Path, reuse=None) -> dict[str, dict[str, dict]]:
    """``{model: {impl: {"seeds": [...], "test": (mean, std), ..., "provenance": [...]}}}`` from
    the run folders; a folder that ``reuse`` (a ``results.Reuse``; default: the current commit)
    does not allow is a ``results.StaleRun``."""
    reuse = reuse or results().Reuse.here()
    table: dict[str, dict[str, dict]] = {}
    for model in MODELS:
        for impl in IMPLS:
            runs = sorted((out / f"{impl}-{model}").glob("seed-*/metrics.json"))
            if not runs:
                continue
            made = [record for p in runs for record in reuse.check(p.parent)]
            ms = [json.loads(p.read_text()) for p in runs]
            table.setdefault(model, {})[impl] = {
                "provenance": made,
                "seeds": [m["seed"] for m in ms],
                "epochs": sorted({m["epochs"] for m in ms}),
                "test": mean_std([m["test"]["semeval2010"] for m in ms]),
                "dev": mean_std([m["dev"]["semeval2010"] for m in ms]),
                "best_epoch": mean_std([float(m["best_epoch"]) for m in ms]),
                "time_s": mean_std([float(m["time_s"]) for m in ms]),
                "time_each": [round(float(m["time_s"])) for m in ms],
                "test_each": [round(m["test"]["semeval2010"], 2) for m in ms],
            }
    return table


def compare(a: dict, b: dict) -> dict:
    (ma, sa), (mb, sb) = a["test"], b["test"]
    return {"delta": ma - mb, "spread": sa + sb, "exceeds_spread": abs(ma - mb) > sa + sb}


def markdown(table: dict[str, dict[str, dict]]) -> str:
    fmt = lambda ms, d=2: f"{ms[0]:.{d}f} ± {ms[1]:.{d}f}"  # noqa: E731
    lines = ["| model | implementation | seeds | epochs | test F1 (official) | dev F1 | selected epoch | "
             "test F1 per seed | training s per seed |", "|---|---|---|---|---|---|---|---|---|"]
    for model, impls in table.items():
        for impl, r in impls.items():
            lines.append(f"| {model} | {impl} | {', '.join(map(str, r['seeds']))} | {', '.join(map(str, r['epochs']))} "
                         f"| {fmt(r['test'])} | {fmt(r['dev'])} | {fmt(r['best_epoch'], 1)} "
                         f"| {', '.join(f'{v:.2f}' for v in r['test_each'])} | {', '.join(map(str, r['time_each']))} |")
    lines += ["", "| comparison (test F1) | Δ of means | std_a + std_b | Δ exceeds the spread |", "|---|---|---|---|"]
    pairs = [(f"{m}: ours − baseline", t["ours"], t["baseline"]) for m, t in table.items() if len(t) == 2]
    for impl in IMPLS:
        if impl in table.get("entity_attention", {}) and impl in table.get("att_blstm", {}):
            pairs.append((f"{impl}: entity_attention − att_blstm", table["entity_attention"][impl],
                          table["att_blstm"][impl]))
    for name, a, b in pairs:
        c = compare(a, b)
        lines.append(f"| {name} | {c['delta']:+.2f} | {c['spread']:.2f} | {'yes' if c['exceeds_spread'] else 'no'} |")
    made = [(f"{model} {impl}", record) for model, impls in table.items() for impl, r in impls.items()
            for record in r.get("provenance", [])]
    lines += ["", results().made_by(made)]
    return "\n".join(lines) + "\n"


def fail(err: Exception) -> NoReturn:
    """A user's error: one line on stderr, exit 2."""
    print(f"relation_budget.py: error: {err}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("runs/relation_budget"))
    parser.add_argument("--data-dir", default=None, help="data root holding semeval2010_task8/ ($GRAPHMATCH_DATA)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--impls", nargs="+", choices=IMPLS, default=list(IMPLS))
    parser.add_argument("--seeds", type=int, default=3, help="seeds 42, 43, ...")
    parser.add_argument("--first-seed", type=int, default=42)
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--parallel", type=int, default=2, help="runs at the same time")
    parser.add_argument("--table-only", action="store_true", help="only read the run folders and write the table")
    parser.add_argument("--doc", type=Path, help="also replace the <!-- results:relation_budget --> block of this "
                        "Markdown file (docs/results.md)")
    parser.add_argument("--reuse-from", action="append", default=[], metavar="COMMIT",
                        help="also use finished run folders made by this commit (repeatable); by default only "
                        "those of the current commit are")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    jobs = [(impl, model, seed) for seed in range(args.first_seed, args.first_seed + args.seeds)
            for model in args.models for impl in args.impls]
    try:
        reuse = results().Reuse.here(args.reuse_from)
        for impl, model, seed in jobs:  # a finished run of other code is never silently reused
            reuse.check(run_folder(args.out, impl, model, seed))
    except ValueError as err:  # StaleRun or a bad --reuse-from: one line, exit 2
        fail(err)
    if not args.table_only:
        prepare_cache(args)
        with ThreadPoolExecutor(max_workers=args.parallel) as pool:
            for message in pool.map(lambda job: run_one(job, args), jobs):
                print(message, flush=True)
    try:
        table = collect(args.out, reuse)
    except ValueError as err:  # a finished run of other code among the table's folders
        fail(err)
    if not table:
        raise SystemExit(f"no finished runs under {args.out}")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "table.json").write_text(json.dumps(table, indent=2) + "\n")
    (args.out / "table.md").write_text(markdown(table))
    print(markdown(table))
    if args.doc:
        write_block(args.doc, markdown(table))


def write_block(doc: Path, table_md: str) -> None:
    """Put ``table_md`` into the ``relation_budget`` block of ``doc`` (see benchmarks/results.py)."""
    text = results().replace_block(doc.read_text(encoding="utf-8"), "relation_budget", table_md.rstrip("\n"))
    if text is None:
        raise SystemExit(f"{doc} has no <!-- results:relation_budget --> block")
    doc.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
