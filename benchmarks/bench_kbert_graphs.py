"""Speed and memory of K-BERT sentence-tree building, side by side with the reference's design.

Three ways of building the trees of the same sentences, timed in one run:

* **reference design**: a plain per-sentence Python loop after K-BERT's ``brain/knowgraph.py``:
  the same K-Query and values, an ``L x L`` float64 visibility matrix filled row by row, padded
  to ``max_length`` and kept as a bool array with int64 ids, positions and segments;
* **one by one**: :class:`graphmatch.graphs.kbert.SentenceTreeBuilder`, one ``HeteroData`` per
  sentence (O(L) tensors), what ``predict`` and ``inspect`` do: characters queried by the trie
  go through the plain-Python path of :mod:`graphmatch.graphs.kbert.one` (the same graph);
* **corpus**: :class:`graphmatch.graphs.kbert.TreeCorpusBuilder`, all sentences at once,
  vectorised, straight into the ``InMemoryDataset`` storage the datasets save.

With ``--before FILE``, the ``SentenceTreeBuilder`` of another version of
``graphmatch/graphs/kbert.py`` (e.g. ``git show 2e142c4:graphmatch/graphs/kbert.py > FILE``,
the separate per-sentence implementation before the one core) is timed one sentence at a time
in the same rounds, in default and in reference mode, next to the current one.

All of them give the same trees (checked before timing). The methods take turns for ``--rounds``
rounds over all sentences, and each figure is the median of its rounds. Batching is timed after,
on shuffled batches: PyG's ``Batch.from_data_list`` of the stored graphs and
:func:`graphmatch.data.batching.gather_batch` (what the training loaders use), then
:func:`~graphmatch.graphs.kbert.dense_inputs` (the ``[B, L, L]`` mask), against stacking the
reference design's arrays.

Run (prints Markdown tables for docs/benchmarks.md)::

    before=$(mktemp --suffix .py) && git show 2e142c4:graphmatch/graphs/kbert.py > "$before"
    PYTHONPATH=. python benchmarks/bench_kbert_graphs.py --data-dir ../shared/data --before "$before"
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Batch, HeteroData, InMemoryDataset
from torch_geometric.data.collate import collate

from graphmatch.data.batching import gather_batch
from graphmatch.graphs.kbert import SentenceTreeBuilder, TreeCorpusBuilder, dense_inputs, fold
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


def tensor_bytes(obj) -> int:
    """Bytes of every tensor in a graph, a storage or a (nested) slices dict."""
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(tensor_bytes(v) for v in obj.values())
    if hasattr(obj, "stores"):
        return sum(tensor_bytes(dict(store)) for store in obj.stores)
    return 0  # counts kept as Python numbers


def load_before(path: str):
    """The module at ``path`` (an earlier ``graphmatch/graphs/kbert/graph.py``), imported on its own."""
    spec = importlib.util.spec_from_file_location("kbert_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same_graph(a: HeteroData, b: HeteroData) -> bool:
    """Every node and edge tensor equal."""
    return all(torch.equal(a[key][name], b[key][name]) for key in ("token", "word", "entity", *a.edge_types)
               for name, value in a[key].items() if isinstance(value, torch.Tensor))


class Trees(InMemoryDataset):
    """The stored graphs, as a dataset reads them back."""

    def __init__(self, data, slices):
        super().__init__()
        self.data, self.slices = data, slices


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", default=os.environ.get("GRAPHMATCH_DATA", "../shared/data"))
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--limit", type=int, default=None, help="first N sentences only (default: all)")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of each method (default: 3)")
    parser.add_argument("--check", type=int, default=500, help="sentences checked equal before timing")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--before", metavar="FILE", help="an earlier graphmatch/graphs/kbert/graph.py to time one "
                        "sentence at a time next to the current builder")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    root = Path(args.data_dir)
    t0 = time.perf_counter()
    kg = KnowledgeGraph.load("hownet", root)
    kg.trie  # noqa: B018 - build it outside the timings
    tokenizer = CharTokenizer.default(root)
    lines = (root / "kbert/datasets/book_review/test.tsv").read_text(encoding="utf-8").splitlines()[1:]
    texts = [line.split("\t")[1] for line in lines][: args.limit]
    builder = SentenceTreeBuilder(kg, tokenizer, max_length=args.max_length)
    baseline = ReferenceDesign(kg, tokenizer, args.max_length)
    t1 = time.perf_counter()
    corpus = TreeCorpusBuilder(builder)
    builder(texts[0])  # builds the flat trie
    setup = time.perf_counter() - t1
    print(f"loaded HowNet ({len(kg)} subjects) and {len(texts)} sentences in {t1 - t0:.1f} s; "
          f"builder set up (flat trie) in {setup:.2f} s")
    singles = {"one by one": builder,
               "one by one, reference mode": SentenceTreeBuilder(kg, tokenizer, max_length=args.max_length,
                                                                 mode="reference")}
    if args.before:
        before = load_before(args.before)
        singles["before: one by one"] = before.SentenceTreeBuilder(kg, tokenizer, max_length=args.max_length)
        singles["before: one by one, reference mode"] = before.SentenceTreeBuilder(
            kg, tokenizer, max_length=args.max_length, mode="reference")

    # same input, same trees: corpus == one by one, and one by one == the reference design
    sample = texts[: args.check]
    data, slices = corpus(sample)
    expected, expected_slices, _ = collate(HeteroData, [builder(t) for t in sample], increment=False,
                                           add_batch=False)
    for key, value in expected_slices.items():
        for name, ptr in value.items():
            assert torch.equal(slices[key][name], ptr) and torch.equal(data[key][name], expected[key][name]), key
    for text in sample:
        mine = dense_inputs(builder(text))
        ids, pos, _, visible = baseline(text)
        n = mine["input_ids"].shape[1]
        assert np.array_equal(visible[:n, :n], mine["visible"][0].numpy()) and not visible[n:].any()
        assert np.array_equal(pos[:n], mine["pos"][0].numpy()) and np.array_equal(ids[:n], mine["input_ids"][0])
    if args.before:
        for mode in ("", ", reference mode"):
            now, then = singles["one by one" + mode], singles["before: one by one" + mode]
            assert all(same_graph(now(text), then(text)) for text in sample), mode
    print(f"checked {len(sample)} sentences: all give the same trees")
    for single in singles.values():  # first use: tries, memoised lookups
        for text in texts:
            single(text)

    methods = {
        "reference": lambda: [baseline(text) for text in texts],
        "corpus": lambda: corpus(texts),
        **{name: (lambda b=b: [b(text) for text in texts]) for name, b in singles.items()},
    }
    times: dict[str, list[float]] = {name: [] for name in methods}
    results = {}
    for r in range(args.rounds):
        for name, run in methods.items():
            t0 = time.perf_counter()
            results[name] = run()
            times[name].append(time.perf_counter() - t0)
        print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    build = {name: statistics.median(v) for name, v in times.items()}

    n = len(texts)
    stored = Trees(*results["corpus"])
    rows = results["reference"]
    order = np.random.default_rng(0).permutation(n)  # shuffled batches, as in training
    t_pyg = t_gather = t_mask = t_stack = 0.0
    for i in range(0, n, args.batch_size):
        index = order[i:i + args.batch_size].tolist()
        t0 = time.perf_counter()
        batch = Batch.from_data_list([stored[j] for j in index])
        t1 = time.perf_counter()
        gathered = gather_batch(stored, index)
        t2 = time.perf_counter()
        dense_inputs(gathered)
        t3 = time.perf_counter()
        [torch.from_numpy(np.stack(column)) for column in zip(*(rows[j] for j in index), strict=True)]
        t4 = time.perf_counter()
        t_pyg, t_gather = t_pyg + t1 - t0, t_gather + t2 - t1
        t_mask, t_stack = t_mask + t3 - t2, t_stack + t4 - t3
        if i == 0:
            assert torch.equal(batch["token", "in", "entity"].edge_index, gathered["token", "in", "entity"].edge_index)

    ours_bytes = (tensor_bytes(stored._data) + tensor_bytes(stored.slices)) / n
    one_bytes = sum(tensor_bytes(g) for g in results["one by one"]) / n
    tokens = stored._data["token"].num_nodes / n
    base_bytes = sum(sum(a.nbytes for a in row) for row in rows) / n
    float_bytes = args.max_length ** 2 * 8

    def us(t: float) -> str:
        return f"{t / n * 1e6:,.1f}"

    print()
    print(f"book_review/test.tsv, {n} sentences (mean {tokens:.1f} tokens per tree), HowNet, max_length "
          f"{args.max_length}, mode default; median of {args.rounds} rounds; {platform.machine()}, "
          f"torch {torch.__version__}, {torch.get_num_threads()} torch thread(s); "
          f"load average {os.getloadavg()[0]:.1f}")
    print()
    print("| building | µs per sentence | sentences/s | speed-up over the reference design "
          "| bytes stored per sample |")
    print("|---|---:|---:|---:|---:|")
    print(f"| reference design: L×L matrix per sentence | {us(build['reference'])} | {n / build['reference']:,.0f} "
          f"| 1.0× | {base_bytes:,.0f} (bool L×L and int64 ids/pos/seg; the float64 L×L as built: "
          f"{float_bytes:,}) |")
    print(f"| `SentenceTreeBuilder`, one graph per sentence | {us(build['one by one'])} | "
          f"{n / build['one by one']:,.0f} | {build['reference'] / build['one by one']:.1f}× | {one_bytes:,.0f} |")
    print(f"| `TreeCorpusBuilder`, all sentences at once | {us(build['corpus'])} | {n / build['corpus']:,.0f} | "
          f"**{build['reference'] / build['corpus']:.1f}×** | {ours_bytes:,.0f} "
          f"(**{base_bytes / ours_bytes:.0f}× smaller**) |")
    print()
    print("| one sentence per call (`SentenceTreeBuilder(...)(text)`) | µs per sentence | vs before |")
    print("|---|---:|---:|")
    for mode in ("", ", reference mode"):
        now = build["one by one" + mode]
        then = build.get("before: one by one" + mode)
        if then is not None:
            print(f"| before{mode}: separate per-sentence implementation (`--before`) | {us(then)} | 1.0× |")
        print(f"| now{mode}: a corpus of one through the core | {us(now)} | "
              f"{'' if then is None else f'{now / then:.2f}×'} |")
    print()
    print(f"| shuffled batches of {args.batch_size} | µs per sentence |")
    print("|---|---:|")
    print(f"| reference design: stack the stored arrays | {us(t_stack)} |")
    print(f"| PyG: `Batch.from_data_list` of the stored graphs | {us(t_pyg)} |")
    print(f"| ours: `gather_batch` from the storage (what the loaders use) | {us(t_gather)} |")
    print(f"| ours: `dense_inputs` (padded inputs and the [B, L, L] mask) | {us(t_mask)} |")
    total_ref, total_ours = build["reference"] + t_stack, build["corpus"] + t_gather + t_mask
    print(f"\nbuild + batch: reference design {us(total_ref)} µs, ours {us(total_ours)} µs per sentence "
          f"({total_ref / total_ours:.1f}×)")


if __name__ == "__main__":
    main()
