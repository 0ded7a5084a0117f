"""What trained K-BERT runs do with their branches, several seeds side by side: a thin caller of
``graphmatch probe`` (:mod:`graphmatch.engine.inference.probe`).

    python benchmarks/branch_attention.py RUN [RUN ...] --input TEST_FILE [--limit N] [--json OUT]

Each run (a trained K-BERT run with a KG) is probed over the inputs of a file with gold labels
(the dataset's own ``test.tsv``): coverage, the attention mass that a trunk token puts on its
branches per layer against a uniform share, the task's first metric with every branch cut out of
the visibility and the pooling, and the labels that change. Several runs (seeds) are summarised as
mean ± std. Markdown on stdout; ``--json`` writes the figures per run. No training and nothing timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphmatch.engine.inference.probe import probe_file  # noqa: E402

COLUMNS = ("with_branch", "branch_tokens", "metric", "metric_cut", "delta", "changed")


def _ms(values: Sequence[float]) -> str:
    return f"{statistics.mean(values):.2f}" + (f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else "")


def report(figures: dict[str, dict]) -> str:
    """Markdown: one row per run and the mean ± std (the task's first metric), then the attention per layer."""
    metric = next(iter(next(iter(figures.values()))["score"]))
    rows = [{**f, "metric": f["score"][metric], "metric_cut": f["score_cut"][metric],
             "delta": f["score"][metric] - f["score_cut"][metric]} for f in figures.values()]
    out = [f"| run | inputs with a branch (%) | branch tokens / input | {metric} | {metric}, branches cut | Δ | "
           "labels changed (%) |", "|---|" + "---:|" * len(COLUMNS)]
    named = list(zip(figures, ([f] for f in rows), strict=True))
    for name, group in named + ([("mean ± std", rows)] if len(rows) > 1 else []):
        out.append(f"| {name} | " + " | ".join(_ms([f[c] for f in group]) for c in COLUMNS) + " |")
    layers = len(rows[0]["attention"])
    out += ["", "Attention mass on branch tokens, trunk queries that see a branch (% of the query's attention; "
            "uniform over the visible keys in the last column):", "",
            "| run | " + " | ".join(f"layer {i + 1}" for i in range(layers)) + " | uniform |",
            "|---|" + "---:|" * (layers + 1)]
    for name, group in named + ([("mean", rows)] if len(rows) > 1 else []):
        cells = [statistics.mean(f["attention"][i] for f in group) for i in range(layers)]
        out.append(f"| {name} | " + " | ".join(f"{a:.1f}" for a in cells)
                   + f" | {statistics.mean(f['uniform'] for f in group):.1f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="trained K-BERT run folders (or best.ckpt files)")
    p.add_argument("--input", required=True, help="a file with gold labels (the dataset's own test.tsv)")
    p.add_argument("--limit", type=int, help="only the first N inputs")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--json", help="also write the figures per run here")
    args = p.parse_args(argv)
    figures = {}
    try:
        for run in args.runs:
            figures[run] = probe_file(run, args.input, limit=args.limit, batch_size=args.batch_size)
            print(f"{run}: done", file=sys.stderr, flush=True)
    except (ValueError, OSError) as err:
        print(f"branch_attention.py: error: {err}", file=sys.stderr)
        return 2
    print(report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
