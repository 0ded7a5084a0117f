"""Speed and size of LET's lattice pair graphs and of the LET model on LCQMC test pairs.

Graphs: pairs/s of :class:`LatticePairBuilder` over the first ``--pairs`` LCQMC test pairs for each
``--segmentations`` entry (segmenter models loaded and warmed up before timing), and the bytes
stored per sample (tensor bytes of the built graphs; ``text`` labels are off, as in datasets).

Model: training pairs/s (forward, loss, backward, the recipe's optimiser) and inference pairs/s
(no gradients) of each ``--recipes`` model on batches of those graphs, and the share of
per-pair time spent building graphs against time in the model.

    PYTHONPATH=. python benchmarks/bench_let.py --data-dir ../shared/data --pairs 12500 \\
        --segmentations jieba lattice --recipes let/lcqmc_quick --threads 1
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import time

import torch
from torch_geometric.data import HeteroData
from torch_geometric.loader import DataLoader

from graphmatch.data.let import lcqmc_file, read_pairs
from graphmatch.engine.training.optim import build_optimizer, param_groups
from graphmatch.graphs.let import LatticePairBuilder, parse_segmenters
from graphmatch.graphs.let_options import LatticeOptions
from graphmatch.knowledge import load_lexicon
from graphmatch.tasks.let import LETTask
from graphmatch.tasks.recipes.resolve import resolve
from graphmatch.text import CharTokenizer, get_segmenter


def graph_bytes(data: HeteroData) -> int:
    """Bytes of every tensor a stored graph holds."""
    total = 0
    for store in data.stores:
        for value in store.values():
            if isinstance(value, torch.Tensor):
                total += value.numel() * value.element_size()
    return total


def bench_graphs(segmentation: str, pairs: list, args: argparse.Namespace) -> tuple[dict, list[HeteroData]]:
    tokenizer = CharTokenizer.default(args.data_dir)
    lexicon = load_lexicon(args.data_dir)
    builder = LatticePairBuilder(tokenizer, lexicon, LatticeOptions(segmenters=segmentation, max_length=128))
    for name in parse_segmenters(segmentation):  # load the models outside the timing
        with contextlib.suppress(ImportError):  # an optional segmenter that is missing is skipped
            get_segmenter(name).segment("预热一下")
    start = time.perf_counter()
    graphs = [builder(p.text_a, p.text_b, p.label) for p in pairs]
    elapsed = time.perf_counter() - start
    sizes = [graph_bytes(g) for g in graphs]
    counts = {t: sum(g[t].num_nodes for g in graphs) / len(graphs) for t in ("token", "word", "sense", "sememe")}
    edges = {"-".join(et): sum(g[et].edge_index.size(1) for g in graphs) / len(graphs)
             for et in graphs[0].edge_types}
    return {
        "segmentation": segmentation,
        "pairs": len(graphs),
        "seconds": round(elapsed, 2),
        "pairs_per_s": round(len(graphs) / elapsed, 1),
        "ms_per_pair": round(1000 * elapsed / len(graphs), 3),
        "bytes_per_sample_mean": round(sum(sizes) / len(sizes)),
        "bytes_per_sample_max": max(sizes),
        "nodes_per_sample": {k: round(v, 1) for k, v in counts.items()},
        "edges_per_sample": {k: round(v, 1) for k, v in edges.items()},
    }, graphs


def bench_model(recipe: str, graphs: list[HeteroData], build_ms: float, args: argparse.Namespace) -> dict:
    config = resolve(recipe, [f"data.root={args.data_dir}"] if args.data_dir else [])
    task = LETTask(config)
    torch.manual_seed(0)
    model = task.build_model()
    task.init_weights(model)
    optimizer = build_optimizer(param_groups(model, task.encoder_parameters(model), config["optim"]),
                                config["optim"])
    batch_size = config["train"]["batch_size"]
    loader = DataLoader(graphs, batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0))
    model.train()
    pairs, elapsed = 0, 0.0
    for k, batch in enumerate(loader):
        if k == args.warmup + args.train_batches:
            break
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = task.loss(model(batch), batch)
        loss.backward()
        optimizer.step()
        if k >= args.warmup:
            elapsed += time.perf_counter() - start
            pairs += batch.num_graphs
    train_rate = pairs / elapsed

    model.eval()
    eval_batch = config["train"]["eval_batch_size"] or batch_size
    loader = DataLoader(graphs, batch_size=eval_batch)
    pairs, elapsed = 0, 0.0
    with torch.no_grad():
        for k, batch in enumerate(loader):
            start = time.perf_counter()
            model(batch)
            if k >= args.warmup:
                elapsed += time.perf_counter() - start
                pairs += batch.num_graphs
    infer_rate = pairs / elapsed
    infer_ms = 1000 / infer_rate
    train_ms = 1000 / train_rate
    return {
        "recipe": recipe,
        "senses": model.config.senses,
        "hidden": model.config.hidden,
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_batch": batch_size,
        "eval_batch": eval_batch,
        "train_pairs_per_s": round(train_rate, 1),
        "inference_pairs_per_s": round(infer_rate, 1),
        "graph_build_share_training": round(build_ms / (build_ms + train_ms), 3),
        "graph_build_share_inference": round(build_ms / (build_ms + infer_ms), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="data root with lcqmc/, hownet/, kbert/vocab/")
    parser.add_argument("--pairs", type=int, default=12500, help="first N LCQMC test pairs")
    parser.add_argument("--segmentations", nargs="+", default=["jieba", "lattice"])
    parser.add_argument("--recipes", nargs="*", default=["let/lcqmc_quick"])
    parser.add_argument("--model-segmentation", default="lattice", help="graphs the models run on")
    parser.add_argument("--train-batches", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="also write the results to this JSON file")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    pairs = read_pairs(lcqmc_file("test", args.data_dir), limit=args.pairs)
    results: dict = {"machine": f"{platform.processor() or platform.machine()}, torch threads {args.threads}",
                     "torch": torch.__version__, "graphs": [], "models": []}
    model_graphs, build_ms = None, None
    for segmentation in args.segmentations:
        row, graphs = bench_graphs(segmentation, pairs, args)
        results["graphs"].append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
        if segmentation == args.model_segmentation:
            model_graphs, build_ms = graphs, row["ms_per_pair"]
    if args.recipes:
        if model_graphs is None:
            row, model_graphs = bench_graphs(args.model_segmentation, pairs, args)
            build_ms = row["ms_per_pair"]
        for recipe in args.recipes:
            row = bench_model(recipe, model_graphs, build_ms, args)
            results["models"].append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
