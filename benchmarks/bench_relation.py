"""Training and inference speed (sentences/s) of the relation models on SemEval-2010 Task 8.

Each recipe's model is built through the task (real vocabulary or word pieces, real graphs, the
pretrained weights of a transformer recipe); training runs ``--train-batches`` optimiser steps
(forward, loss, backward, the recipe's optimiser and learning rates) on shuffled training
batches of the recipe's batch size, inference runs over the first ``--eval-sentences`` test
sentences in batches of ``--eval-batch`` without gradients. The first ``--warmup`` batches of
each are not timed. ``--unpacked`` adds, for each transformer recipe, a row with
``model.pack=false`` (one sentence per encoder row, padded to the longest).

    PYTHONPATH=. python benchmarks/bench_relation.py --data-dir ../shared/data \\
        --recipes relation/semeval_att_blstm relation/semeval_entity_attention \\
                  relation/semeval_minilm_entity_start relation/semeval_minilm_entity_attention
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import torch
from torch_geometric.loader import DataLoader

from graphmatch.engine.training.optim import build_optimizer, param_groups
from graphmatch.tasks.recipes.resolve import resolve
from graphmatch.tasks.relation import RelationTask


def bench(recipe: str, args: argparse.Namespace, extra: tuple[str, ...] = ()) -> dict:
    overrides = [f"data.root={args.data_dir}"] if args.data_dir else []
    if args.cache_dir:
        overrides.append(f"data.cache_dir={args.cache_dir}")
    config = resolve(recipe, [*overrides, *extra])
    task = RelationTask(config)
    data = task.datasets()
    device = torch.device(args.device)
    model = task.build_model()
    task.init_weights(model)
    model = model.to(device)
    batch_size = config["train"]["batch_size"]
    groups = param_groups(model, task.encoder_parameters(model), config["optim"])
    optimizer = build_optimizer(groups, config["optim"])
    loader = DataLoader(data["train"], batch_size=batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(0))

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    model.train()
    sentences, elapsed, cpu = 0, 0.0, 0.0
    for k, batch in enumerate(loader):
        if k == args.warmup + args.train_batches:
            break
        batch = batch.to(device)
        sync()
        start, start_cpu = time.perf_counter(), time.process_time()
        optimizer.zero_grad()
        loss = task.loss(model(batch), batch)
        penalty = task.penalty(model)
        (loss if penalty is None else loss + penalty).backward()
        optimizer.step()
        sync()
        if k >= args.warmup:
            elapsed += time.perf_counter() - start
            cpu += time.process_time() - start_cpu
            sentences += batch.num_graphs
    train_speed, train_cpu = sentences / elapsed, sentences / cpu

    model.eval()
    test = data["test"][: args.eval_sentences]
    sentences, elapsed, cpu = 0, 0.0, 0.0
    with torch.no_grad():
        for k, batch in enumerate(DataLoader(test, batch_size=args.eval_batch)):
            batch = batch.to(device)
            sync()
            start, start_cpu = time.perf_counter(), time.process_time()
            model(batch).argmax(-1)
            sync()
            if k >= args.warmup:
                elapsed += time.perf_counter() - start
                cpu += time.process_time() - start_cpu
                sentences += batch.num_graphs
    return {
        "recipe": recipe + "".join(f" {e}" for e in extra),
        "model": config["model"]["name"],
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_batch": batch_size,
        "train_sentences_per_s": round(train_speed, 1),
        "train_sentences_per_cpu_s": round(train_cpu, 1),
        "eval_batch": args.eval_batch,
        "infer_sentences_per_s": round(sentences / elapsed, 1),
        "infer_sentences_per_cpu_s": round(sentences / cpu, 1),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--recipes", nargs="+",
                   default=["relation/semeval_att_blstm", "relation/semeval_entity_attention",
                            "relation/semeval_minilm_entity_start", "relation/semeval_minilm_entity_attention"])
    p.add_argument("--data-dir", default=None, help="data root holding semeval2010_task8/")
    p.add_argument("--cache-dir", default=None, help="processed graphs (default: the cache under $GRAPHMATCH_CACHE)")
    p.add_argument("--unpacked", action="store_true", help="also time each transformer recipe with model.pack=false")
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (1 is fastest on a busy machine)")
    p.add_argument("--train-batches", type=int, default=50)
    p.add_argument("--eval-sentences", type=int, default=800)
    p.add_argument("--eval-batch", type=int, default=100)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--json", default=None, help="also write the rows to this file")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    load_before = os.getloadavg()[0]
    runs = [(r, ()) for r in args.recipes]
    if args.unpacked:
        runs += [(r, ("model.pack=false",)) for r in args.recipes if "minilm" in r or "transformer" in r]
    rows = [bench(r, args, extra) for r, extra in runs]
    load_after = os.getloadavg()[0]
    machine = (torch.cuda.get_device_name(0) if args.device.startswith("cuda")
               else f"{platform.processor() or platform.machine()}, {args.threads} threads")
    print(f"device: {args.device} ({machine}); torch {torch.__version__}; "
          f"1-min load average {load_before:.1f} before, {load_after:.1f} after ({os.cpu_count()} CPUs)")
    print("| recipe | model | parameters | train batch | train sentences/s (per CPU-s) | eval batch "
          "| inference sentences/s (per CPU-s) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['recipe']} | {r['model']} | {r['parameters']:,} | {r['train_batch']} | "
              f"{r['train_sentences_per_s']} ({r['train_sentences_per_cpu_s']}) | {r['eval_batch']} | "
              f"{r['infer_sentences_per_s']} ({r['infer_sentences_per_cpu_s']}) |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "machine": machine, "load": [load_before, load_after], "rows": rows},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
