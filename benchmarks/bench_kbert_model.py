"""Speed of the K-BERT encoder against the same encoder with only a padding mask, in one run.

Both models are built by the task from one recipe (same weights, same optimiser settings) and are
timed on the same batches of real sentence trees, alternating which goes first:

* **K-BERT**: ``model(batch)``: the dense inputs and the ``[B, L, L]`` visibility are built from
  the batch's edges on the device (:func:`graphmatch.graphs.kbert.dense_inputs`), then the
  mask-transformer runs with it;
* **padding only**: the same token sequences padded with ``to_dense_batch`` and a ``[B, 1, L]``
  key-padding mask (what plain BERT does), through the same encoder and head.

Training = forward, loss, backward and an AdamW step; inference = forward without gradients.
The first ``--warmup`` batches are not timed. ``slowdown`` is the ratio of total times;
``slowdown_median_batch`` the median of the per-batch ratios, which resists bursts of load on a
shared machine. Goal: K-BERT at most 1.15x slower in training.

    PYTHONPATH=. python benchmarks/bench_kbert_model.py --data-dir ../shared/data \\
        --set model.hidden_size=256 model.num_layers=4 model.num_heads=4 model.intermediate_size=1024
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics
import sys
import time

import torch
from torch_geometric.loader import DataLoader
from torch_geometric.utils import to_dense_batch

from graphmatch.engine.training.optim import build_optimizer, param_groups
from graphmatch.tasks.kbert import KBertTask
from graphmatch.tasks.recipes.resolve import resolve


def padding_only(model: torch.nn.Module, batch) -> torch.Tensor:
    """The model on the batch's token sequences with a key-padding mask only (plain BERT input)."""
    tok = batch["token"]
    ids, mask = to_dense_batch(tok.input_ids, tok.batch)
    pos, _ = to_dense_batch(tok.pos, tok.batch)
    seg, _ = to_dense_batch(tok.seg, tok.batch)
    return model.forward_dense(ids, pos, seg, mask, mask.unsqueeze(1))


def bench(args: argparse.Namespace) -> dict:
    overrides = [f"data.root={args.data_dir}"] if args.data_dir else []
    config = resolve(args.recipe, [*overrides, "train.progress=false", *args.set])
    torch.manual_seed(0)
    task = KBertTask(config)
    data = task.datasets()
    device = torch.device(args.device)
    kbert = task.build_model().to(device)
    plain = copy.deepcopy(kbert)
    runs = {"kbert": (kbert, lambda m, b: m(b)), "padding_only": (plain, padding_only)}
    optims = {name: build_optimizer(param_groups(m, task.encoder_parameters(m), config["optim"]), config["optim"])
              for name, (m, _) in runs.items()}
    batch_size = args.batch_size or config["train"]["batch_size"]

    def sync() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize()

    def timed(fn) -> float:
        sync()
        start = time.perf_counter()
        fn()
        sync()
        return time.perf_counter() - start

    result: dict = {"train": {}, "inference": {}}
    loader = DataLoader(data["train"], batch_size=batch_size, shuffle=True, generator=torch.Generator().manual_seed(0))
    elapsed = dict.fromkeys(runs, 0.0)
    ratios: list[float] = []
    samples, tokens = 0, 0
    for m, _ in runs.values():
        m.train()
    for k, batch in enumerate(loader):
        if k == args.warmup + args.train_batches:
            break
        batch = batch.to(device)
        order = list(runs) if k % 2 == 0 else list(reversed(runs))
        times: dict[str, float] = {}
        for name in order:
            model, forward = runs[name]

            def step(model=model, forward=forward, name=name, batch=batch):
                optims[name].zero_grad()
                task.loss(forward(model, batch), batch).backward()
                optims[name].step()

            times[name] = timed(step)
        if k >= args.warmup:
            for name in runs:
                elapsed[name] += times[name]
            ratios.append(times["kbert"] / times["padding_only"])
            samples += batch.num_graphs
            tokens += batch["token"].num_nodes
    for name in runs:
        result["train"][f"{name}_samples_per_s"] = round(samples / elapsed[name], 1)
    result["train"]["slowdown"] = round(elapsed["kbert"] / elapsed["padding_only"], 3)
    result["train"]["slowdown_median_batch"] = round(statistics.median(ratios), 3)
    result["train"]["mean_tokens"] = round(tokens / max(samples, 1), 1)

    test = data["test"][: args.eval_samples]
    elapsed = dict.fromkeys(runs, 0.0)
    ratios = []
    samples = 0
    for m, _ in runs.values():
        m.eval()
    with torch.no_grad():
        for k, batch in enumerate(DataLoader(test, batch_size=args.eval_batch)):
            batch = batch.to(device)
            order = list(runs) if k % 2 == 0 else list(reversed(runs))
            times = {}
            for name in order:
                model, forward = runs[name]
                times[name] = timed(lambda model=model, forward=forward, batch=batch: forward(model, batch).argmax(-1))
            if k >= args.warmup:
                for name in runs:
                    elapsed[name] += times[name]
                ratios.append(times["kbert"] / times["padding_only"])
                samples += batch.num_graphs
    for name in runs:
        result["inference"][f"{name}_samples_per_s"] = round(samples / elapsed[name], 1)
    result["inference"]["slowdown"] = round(elapsed["kbert"] / elapsed["padding_only"], 3)
    result["inference"]["slowdown_median_batch"] = round(statistics.median(ratios), 3)
    m = config["model"]
    result.update({
        "recipe": args.recipe, "dataset": config["data"]["dataset"], "kg": config["data"]["kg"],
        "max_length": config["data"]["max_length"], "train_batch": batch_size, "eval_batch": args.eval_batch,
        "train_batches": args.train_batches, "eval_samples": samples,
        "model": {k: m[k] for k in ("hidden_size", "num_layers", "num_heads", "intermediate_size",
                                    "attention_dropout", "attention_mode")},
        "parameters": sum(p.numel() for p in kbert.parameters()),
        "device": args.device, "threads": torch.get_num_threads(), "torch": torch.__version__,
        "python": platform.python_version(),
    })
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--recipe", default="kbert/chnsenticorp_hownet_quick")
    p.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="recipe overrides")
    p.add_argument("--data-dir", help="data root (default $GRAPHMATCH_DATA)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-size", type=int, help="training batch (default: the recipe's)")
    p.add_argument("--train-batches", type=int, default=20)
    p.add_argument("--eval-samples", type=int, default=512)
    p.add_argument("--eval-batch", type=int, default=64)
    p.add_argument("--warmup", type=int, default=2)
    args = p.parse_args(argv)
    if args.eval_samples <= args.warmup * args.eval_batch or args.train_batches < 1:
        p.error("nothing would be timed: need --train-batches >= 1 and --eval-samples > --warmup x --eval-batch")
    torch.set_num_threads(args.threads)
    print(json.dumps(bench(args), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
