"""bf16 on the CPU: a training step and an inference batch of the same model in fp32 and under
``torch.autocast("cpu", torch.bfloat16)`` (what ``train.precision=bf16-mixed`` runs), interleaved.

Each arm is a recipe (default: K-BERT e5 ``kbert/chnsenticorp_e5``, LET-e5 ``let/lcqmc_e5``, the
MiniLM relation transformer ``relation/semeval_minilm_entity_start``), set up as ``train`` sets
it up (:func:`graphmatch.engine.training.fitting.prepare`: pretrained weights, the recipe's training
loader), on ``--batches`` real training batches kept aside, one torch thread. A *step* is forward,
the task's loss, backward and AdamW over the recipe's parameter groups; an *inference* batch is the
model's forward in eval mode without gradients. The two precisions take turns, fp32 then bf16,
``--steps`` of each per round for ``--rounds`` rounds, after ``--warmup`` untimed ones each; the
ratio fp32 / bf16 is taken round by round (a loaded machine slows both of a pair alike) and its
median reported, with the CPU's model name and its bf16 flags.

    PYTHONPATH=. GRAPHMATCH_DATA=../shared/data python benchmarks/bench_bf16.py --steps 3 --rounds 4
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import statistics
import time
from pathlib import Path

import torch

from graphmatch.engine.runs.provenance import cpu_model
from graphmatch.engine.training.fitting import datamodule, prepare
from graphmatch.engine.training.optim import build_optimizer
from graphmatch.engine.training.precision import bf16_units
from graphmatch.tasks.recipes.resolve import resolve_recipe

ARMS = ("kbert/chnsenticorp_e5", "let/lcqmc_e5", "relation/semeval_minilm_entity_start")
PRECISIONS = ("fp32", "bf16")
#: the smallest slices that give the batches (the steps reuse them)
SLICE = ("data.limit.train=256", "data.limit.dev=8", "data.limit.test=8", "train.progress=false", "train.threads=1")


def precision_context(name: str):
    return torch.autocast("cpu", dtype=torch.bfloat16) if name == "bf16" else contextlib.nullcontext()


class Arm:
    """One recipe's model, optimiser and a few training batches."""

    def __init__(self, recipe: str, sets: list[str], batches: int):
        self.name = recipe
        self.recipe = resolve_recipe(recipe, [*SLICE, *sets])
        torch.set_num_threads(self.recipe.train.threads)
        setup = prepare(self.recipe, fresh=True)
        self.task, self.model = setup.task, setup.model
        loader = datamodule(self.recipe, {"train": setup.splits["train"]})
        loader.setup("fit")
        self.batches = list(itertools.islice(iter(loader.train_dataloader()), batches))
        self.cycle = itertools.cycle(self.batches)
        self.optimizer = build_optimizer(setup.module.param_groups(), self.recipe.optim)
        self.times: dict[tuple[str, str], list[float]] = {(k, p): [] for k in ("step", "infer") for p in PRECISIONS}
        self.losses: dict[str, list[torch.dtype]] = {p: [] for p in PRECISIONS}

    def step(self, precision: str) -> float:
        """One training step; its wall seconds."""
        batch = next(self.cycle)
        self.model.train()
        start = time.perf_counter()
        with precision_context(precision):
            loss = self.task.loss(self.model(batch), batch)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        seconds = time.perf_counter() - start
        self.losses[precision].append(loss.dtype)
        return seconds

    def infer(self, precision: str) -> float:
        """One inference batch; its wall seconds."""
        batch = next(self.cycle)
        self.model.eval()
        start = time.perf_counter()
        with torch.inference_mode(), precision_context(precision):
            self.model(batch)
        return time.perf_counter() - start

    def run(self, steps: int, rounds: int, warmup: int) -> None:
        for kind, fn in (("step", self.step), ("infer", self.infer)):
            for precision in PRECISIONS:
                for _ in range(warmup):
                    fn(precision)
            for _ in range(rounds):
                for precision in PRECISIONS:  # A B A B: each round's pair under the same load
                    self.times[(kind, precision)].append(sum(fn(precision) for _ in range(steps)) / steps)

    def ratio(self, kind: str) -> float:
        """The median over rounds of fp32 seconds / bf16 seconds."""
        return statistics.median(a / b for a, b in zip(self.times[(kind, "fp32")], self.times[(kind, "bf16")],
                                                       strict=True))

    def tokens(self) -> float:
        """Mean token nodes per batch (the batches' ``token`` nodes, else all their nodes)."""
        return statistics.mean(int((b["token"] if "token" in getattr(b, "node_types", ()) else b).num_nodes)
                               for b in self.batches)


def report(arms: list[Arm], args: argparse.Namespace) -> str:
    units = ", ".join(bf16_units()) or "no bf16 units"
    lines = [f"CPU: {cpu_model()} ({units}); {torch.get_num_threads()} thread; {args.rounds} rounds of "
             f"{args.steps} per precision, interleaved, after {args.warmup} warm-up; load average "
             f"{os.getloadavg()[0]:.1f}", "",
             "| model | recipe | batch | tokens per batch | step fp32 / bf16 | inference fp32 / bf16 |",
             "|---|---|---|---|---|---|"]
    for arm in arms:
        lines.append(f"| {type(arm.model).__name__} | {arm.name} | {arm.recipe.train.batch_size} | "
                     f"{arm.tokens():.0f} | {arm.ratio('step'):.2f}× | {arm.ratio('infer'):.2f}× |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", nargs="+", default=list(ARMS), help="recipes")
    parser.add_argument("--steps", type=int, default=3, help="timed steps (or batches) per precision and round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=1, help="untimed steps per precision first")
    parser.add_argument("--batches", type=int, default=4, help="training batches kept aside and cycled")
    parser.add_argument("--set", action="append", default=[], dest="sets", help="a recipe override for every arm")
    args = parser.parse_args(argv)
    sets = list(args.sets)
    if os.environ.get("GRAPHMATCH_DATA"):
        sets.append(f"data.root={Path(os.environ['GRAPHMATCH_DATA'])}")
    arms = []
    for name in args.arms:
        arm = Arm(name, sets, args.batches)
        arm.run(args.steps, args.rounds, args.warmup)
        arms.append(arm)
        print(f"[bf16] {name}: step {arm.ratio('step'):.2f}×, inference {arm.ratio('infer'):.2f}×", flush=True)
    table = report(arms, args)
    print(table)
    return table


if __name__ == "__main__":
    main()
