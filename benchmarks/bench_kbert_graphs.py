"""Speed and memory of K-BERT sentence-tree building, side by side with the reference's design.

Ours: :class:`graphmatch.graphs.kbert.SentenceTreeBuilder` (O(L) tensors per sample), then per
batch PyG collation and :func:`graphmatch.graphs.kbert.dense_inputs` (the ``[B, L, L]`` mask).
Baseline: a plain per-sentence Python loop in the reference's design (K-BERT's
``brain/knowgraph.py``): the same K-Query and values, an ``L x L`` float64 visibility matrix
filled row by row, padded to ``max_length`` and kept as a bool array with int64 ids, positions
and segments; per batch the arrays are stacked into tensors. Both produce the same visibility
(checked on the first samples before timing).

Run (prints a Markdown table for docs/benchmarks.md)::

    PYTHONPATH=. python benchmarks/bench_kbert_graphs.py --data-dir ../shared/data
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Batch

from graphmatch.graphs.kbert import SentenceTreeBuilder, dense_inputs, fold
from graphmatch.knowledge import KnowledgeGraph
from graphmatch.text import CharTokenizer


class ReferenceDesign:
    """Per-sentence tree lists and a dense ``L x L`` matrix filled in Python, as the reference does."""

    def __init__(self, kg: KnowledgeGraph, tokenizer: CharTokenizer, max_length: int, max_entities: int = 2):
        self.kg, self.tokenizer, self.max_length, self.max_entities = kg, tokenizer, max_length, max_entities

    def __call__(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        text = "".join(text.split())
        words: list[tuple[str, list[str]]] = [("[CLS]", [])]
        cursor = 0
        for span in self.kg.longest_matches(fold(text)):
            words.extend((ch, []) for ch in text[cursor:span.start])
            words.append((text[span.start:span.end], self.kg.values(span.word, self.max_entities)))
            cursor = span.end
        words.extend((ch, []) for ch in text[cursor:])
        tokens: list[str] = []
        pos: list[int] = []
        seg: list[int] = []
        trunk_abs: list[int] = []
        tree = []
        p = a = -1
        for word, values in words:
            chars = [word] if word == "[CLS]" else list(word)
            w_pos = [p + k for k in range(1, len(chars) + 1)]
            w_abs = [a + k for k in range(1, len(chars) + 1)]
            a = w_abs[-1]
            tokens += chars
            pos += w_pos
            seg += [0] * len(chars)
            trunk_abs += w_abs
            branches = []
            for value in values:
                b_abs = [a + k for k in range(1, len(value) + 1)]
                a = b_abs[-1]
                branches.append(b_abs)
                tokens += list(value)
                pos += [w_pos[-1] + k for k in range(1, len(value) + 1)]
                seg += [1] * len(value)
            p = w_pos[-1]
            tree.append((w_abs, branches))
        n, length = len(tokens), self.max_length
        visible = np.zeros((n, n))
        for w_abs, branches in tree:
            for i in w_abs:
                visible[i, trunk_abs + [j for b in branches for j in b]] = 1
            for b_abs in branches:
                for i in b_abs:
                    visible[i, b_abs + w_abs] = 1
        if n < length:
            visible = np.pad(visible, ((0, length - n), (0, length - n)))
            tokens += ["[PAD]"] * (length - n)
            pos += [length - 1] * (length - n)
            seg += [0] * (length - n)
        else:
            visible = visible[:length, :length]
            tokens, pos, seg = tokens[:length], pos[:length], seg[:length]
        ids = [self.tokenizer.token_to_id(t) for t in tokens]
        return np.array(ids), np.array(pos), np.array(seg), visible.astype(bool)


def graph_bytes(data) -> int:
    return sum(v.numel() * v.element_size() for store in data.stores for v in store.values()
               if isinstance(v, torch.Tensor))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA", "../shared/data"))
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None, help="first N sentences only (default: all)")
    parser.add_argument("--mode", choices=("default", "reference"), default="default")
    parser.add_argument("--check", type=int, default=300, help="samples checked equal before timing")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    root = Path(args.data_dir)
    t0 = time.perf_counter()
    kg = KnowledgeGraph.load("hownet", root)
    kg.trie  # noqa: B018 - build it outside the timings
    tokenizer = CharTokenizer.default(root)
    lines = (root / "kbert/datasets/book_review/test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    texts = [line.split("\t")[1] for line in lines][: args.limit]
    builder = SentenceTreeBuilder(kg, tokenizer, max_length=args.max_length, mode=args.mode)
    baseline = ReferenceDesign(kg, tokenizer, args.max_length)
    print(f"loaded HowNet ({len(kg)} subjects) and {len(texts)} sentences in {time.perf_counter() - t0:.1f} s")

    for text in texts[: args.check]:  # same input, same visibility
        if args.mode == "reference":
            break
        mine = dense_inputs(builder(text))
        ids, pos, _, visible = baseline(text)
        n = mine["input_ids"].shape[1]
        assert np.array_equal(visible[:n, :n], mine["visible"][0].numpy()) and not visible[n:].any()
        assert np.array_equal(pos[:n], mine["pos"][0].numpy()) and np.array_equal(ids[:n], mine["input_ids"][0])

    # the two are timed in alternating chunks, so that both see the same machine load
    graphs, rows = [], []
    t_build = t_collate = t_mask = t_base = t_base_batch = 0.0
    for i in range(0, len(texts), args.batch_size):
        chunk = texts[i:i + args.batch_size]
        t0 = time.perf_counter()
        mine = [builder(text) for text in chunk]
        t1 = time.perf_counter()
        batch = Batch.from_data_list(mine)
        t2 = time.perf_counter()
        dense_inputs(batch)
        t3 = time.perf_counter()
        theirs = [baseline(text) for text in chunk]
        t4 = time.perf_counter()
        [torch.from_numpy(np.stack(column)) for column in zip(*theirs, strict=True)]
        t5 = time.perf_counter()
        t_build, t_collate, t_mask = t_build + t1 - t0, t_collate + t2 - t1, t_mask + t3 - t2
        t_base, t_base_batch = t_base + t4 - t3, t_base_batch + t5 - t4
        graphs += mine
        rows += theirs
        if (i // args.batch_size) % 50 == 0:
            print(f"{i + len(chunk)}/{len(texts)} sentences", flush=True)

    n = len(texts)
    ours_bytes = sum(graph_bytes(g) for g in graphs) / n
    tokens = sum(g["token"].num_nodes for g in graphs) / n
    base_bytes = sum(sum(a.nbytes for a in row) for row in rows) / n
    float_bytes = args.max_length ** 2 * 8

    def us(t: float) -> str:
        return f"{t / n * 1e6:,.0f}"

    ours_total, base_total = t_build + t_collate + t_mask, t_base + t_base_batch
    print()
    print(f"book_review/test.tsv, {n} sentences (mean {tokens:.1f} tokens per tree), HowNet, max_length "
          f"{args.max_length}, batch {args.batch_size}, mode {args.mode}; {platform.machine()}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} torch thread(s)")
    print()
    print("| µs per sentence | build | batch | [B, L, L] mask | total | sentences/s (build) | sentences/s (total) "
          "| bytes stored per sample |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| reference design: L×L matrix per sentence | {us(t_base)} | {us(t_base_batch)} | (stored) | "
          f"{us(base_total)} | {n / t_base:,.0f} | {n / base_total:,.0f} | {base_bytes:,.0f} (bool L×L and int64 "
          f"ids/pos/seg; the float64 L×L as built: {float_bytes:,}) |")
    print(f"| `SentenceTreeBuilder` + `dense_inputs` | {us(t_build)} | {us(t_collate)} | {us(t_mask)} | "
          f"{us(ours_total)} | {n / t_build:,.0f} | {n / ours_total:,.0f} | {ours_bytes:,.0f} |")
    print(f"| ratio (reference design / ours) | | | | | {t_base / t_build:.1f}× | {base_total / ours_total:.1f}× "
          f"| {base_bytes / ours_bytes:.0f}× smaller |")


if __name__ == "__main__":
    main()
