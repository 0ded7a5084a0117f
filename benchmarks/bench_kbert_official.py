"""K-BERT's knowledge layer against the official code, side by side in one run, on the same inputs.

The official layer is ``KnowledgeGraph.add_knowledge_with_vm`` of autoliuweijie/K-BERT
(``brain/knowgraph.py``, pkuseg with the subjects as its user dictionary), driven one line at a
time as ``run_kbert_cls.py``'s ``add_knowledge_worker`` drives it: the line stripped and split,
``[CLS]a`` or ``[CLS]a[SEP]b[SEP]``, one call with ``add_pad=True`` and ``max_length`` the
sequence length, the token ids looked up and, for a pair, the segment counter over ``[SEP]``.
It is imported from a checkout of that repository (``--official``; never part of this project):

    git clone https://github.com/autoliuweijie/K-BERT && git -C K-BERT checkout da9358e

Its values are kept per subject in a Python ``set`` whose order depends on the string hash seed;
here each subject's values are put in file order (a list, read the same way), the order
``mode="reference"`` injects, so that the outputs can be compared.

Ours, on the same lines: :class:`~graphmatch.graphs.kbert.TreeCorpusBuilder` (all at once)
and :class:`~graphmatch.graphs.kbert.SentenceTreeBuilder` called once per input (what
``predict``, ``show`` and ``inspect`` do), each in reference and in default mode. Before timing,
the first ``--check`` inputs of each set are checked equal: ids, soft positions, segments and the
visible matrix of the official layer against ``dense_inputs`` of the reference-mode graph.
The methods take turns for ``--rounds`` rounds (A B C ... A B C ...); each figure is the median
CPU time of its rounds, and the ratio is the official layer's over ours.

Run (prints a Markdown table for docs/benchmarks.md)::

    PYTHONPATH=. python benchmarks/bench_kbert_official.py --official path/to/K-BERT --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCorpusBuilder, TreeOptions, dense_inputs
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer

CLS, SEP, PAD = "[CLS]", "[SEP]", "[PAD]"


def official_layer(checkout: Path, spo: Path):
    """The official ``KnowledgeGraph`` over ``spo`` (HowNet, predicate + object), values in file order."""
    sys.path.insert(0, str(checkout))
    from brain.knowgraph import KnowledgeGraph as Official  # noqa: PLC0415 - the checkout is only known here

    kg = Official([str(spo)], predicate=True)
    ordered: dict[str, dict[str, None]] = {}
    with open(spo, encoding="utf-8") as f:
        for line in f:
            subj, pred, obj = line.strip().split("\t")
            ordered.setdefault(subj, {})[pred + obj] = None
    kg.lookup_table = {subj: list(values) for subj, values in ordered.items()}
    return kg


def drive(kg, vocab, line: str, length: int):
    """One line through the official layer as ``run_kbert_cls.py`` does: ids, pos, visible, segment mask."""
    fields = line.strip().split("\t")
    text = CLS + fields[0] if len(fields) == 1 else CLS + fields[0] + SEP + fields[1] + SEP
    tokens, pos, vm, _ = kg.add_knowledge_with_vm([text], add_pad=True, max_length=length)
    tokens, pos, vm = tokens[0], pos[0], vm[0].astype("bool")
    ids = [vocab(t) for t in tokens]
    mask, tag = [], 1
    for t in tokens:
        mask.append(0 if t == PAD else tag)
        tag += t == SEP
    return ids, pos, vm, mask


def check(builder: SentenceTreeBuilder, official, lines: list[str], inputs: list[tuple[str, str | None]]) -> None:
    """The official layer's output equals the reference-mode graph's dense inputs, input by input."""
    for line, (a, b) in zip(lines, inputs, strict=True):
        ids, pos, vm, mask = official(line)
        mine = dense_inputs(builder(a, b))
        n = mine["input_ids"].shape[1]
        assert np.array_equal(np.array(ids[:n]), mine["input_ids"][0].numpy()), line
        assert np.array_equal(np.array(pos[:n]), mine["pos"][0].numpy()), line
        assert np.array_equal(np.minimum(np.array(mask[:n]) - 1, 1), mine["seg"][0].numpy()), line
        assert np.array_equal(vm[:n, :n], mine["visible"][0].numpy()) and not vm[n:].any(), line
        assert all(t == 0 for t in ids[n:]), line  # the rest is padding


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--official", type=Path, required=True, help="a checkout of autoliuweijie/K-BERT")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("GRAPHMATCH_DATA", "../shared/data")))
    parser.add_argument("--n", type=int, default=2000, help="inputs of each set (default: 2,000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--check", type=int, default=200, help="inputs of each set checked equal first")
    args = parser.parse_args()
    if not (args.official / "brain" / "knowgraph.py").is_file():
        sys.exit(f"{args.official}: not a checkout of autoliuweijie/K-BERT (no brain/knowgraph.py)")
    torch.set_num_threads(1)
    root = args.data_dir
    spo = root / "kbert/kgs/HowNet.spo"
    kg = KnowledgeGraph.load("hownet", root)
    tokenizer = CharTokenizer.default(root)
    official = official_layer(args.official, spo)

    def rows(path: Path, columns: list[str]) -> tuple[list[str], list[tuple[str, str | None]]]:
        lines = path.read_text(encoding="utf-8").splitlines()
        head = lines[0].split("\t")
        picked = [[line.split("\t")[head.index(c)] for c in columns] for line in lines[1:args.n + 1]]
        return ["\t".join(p) for p in picked], [(p[0], p[1] if len(p) > 1 else None) for p in picked]

    sets = {"book_review test, L = 256": (*rows(root / "kbert/datasets/book_review/test.tsv", ["text_a"]), 256),
            "LCQMC test pairs, L = 128": (*rows(root / "lcqmc/test.tsv", ["text_a", "text_b"]), 128)}
    print(f"{platform.machine()}, torch {torch.__version__}, 1 thread; load average {os.getloadavg()[0]:.1f}; "
          f"{args.n:,} inputs per set, median CPU time of {args.rounds} interleaved rounds\n")
    print("| inputs | official layer µs/input | ours | mode | µs/input | **speed-up** |")
    print("|---|---:|---|---|---:|---:|")
    for name, (lines, inputs, length) in sets.items():
        builders = {mode: SentenceTreeBuilder(kg, tokenizer, TreeOptions(max_length=length, mode=mode))
                    for mode in ("reference", "default")}

        def run_official(lines=lines, length=length):
            return [drive(official, tokenizer.exact_id, line, length) for line in lines]

        check(builders["reference"], lambda line, length=length: drive(official, tokenizer.exact_id, line, length),
              lines[:args.check], inputs[:args.check])
        texts_a = [a for a, _ in inputs]
        texts_b = None if inputs[0][1] is None else [b for _, b in inputs]
        methods = {"official": run_official}
        for mode, builder in builders.items():
            corpus = TreeCorpusBuilder(builder)
            methods[f"corpus {mode}"] = lambda c=corpus, a=texts_a, b=texts_b: c(a, b)
            methods[f"one per call {mode}"] = lambda b=builder, pairs=inputs: [b(a, t) for a, t in pairs]
        for run in methods.values():  # first use: tries, memoised lookups
            run()
        times: dict[str, list[float]] = {m: [] for m in methods}
        for _ in range(args.rounds):
            for m, run in methods.items():
                t0 = time.process_time()
                run()
                times[m].append(time.process_time() - t0)
        us = {m: statistics.median(v) / len(inputs) * 1e6 for m, v in times.items()}
        print(f"<!-- {name}: checked {args.check} inputs equal; rounds (s): "
              f"{ {m: [round(t, 3) for t in v] for m, v in times.items()} } -->")
        for m in methods:
            if m != "official":
                how, mode = m.rsplit(" ", 1)
                print(f"| {name} | {us['official']:,.0f} | {how} | {mode} | {us[m]:,.1f} | "
                      f"**{us['official'] / us[m]:.1f}×** |")


if __name__ == "__main__":
    main()
