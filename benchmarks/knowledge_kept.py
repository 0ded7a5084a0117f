"""What knowledge that fits the sentence keeps: the trees of the first N training sentences of a
dataset built with K-BERT's injection and with a selection, side by side (no training).

    python benchmarks/knowledge_kept.py --dataset sst2 --kg wordnet --pretrained minilm -n 5000
    python benchmarks/knowledge_kept.py --dataset chnsenticorp --kg hownet --pretrained e5-small -n 500 --select 0.84

For each arm: sentences with a branch, branches per sentence, matched words per sentence and
tree tokens per sentence (what a batch is padded to grows with it: the training-time cost of
knowledge), with its ratio to the trunk alone. Markdown on stdout, for docs/knowledge_selection.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphmatch.data.kbert import source_file, tree_builder  # noqa: E402
from graphmatch.graphs.branch_selection import BranchSelection  # noqa: E402
from graphmatch.graphs.kbert.options import TreeOptions  # noqa: E402
from graphmatch.io.text_files import iter_lines  # noqa: E402
from graphmatch.knowledge import resolve_kg  # noqa: E402
from graphmatch.pretrained import resolve_pretrained  # noqa: E402
from graphmatch.tasks.sentence_embedder import SentenceEmbedder  # noqa: E402
from graphmatch.text.pretrained import pretrained_vocab, tokenization_of  # noqa: E402


def texts_of(dataset: str, n: int, root: str | None) -> list[str]:
    lines = iter(iter_lines(source_file(dataset, "train", root)))
    header = next(lines).split("\t")
    column = header.index("text_a" if "text_a" in header else "sentence")
    out = []
    for line in lines:
        if line.strip():
            out.append(line.split("\t")[column])
        if len(out) >= n:
            break
    return out


def row(label: str, trees, trunk: float) -> str:
    branches = np.asarray(trees.counts["entity"])
    words = np.asarray(trees.counts["word"])
    tokens = np.asarray(trees.counts["token"]).mean()
    return (f"| {label} | {100 * (branches > 0).mean():.1f} % | {branches.mean():.2f} | {words.mean():.2f} | "
            f"{tokens:.1f} | {tokens / trunk:.2f}× |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="sst2")
    p.add_argument("--kg", default="wordnet")
    p.add_argument("--pretrained", default="minilm")
    p.add_argument("-n", type=int, default=5000, help="training sentences read")
    p.add_argument("--select", type=float, help="also an arm selected by the encoder at this cosine")
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--data-dir")
    args = p.parse_args(argv)
    checkpoint = resolve_pretrained(args.pretrained)
    vocab = checkpoint.vocab or pretrained_vocab(checkpoint.folder)
    kind = tokenization_of(vocab)
    lowercase = True
    texts = texts_of(args.dataset, args.n, args.data_dir)
    kg = resolve_kg(args.kg, args.data_dir)
    arms = {"no knowledge": (None, {}), "K-BERT's injection": (kg, {})}
    if kind == "wordpiece":
        arms["read as nouns only"] = (kg, {"noun_reading": True})
    if args.select is not None:
        arms[f"selected by the encoder (cosine ≥ {args.select})"] = (kg, {"select": args.select})
    print(f"{args.dataset}, first {len(texts):,} training sentences, {args.kg} on {args.pretrained}, "
          f"trees cut at {args.max_length}\n")
    print("| arm | sentences with a branch | branches / sentence | matched words / sentence | tree tokens / "
          "sentence | vs trunk |")
    print("|---|---|---|---|---|---|")
    trunk = None
    for label, (graph, extra) in arms.items():
        options = TreeOptions(max_length=args.max_length, tokenization=kind, lowercase=lowercase,
                              noun_reading=extra.get("noun_reading", False))
        selection = (BranchSelection(SentenceEmbedder(checkpoint), threshold=extra["select"])
                     if "select" in extra else None)
        trees = tree_builder(graph, vocab, options, selection=selection).build(texts)
        if trunk is None:
            trunk = float(np.asarray(trees.counts["token"]).mean())
        print(row(label, trees, trunk))
        if selection is not None:
            kept, seen = selection.counts[1], selection.counts[0]
            print(f"\n(selection kept {kept:,} of {seen:,} candidates, {100 * kept / max(seen, 1):.1f} %)",
                  file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
