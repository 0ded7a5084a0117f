"""A large synthetic knowledge graph with the shape of CN-DBpedia, for memory and speed checks.

Subjects are Chinese strings of 2–12 characters (short ones most common), nearly all with one
triple and a few with several; a handful of predicates, the first ones far more frequent; objects
from a long tail (Zipf, exponent 1.2, over a pool of ``triples // 4`` strings of 1–8 characters).
Deterministic for a seed. ``--triples 2000000`` writes ~45 MB in ~10 s.

    python benchmarks/make_big_kg.py --triples 2000000 --out /tmp/big.spo
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

#: the predicates, most frequent first (CN-DBpedia's infobox keys are similar)
PREDICATES = ("类别", "别名", "位于", "国籍", "作者", "出生地", "所属", "成立时间", "职业", "外文名")
#: code points of the characters used: the first 3,500 CJK unified ideographs
FIRST, CHARS = 0x4E00, 3500


def random_strings(rng: np.random.Generator, n: int, low: int, high: int) -> list[str]:
    """``n`` random strings of CJK characters, of lengths in ``[low, high]`` (shorter ones more
    likely: geometric from ``low``)."""
    lengths = np.minimum(low + rng.geometric(0.25, n) - 1, high)
    codes = rng.integers(FIRST, FIRST + CHARS, int(lengths.sum()), dtype=np.int32)
    text = codes.astype("<u4").tobytes().decode("utf-32-le")
    ends = np.cumsum(lengths).tolist()
    return [text[lo:hi] for lo, hi in zip([0, *ends[:-1]], ends, strict=True)]


def make_lines(triples: int, seed: int = 0) -> list[str]:
    """The ``subject\\tpredicate\\tobject`` lines of a graph of ``triples`` triples."""
    rng = np.random.default_rng(seed)
    per_subject = np.minimum(rng.geometric(0.95, triples), 20)  # ~95 % of the subjects with one triple
    count = int(np.searchsorted(np.cumsum(per_subject), triples)) + 1
    per_subject = per_subject[:count]
    per_subject[-1] -= int(per_subject.sum()) - triples
    subjects = random_strings(rng, count, 2, 12)
    weights = 1.0 / np.arange(1, len(PREDICATES) + 1) ** 1.5
    predicate = rng.choice(len(PREDICATES), triples, p=weights / weights.sum())
    pool = random_strings(rng, max(1, triples // 4), 1, 8)
    obj = np.minimum(rng.zipf(1.2, triples) - 1, len(pool) - 1)
    subject_of = np.repeat(np.arange(count), per_subject)
    return [f"{subjects[s]}\t{PREDICATES[p]}\t{pool[o]}"
            for s, p, o in zip(subject_of.tolist(), predicate.tolist(), obj.tolist(), strict=True)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=2_000_000, help="number of triples (default 2,000,000)")
    parser.add_argument("--out", type=Path, required=True, help="the .spo file to write")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.triples < 1:
        parser.error("--triples must be at least 1")
    args.out.write_text("\n".join(make_lines(args.triples, args.seed)) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
