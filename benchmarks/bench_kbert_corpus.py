"""K-BERT's corpus builder (:class:`~graphmatch.graphs.kbert.TreeCorpusBuilder`) of this
checkout against another checkout's, in processes that take turns.

Each process loads HowNet and the vocabulary, builds the trees of the first ``--n`` inputs of
LCQMC test (pairs, L = 128) and of book_review test (L = 256) in both modes ``--rounds`` times,
and reports the least CPU time per input (the build least disturbed) and a digest of the trees.
With ``--against DIR`` the two checkouts run in turn, ``--runs`` times each (A B A B ...: the speed of these shared
machines drifts from process to process), and the table gives each side's median and the
ratio of every pair of runs (its median and range); the digests must agree, so the trees are
the same. Without ``--against``, one process of this checkout prints its own figures.

    git worktree add ../before COMMIT
    PYTHONPATH=. python benchmarks/bench_kbert_corpus.py --against ../before --data-dir "$GRAPHMATCH_DATA"
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
SETS = {"LCQMC test pairs, L = 128": ("lcqmc/test.tsv", ("text_a", "text_b"), 128),
        "book_review test, L = 256": ("kbert/datasets/book_review/test.tsv", ("text_a",), 256)}
MODES = ("default", "reference")


def measure(data_dir: Path, n: int, rounds: int) -> dict[str, dict[str, object]]:
    """``{"<set> / <mode>": {"us": least µs per input, "digest": sha256 of the trees}}`` of the
    ``graphmatch`` this process imports."""
    import torch

    from graphmatch.graphs.kbert import SentenceTreeBuilder

    try:  # builders that take options, or an older checkout's, which take keywords
        from graphmatch.graphs.kbert import TreeOptions
    except ImportError:
        TreeOptions = None
    try:  # the package (graphmatch.graphs.kbert.corpus), or an older checkout's module
        from graphmatch.graphs.kbert.corpus import TreeCorpusBuilder
    except ImportError:
        from graphmatch.graphs.kbert_corpus import TreeCorpusBuilder
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.text import CharTokenizer

    torch.set_num_threads(1)
    kg, tokenizer = KnowledgeGraph.load("hownet", data_dir), CharTokenizer.default(data_dir)
    out = {}
    for name, (path, columns, length) in SETS.items():
        lines = (data_dir / path).read_text(encoding="utf-8").splitlines()
        head = lines[0].split("\t")
        rows = [line.split("\t") for line in lines[1:n + 1]]
        texts = [[row[head.index(c)] for row in rows] for c in columns]
        for mode in MODES:
            builder = (SentenceTreeBuilder(kg, tokenizer, TreeOptions(max_length=length, mode=mode)) if TreeOptions
                       else SentenceTreeBuilder(kg, tokenizer, max_length=length, mode=mode))
            corpus = TreeCorpusBuilder(builder)
            data, _ = corpus(*texts)  # first use: tries, memoised lookups
            digest = hashlib.sha256()
            for store in data.stores:
                for key, value in sorted(store.items()):
                    if torch.is_tensor(value):
                        digest.update(key.encode() + value.numpy().tobytes())
            times = []
            for _ in range(rounds):
                start = time.process_time()
                corpus(*texts)
                times.append(time.process_time() - start)
            out[f"{name} / {mode}"] = {"us": min(times) / len(rows) * 1e6, "digest": digest.hexdigest()}
    return out


def run_in(checkout: Path, args: argparse.Namespace) -> dict[str, dict[str, object]]:
    """:func:`measure` in a new process that imports ``checkout``'s ``graphmatch``."""
    env = {**os.environ, "PYTHONPATH": str(checkout.resolve())}
    cmd = [sys.executable, str(HERE), "--json", "--data-dir", str(args.data_dir), "--n", str(args.n),
           "--rounds", str(args.rounds)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: the benchmark failed: {done.stderr.strip().splitlines()[-1:]}")
    module, figures = json.loads(done.stdout.splitlines()[-1])
    if not Path(module).resolve().is_relative_to(checkout.resolve()):
        raise SystemExit(f"{checkout}: the process imported graphmatch from {module}")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout (the 'before' side)")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("GRAPHMATCH_DATA", "../shared/data")))
    parser.add_argument("--n", type=int, default=2000, help="inputs of each set")
    parser.add_argument("--rounds", type=int, default=9, help="builds timed in each process")
    parser.add_argument("--runs", type=int, default=7, help="processes of each side, in turn")
    parser.add_argument("--json", action="store_true", help="print this process's figures as JSON")
    args = parser.parse_args(argv)
    if args.json or args.against is None:
        figures = measure(args.data_dir, args.n, args.rounds)
        if args.json:
            import graphmatch

            print(json.dumps([graphmatch.__file__, figures]))
        else:
            for key, value in figures.items():
                print(f"{key}: {value['us']:.2f} µs/input")
        return
    if not (args.against / "graphmatch" / "__init__.py").is_file():
        raise SystemExit(f"{args.against}: not a graphmatch checkout (no graphmatch/__init__.py)")
    here = HERE.parents[1]
    runs = [(run_in(args.against, args), run_in(here, args)) for _ in range(args.runs)]
    print(f"{args.runs} processes of each side in turn, {args.n:,} inputs per set, least CPU time of "
          f"{args.rounds} builds in each; 1 thread; load average {os.getloadavg()[0]:.1f}\n")
    print("| inputs | mode | before µs/input | now µs/input | **speed-up** (median of pairs) | pairs' range | trees |")
    print("|---|---|---:|---:|---:|---|---|")
    for key in runs[0][0]:
        before, now = ([side[key]["us"] for side in pair] for pair in zip(*runs, strict=True))
        ratios = [b / a for b, a in zip(before, now, strict=True)]
        same = {side[key]["digest"] for pair in runs for side in pair}
        name, mode = key.rsplit(" / ", 1)
        print(f"| {name} | {mode} | {statistics.median(before):.2f} | {statistics.median(now):.2f} | "
              f"**{statistics.median(ratios):.2f}×** | {min(ratios):.2f}–{max(ratios):.2f} | "
              f"{'the same' if len(same) == 1 else 'DIFFER'} |")


if __name__ == "__main__":
    main()
