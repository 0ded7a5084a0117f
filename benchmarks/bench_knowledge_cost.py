"""Knowledge's training cost: training steps of the same K-BERT model with and without
knowledge, interleaved in one process, and where the extra time goes.

The arms are recipes (default: ``kbert/sst2_minilm``, no knowledge; ``kbert/sst2_minilm_wordnet``,
every matched word gets WordNet's branches; ``kbert/sst2_minilm_wordnet_nouns``, branches only
where the word reads as a noun, ``data.select.noun_reading``). Each arm is set up as ``train``
sets it up (:func:`graphmatch.engine.training.fitting.prepare`: same seed, pretrained weights, the
recipe's training loader, length-bucketed as ``train.bucket`` says, one torch thread as
``train.threads`` says) and trained with a plain loop (AdamW over the recipe's parameter
groups, gradient clipping; no schedule, no Lightning), ``--steps`` steps per round, the arms
taking turns for ``--rounds`` rounds (A B C A B C ...) after ``--warmup`` untimed steps each.

Each step is cut in phases, timed in CPU seconds (``time.process_time``) and wall seconds:
*batch* (the loader cutting the batch out of the stored trees), *dense* (the padded inputs and
the ``[B, L, L]`` visibility matrix, :func:`graphmatch.graphs.kbert.dense_inputs`), *forward*
(encoder, head and loss), *backward* and *step* (clip and AdamW). Per arm it reports the mean
tree length of the training split (token nodes: trunk and branches), the padded length and the
share of padding of the batches it ran, the median step, and the ratio of every arm to the
first (the no-knowledge arm), step for step in the same run.

Run (prints Markdown tables; the processed graphs are built once into the cache)::

    PYTHONPATH=. python benchmarks/bench_knowledge_cost.py --steps 10 --rounds 4
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from graphmatch.engine.training.datamodule import sample_sizes
from graphmatch.engine.training.fitting import datamodule, prepare
from graphmatch.engine.training.optim import build_optimizer
from graphmatch.graphs.kbert import dense_inputs
from graphmatch.tasks.recipes.resolve import resolve_recipe

PHASES = ("batch", "dense", "forward", "backward", "step")
ARMS = ("kbert/sst2_minilm", "kbert/sst2_minilm_wordnet", "kbert/sst2_minilm_wordnet_nouns")


class Arm:
    """One recipe's model, optimiser and endless training batches."""

    def __init__(self, recipe: str, sets: list[str]):
        self.name = recipe
        self.recipe = resolve_recipe(recipe, sets)
        torch.set_num_threads(self.recipe.train.threads)  # before its data is built
        setup = prepare(self.recipe, fresh=True)
        self.task, self.model, self.module = setup.task, setup.model, setup.module
        self.sizes = sample_sizes(setup.splits["train"])
        loader_module = datamodule(self.recipe, {"train": setup.splits["train"]})
        loader_module.setup("fit")
        self.loader = loader_module.train_dataloader()
        self.batches = iter(self.loader)
        self.optimizer = build_optimizer(self.module.param_groups(), self.recipe.optim)
        self.clip = self.recipe.optim.clip
        self.times: dict[str, dict[str, list[float]]] = {c: {p: [] for p in PHASES} for c in ("cpu", "wall")}
        self.lengths: list[int] = []  # real tokens of every sample run
        self.padded: list[int] = []  # the padded length of every sample's batch

    def next_batch(self):
        try:
            return next(self.batches)
        except StopIteration:
            self.batches = iter(self.loader)
            return next(self.batches)

    def loss(self, batch, mark=lambda: None):
        """The training loss of ``batch`` as ``model(batch)`` computes it, the dense inputs (and the
        visible matrix) built first, apart, so that they can be timed (``mark`` between)."""
        inputs = dense_inputs(batch)
        mark()
        logits = self.model.forward_dense(inputs["input_ids"], inputs["pos"], inputs["seg"], inputs["token_mask"],
                                          inputs["visible"])
        return self.task.loss(logits, batch), inputs

    def step(self, record: bool) -> None:
        """One training step, its phases timed (and kept when ``record``)."""
        marks = [(time.process_time(), time.perf_counter())]

        def mark() -> None:
            marks.append((time.process_time(), time.perf_counter()))

        self.model.train()
        batch = self.next_batch()
        mark()
        loss, inputs = self.loss(batch, mark)
        mark()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        mark()
        if self.clip:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.optimizer.step()
        mark()
        if record:
            for c, clock in enumerate(("cpu", "wall")):
                for p, phase in enumerate(PHASES):
                    self.times[clock][phase].append(marks[p + 1][c] - marks[p][c])
            mask = inputs["token_mask"]
            self.lengths += mask.sum(1).tolist()
            self.padded += [mask.size(1)] * mask.size(0)

    def step_times(self, clock: str) -> np.ndarray:
        return np.sum([self.times[clock][p] for p in PHASES], axis=0)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", nargs="+", default=list(ARMS), help="recipes; the first is the reference")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per arm and round")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per arm first")
    parser.add_argument("--set", action="append", default=[], dest="sets", help="a recipe override for every arm")
    args = parser.parse_args(argv)
    sets = list(args.sets)
    if os.environ.get("GRAPHMATCH_DATA"):
        sets.append(f"data.root={Path(os.environ['GRAPHMATCH_DATA'])}")
    arms = [Arm(recipe, sets) for recipe in args.arms]
    torch.set_num_threads(arms[0].recipe.train.threads)  # the first arm's setting for every arm's steps
    for arm in arms:
        for _ in range(args.warmup):
            arm.step(record=False)
    for _ in range(args.rounds):
        for arm in arms:
            for _ in range(args.steps):
                arm.step(record=True)

    load = os.getloadavg()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"{torch.get_num_threads()} torch thread(s), load average {load[0]:.1f} / {load[1]:.1f} (1 / 5 min); "
          f"{args.rounds} rounds × {args.steps} steps per arm, interleaved, after {args.warmup} warm-up steps; "
          f"batch {arms[0].recipe.train.batch_size}, bucket {arms[0].recipe.train.bucket}\n")
    ref = arms[0]
    print("| arm | mean tree length (train) | mean length run | mean padded length | padding | "
          "median step, CPU s | × no knowledge, CPU | median step, wall s | × no knowledge, wall |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for arm in arms:
        cpu, wall = (statistics.median(arm.step_times(c)) for c in ("cpu", "wall"))
        ref_cpu, ref_wall = (statistics.median(ref.step_times(c)) for c in ("cpu", "wall"))
        real = float(np.mean(arm.lengths))
        padded = float(np.mean(arm.padded))
        share = 100 * (1 - real / padded)
        print(f"| {arm.name} | {arm.sizes.mean():.1f} | {real:.1f} | {padded:.1f} | {share:.1f} % | "
              f"{cpu:.3f} | {cpu / ref_cpu:.2f} | {wall:.3f} | {wall / ref_wall:.2f} |")
    print("\nCPU seconds per step by phase (mean), and each phase's share of the extra time over the first arm:\n")
    print("| arm | " + " | ".join(PHASES) + " | extra time: " + " / ".join(PHASES) + " |")
    print("|---|" + "---:|" * (len(PHASES) + 1))
    for arm in arms:
        means = [float(np.mean(arm.times["cpu"][p])) for p in PHASES]
        extra = [m - float(np.mean(ref.times["cpu"][p])) for m, p in zip(means, PHASES, strict=True)]
        total = sum(extra)
        shares = " / ".join(f"{100 * e / total:.0f} %" for e in extra) if arm is not ref and total > 0 else "-"
        print(f"| {arm.name} | " + " | ".join(f"{m:.3f}" for m in means) + f" | {shares} |")


if __name__ == "__main__":
    main()
