"""pkuseg with graphmatch's memory-mapped feature tables against pkuseg's own loading, side by side.

Loads ``PkusegSegmenter()`` (weights and feature tables memory-mapped) and
``PkusegSegmenter(compact=False)`` (pkuseg as shipped) in one process, reports the CPU time of
each load, then segments the first ``--pairs`` LCQMC training pairs (both sentences) with each,
alternating, for ``--passes`` passes: the first pass fills the tables' memos, later ones show the
speed on a large corpus. Every sentence's words must be equal.

    PYTHONPATH=. python benchmarks/bench_pkuseg.py --data-dir $GRAPHMATCH_DATA --pairs 10000

The tables are built on first use (``$GRAPHMATCH_CACHE/pkuseg``); run once before measuring.
"""

from __future__ import annotations

import argparse
import time
import warnings

from graphmatch.io.datafiles import locate
from graphmatch.text.segmenters import PkusegSegmenter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="data root holding lcqmc/ ($GRAPHMATCH_DATA)")
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()

    loaded = {}
    for name, compact in (("tables", True), ("pkuseg", False)):
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the tables must load, not pkuseg's own fallback
            loaded[name] = PkusegSegmenter(compact=compact)
        print(f"load {name}: {time.process_time() - start:.2f} CPU-s", flush=True)
    lines = locate("lcqmc/train.tsv", args.data_dir).read_text(encoding="utf-8").splitlines()[1:args.pairs + 1]
    texts = [text for line in lines for text in line.split("\t")[:2]]
    for n in range(1, args.passes + 1):
        words = {}
        for name, segmenter in loaded.items():
            start = time.process_time()
            words[name] = [segmenter.segment(text) for text in texts]
            ms = 1000 * (time.process_time() - start) / len(texts)
            print(f"pass {n}, {name}: {ms:.3f} CPU-ms a sentence ({len(texts)} sentences)", flush=True)
        different = sum(a != b for a, b in zip(words["tables"], words["pkuseg"], strict=True))
        if different:
            raise SystemExit(f"{different} sentences segmented differently")
    print("words: identical")


if __name__ == "__main__":
    main()
