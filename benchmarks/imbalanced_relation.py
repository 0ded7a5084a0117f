"""An imbalanced relation corpus from SemEval-2010 Task 8, in the four-column TSV format: the
training file resampled so that the negative label ``Other`` is ``--negative-share`` of it (all
``Other`` sentences kept, the relation sentences drawn at random), as in the Chinese corpora
where an NA label dominates. Dev is held out of the result by the recipe (``data.dev_size``);
test is SemEval's test file without the labels the training file lacks. Sentences whose head or
tail occurs twice in them are left out (the TSV format locates an entity by its first occurrence).

    PYTHONPATH=. python benchmarks/imbalanced_relation.py --data-dir $GRAPHMATCH_DATA --out runs/imbalanced
    # writes runs/imbalanced/train.tsv and test.tsv
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

from graphmatch.data.semeval import TEST_FILE, TRAIN_FILE, locate, read_semeval_file


def tsv_lines(examples) -> list[str]:
    """``head<TAB>tail<TAB>relation<TAB>sentence`` of SemEval examples (e1 is the head)."""
    out = []
    for ex in examples:
        s = ex.sentence
        head, tail = s.entity_text(1), s.entity_text(2)
        if s.text.count(head) != 1 or s.text.count(tail) != 1 or head in tail or tail in head:
            continue
        out.append(f"{head}\t{tail}\t{ex.label}\t{s.text}\n")
    return out


def write_corpus(out: Path, data_dir: str | None = None, negative_share: float = 0.5, seed: int = 1) -> str:
    """Write ``out/train.tsv`` and ``out/test.tsv``; returns a line saying what was written."""
    train = read_semeval_file(locate(TRAIN_FILE, data_dir))
    test = read_semeval_file(locate(TEST_FILE, data_dir))
    other = [ex for ex in train if ex.label == "Other"]
    relations = [ex for ex in train if ex.label != "Other"]
    keep = round(len(other) * (1 - negative_share) / negative_share)
    drawn = random.Random(seed).sample(relations, min(keep, len(relations)))
    chosen = sorted(other + drawn, key=lambda ex: ex.sid)
    out.mkdir(parents=True, exist_ok=True)
    lines = tsv_lines(chosen)
    (out / "train.tsv").write_text("".join(lines), encoding="utf-8")
    labels = Counter(line.split("\t")[2] for line in lines)
    test_lines = [line for line in tsv_lines(test) if line.split("\t")[2] in labels]  # labels train has
    (out / "test.tsv").write_text("".join(test_lines), encoding="utf-8")
    return (f"{out / 'train.tsv'}: {len(lines)} sentences, Other {100 * labels['Other'] / len(lines):.1f} %, "
            f"{len(labels)} labels; {out / 'test.tsv'}: {len(test_lines)} sentences")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="the data root holding semeval2010_task8/")
    parser.add_argument("--out", type=Path, required=True, help="folder for train.tsv and test.tsv")
    parser.add_argument("--negative-share", type=float, default=0.5, help="share of Other in train")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(write_corpus(args.out, args.data_dir, args.negative_share, args.seed))


if __name__ == "__main__":
    main()
