"""Batching speed: PyG's ``Batch.from_data_list`` of stored samples against
:func:`graphmatch.data.batching.gather_batch` (what the training and evaluation loaders use), on
the real datasets of all three papers.

For each dataset: shuffled batches over its samples; both ways are timed on the same batches,
alternating, and every batch is checked equal. Run (prints a Markdown table)::

    PYTHONPATH=. python benchmarks/bench_batching.py --data-dir ../shared/data --cache /tmp/graphmatch-bench
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch
from torch_geometric.data import Batch

from graphmatch.data.batching import gather_batch
from graphmatch.data.kbert import kbert_dataset
from graphmatch.data.let import PairMatchingDataset, lcqmc_file
from graphmatch.data.semeval import SemEval2010Task8
from graphmatch.graphs.let import LatticePairBuilder
from graphmatch.knowledge import load_lexicon
from graphmatch.text import CharTokenizer


def time_batches(dataset, batch_size: int) -> tuple[float, float]:
    """Seconds per sample of PyG's collation and of ``gather_batch`` over shuffled batches."""
    order = np.random.default_rng(0).permutation(len(dataset))
    pyg = ours = 0.0
    for i in range(0, len(order), batch_size):
        index = order[i:i + batch_size].tolist()
        t0 = time.perf_counter()
        theirs = Batch.from_data_list([dataset[j] for j in index])
        t1 = time.perf_counter()
        mine = gather_batch(dataset, index)
        t2 = time.perf_counter()
        pyg, ours = pyg + t1 - t0, ours + t2 - t1
        for store in theirs.stores:
            other = mine[store._key] if store._key is not None else mine._global_store
            assert all(torch.equal(other[k], v) for k, v in store.items() if isinstance(v, torch.Tensor))
    return pyg / len(order), ours / len(order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA", "../shared/data"))
    parser.add_argument("--cache", default="/tmp/graphmatch-bench", help="where the datasets' graphs are cached")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--let-pairs", type=int, default=2000, help="LCQMC dev pairs for LET (default: 2000)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    tokenizer = CharTokenizer.default(args.data_dir)
    datasets = {
        "K-BERT chnsenticorp dev (HowNet, L 256)": kbert_dataset(
            "chnsenticorp", "dev", root=args.data_dir, cache=args.cache, progress=False),
        "K-BERT msra_ner dev (HowNet, L 256)": kbert_dataset(
            "msra_ner", "dev", root=args.data_dir, cache=args.cache, progress=False),
        f"LET LCQMC dev, first {args.let_pairs} pairs (lattice of 3 segmenters)": PairMatchingDataset(
            lcqmc_file("dev", args.data_dir), LatticePairBuilder(tokenizer, load_lexicon(args.data_dir)),
            root=args.data_dir, cache=os.path.join(args.cache, "let"), limit=args.let_pairs, progress=False),
        "SemEval-2010 Task 8 test": SemEval2010Task8("test", cache=os.path.join(args.cache, "semeval"),
                                                      root=args.data_dir),
    }
    print(f"shuffled batches of {args.batch_size}; {platform.machine()}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} torch thread(s); load average {os.getloadavg()[0]:.1f}\n")
    print("| dataset | samples | PyG `Batch.from_data_list`, µs/sample | `gather_batch`, µs/sample | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for name, dataset in datasets.items():
        pyg, ours = time_batches(dataset, args.batch_size)
        print(f"| {name} | {len(dataset):,} | {pyg * 1e6:,.1f} | {ours * 1e6:,.1f} | **{pyg / ours:.1f}×** |",
              flush=True)


if __name__ == "__main__":
    main()
