"""One K-BERT input per call: this checkout's ``graphmatch/graphs/kbert/one.py`` against another
version of that file, interleaved in one process, on the same inputs.

What ``predict``, ``show`` and ``inspect`` build per input (characters queried by the trie, see
:class:`~graphmatch.graphs.kbert.OneTree`). The previous version is loaded from a file
(``--before``, e.g. ``git show COMMIT:graphmatch/graphs/kbert_one.py > before.py``) and built on
the same :class:`~graphmatch.graphs.kbert.SentenceTreeBuilder`. Before timing, the graphs of the
first ``--check`` inputs of each set are checked equal tensor by tensor; then the two take turns
for ``--rounds`` rounds over ``--n`` inputs, and each figure is the median CPU time per input.

    git show 18b917e:graphmatch/graphs/kbert_one.py > /tmp/before.py
    PYTHONPATH=. python benchmarks/bench_kbert_one.py --before /tmp/before.py --data-dir "$GRAPHMATCH_DATA"
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from pathlib import Path

import torch

from graphmatch.graphs.kbert import OneTree, SentenceTreeBuilder, TreeOptions
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer


def load_before(path: Path) -> type:
    """``OneTree`` of another version of ``kbert_one.py``."""
    spec = importlib.util.spec_from_file_location("kbert_one_before", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.OneTree


def same_graph(g1, g2) -> bool:
    return all(torch.equal(v, g2[key][name]) if torch.is_tensor(v) else v == g2[key][name]
               for key in ("token", "word", "entity") for name, v in g1[key].items())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="another version of kbert_one.py")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("GRAPHMATCH_DATA", "../shared/data")))
    parser.add_argument("--n", type=int, default=2000, help="inputs of each set")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--check", type=int, default=300, help="inputs of each set checked equal first")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    root = args.data_dir
    kg, tokenizer, before = KnowledgeGraph.load("hownet", root), CharTokenizer.default(root), load_before(args.before)

    def rows(path: Path, columns: list[str]) -> list[tuple[str, str | None]]:
        lines = path.read_text(encoding="utf-8").splitlines()
        head = lines[0].split("\t")
        picked = [[line.split("\t")[head.index(c)] for c in columns] for line in lines[1:args.n + 1]]
        return [(p[0], p[1] if len(p) > 1 else None) for p in picked]

    sets = {"LCQMC test pairs, L = 128": (rows(root / "lcqmc/test.tsv", ["text_a", "text_b"]), 128),
            "book_review test, L = 256": (rows(root / "kbert/datasets/book_review/test.tsv", ["text_a"]), 256)}
    print(f"torch {torch.__version__}, 1 thread; load average {os.getloadavg()[0]:.1f}; {args.n:,} inputs per set, "
          f"median CPU time of {args.rounds} interleaved rounds\n")
    print("| inputs | mode | before µs/input | now µs/input | **speed-up** |")
    print("|---|---|---:|---:|---:|")
    for name, (inputs, length) in sets.items():
        for mode in ("default", "reference"):
            builder = SentenceTreeBuilder(kg, tokenizer, TreeOptions(max_length=length, mode=mode))
            trees = {"before": before(builder), "now": OneTree(builder)}
            for a, b in inputs[:args.check]:
                if not same_graph(trees["before"](a, b), trees["now"](a, b)):
                    raise SystemExit(f"{name}, {mode}: the graphs of {a!r} / {b!r} differ")
            for tree in trees.values():  # first use: memoised lookups
                for a, b in inputs:
                    tree(a, b)
            times: dict[str, list[float]] = {k: [] for k in trees}
            for _ in range(args.rounds):
                for k, tree in trees.items():
                    t0 = time.process_time()
                    for a, b in inputs:
                        tree(a, b)
                    times[k].append(time.process_time() - t0)
            us = {k: statistics.median(v) / len(inputs) * 1e6 for k, v in times.items()}
            print(f"| {name} | {mode} | {us['before']:.1f} | {us['now']:.1f} | **{us['before'] / us['now']:.2f}×** |")


if __name__ == "__main__":
    main()
