"""The plain encoder as the yardstick: K-BERT's model (sentence tree, soft positions, visible
matrix, the recipe's encoder) against the same encoder as a plain ``transformers.BertModel``
classifier, on the same sentences, batches and precision, interleaved.

Each arm is a K-BERT recipe (default: ``kbert/chnsenticorp_e5`` without knowledge and
``kbert/chnsenticorp_e5_hownet``), set up as ``train`` sets it up
(:func:`graphmatch.engine.training.fitting.prepare`, pretrained weights). The plain classifier is a
``BertModel`` with the very same weights (the K-BERT encoder written by ``save_pretrained_hf``),
mean-pooled, with ``benchmarks/plain_e5.py``'s head, reading ``[CLS] pieces [SEP]`` of the same
tokenizer, padded to the batch's longest. Both read the first ``--batches × train.batch_size``
training sentences in the same batches (their labels are checked equal). A *step* is forward,
cross-entropy, backward and AdamW; an *inference* batch the forward in eval mode without
gradients; *predict* is ``--lines`` dev and test sentences through
:class:`~graphmatch.engine.inference.predictor.Predictor` (``graphmatch predict --input`` in one process:
encoding, batching, forward, rows) against tokenising and classifying them in batches of 64.
K-BERT and plain take turns, ``--rounds`` rounds; the ratio plain seconds / K-BERT seconds (K-BERT's
throughput as a share of the plain classifier's) is taken round by round and its median reported,
with tokens per batch (K-BERT's token nodes; plain: padded). ``--profile`` prints cProfile's top
functions of each side's training steps.

    PYTHONPATH=. GRAPHMATCH_DATA=../shared/data python benchmarks/bench_yardstick.py --rounds 3
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch_geometric.data import Batch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plain_e5 import read_split  # noqa: E402

from graphmatch.engine.inference.predictor import Predictor  # noqa: E402
from graphmatch.engine.runs.provenance import cpu_model  # noqa: E402
from graphmatch.engine.training.fitting import prepare  # noqa: E402
from graphmatch.engine.training.optim import build_optimizer  # noqa: E402
from graphmatch.engine.training.precision import bf16_units  # noqa: E402
from graphmatch.tasks.recipes.resolve import resolve_recipe  # noqa: E402
from graphmatch.text.pretrained import tokenizer_for  # noqa: E402

ARMS = ("kbert/chnsenticorp_e5", "kbert/chnsenticorp_e5_hownet")
SIDES = ("kbert", "plain")
SLICE = ("data.limit.dev=8", "data.limit.test=8", "train.progress=false", "train.threads=1")


def precision_context(name: str):
    return torch.autocast("cpu", dtype=torch.bfloat16) if name == "bf16" else contextlib.nullcontext()


class PlainClassifier(torch.nn.Module):
    """``BertModel`` + mean pooling + ``plain_e5``'s head (:math:`W_c \\tanh(W_1 v + b_1) + b_c`)."""

    def __init__(self, folder: Path, labels: int):
        super().__init__()
        from transformers import BertModel

        self.encoder = BertModel.from_pretrained(folder, add_pooling_layer=False, attn_implementation="sdpa",
                                                 attention_probs_dropout_prob=0.0, hidden_dropout_prob=0.1)
        width = self.encoder.config.hidden_size
        self.head = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.Tanh(), torch.nn.Linear(width, labels))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        m = mask.unsqueeze(-1).to(hidden.dtype)
        return self.head((hidden * m).sum(1) / m.sum(1))


class Arm:
    """One recipe: K-BERT's model and the plain classifier of the same weights, their optimisers,
    the same training batches, and the prediction lines."""

    def __init__(self, recipe: str, sets: list[str], batches: int, lines: int, precision: str):
        self.name, self.precision = recipe, precision
        self.recipe = resolve_recipe(recipe, [*SLICE, *sets])
        torch.set_num_threads(self.recipe.train.threads)
        size = self.recipe.train.batch_size
        self.recipe = resolve_recipe(recipe, [*SLICE, *sets, f"data.limit.train={batches * size}"])
        setup = prepare(self.recipe, fresh=True)
        self.task, self.model = setup.task, setup.model
        train = setup.splits["train"]
        self.kbert_batches = [Batch.from_data_list([train[i] for i in range(k * size, (k + 1) * size)])
                              for k in range(batches)]
        root = self.recipe.data.root
        texts, labels = read_split("train", batches * size, root)
        gold = torch.cat([b.y for b in self.kbert_batches]).tolist()
        if [str(y) for y in labels] != [self.task.label_names()[y] for y in gold]:
            raise ValueError("the plain classifier's sentences are not K-BERT's (labels differ)")
        self.tokenizer = tokenizer_for(self.task.vocab_path(), *self.task.vocab_tokenization())
        self.max_length = self.recipe.data.max_length
        self.plain_batches = [(*self.encode(texts[k * size:(k + 1) * size]),
                               torch.tensor(labels[k * size:(k + 1) * size])) for k in range(batches)]
        with tempfile.TemporaryDirectory() as folder:
            self.model.encoder.save_pretrained_hf(folder)
            self.plain = PlainClassifier(Path(folder), len(self.task.label_names()))
        self.kbert_opt = build_optimizer(setup.module.param_groups(), self.recipe.optim)
        self.plain_opt = torch.optim.AdamW(self.plain.parameters(), lr=self.recipe.optim.lr,
                                           fused=self.recipe.optim.fused)  # as K-BERT's
        dev, _ = read_split("dev", None, root)
        test, _ = read_split("test", None, root)
        self.lines = (dev + test)[:lines]
        self.times: dict[tuple[str, str], list[float]] = {(k, s): [] for k in ("step", "infer", "predict")
                                                          for s in SIDES}
        self.k = 0

    def encode(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """``[CLS] pieces [SEP]`` of each text, cut at ``data.max_length``, padded to the longest."""
        tok = self.tokenizer
        if hasattr(tok, "encode_many"):  # word pieces, SentencePiece
            pieces = tok.encode_many(texts)
            ids = [pieces.ids[a:b].tolist() for a, b in zip(pieces.piece_ptr[:-1], pieces.piece_ptr[1:], strict=True)]
        else:  # characters
            ids = [tok.encode(text).ids for text in texts]
        rows = [[tok.cls_id, *r[: self.max_length - 2], tok.sep_id] for r in ids]
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), tok.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, : len(r)], mask[i, : len(r)] = torch.tensor(r), 1
        return ids, mask

    def _next(self) -> int:
        self.k = (self.k + 1) % len(self.kbert_batches)
        return self.k

    def step(self, side: str) -> float:
        k = self._next()
        model, opt = (self.model, self.kbert_opt) if side == "kbert" else (self.plain, self.plain_opt)
        model.train()
        start = time.perf_counter()
        with precision_context(self.precision):
            if side == "kbert":
                batch = self.kbert_batches[k]
                loss = self.task.loss(self.model(batch), batch)
            else:
                ids, mask, y = self.plain_batches[k]
                loss = torch.nn.functional.cross_entropy(self.plain(ids, mask).float(), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return time.perf_counter() - start

    def infer(self, side: str) -> float:
        k = self._next()
        model = self.model if side == "kbert" else self.plain
        model.eval()
        start = time.perf_counter()
        with torch.inference_mode(), precision_context(self.precision):
            if side == "kbert":
                self.model(self.kbert_batches[k])
            else:
                self.plain(*self.plain_batches[k][:2])
        return time.perf_counter() - start

    def predict(self, side: str) -> float:
        start = time.perf_counter()
        if side == "kbert":
            Predictor(self.task, self.model, batch_size=64, precision=self.precision_name()).predict(self.lines)
        else:
            self.plain.eval()
            with torch.inference_mode(), precision_context(self.precision):
                for a in range(0, len(self.lines), 64):
                    self.plain(*self.encode(self.lines[a:a + 64])).float().softmax(-1).tolist()
        return time.perf_counter() - start

    def precision_name(self) -> str:
        return "bf16-mixed" if self.precision == "bf16" else "32-true"

    def run(self, rounds: int, warmup: int, predict_rounds: int) -> None:
        for kind, fn, n in (("step", self.step, rounds), ("infer", self.infer, rounds),
                            ("predict", self.predict, predict_rounds)):
            for side in SIDES:
                for _ in range(warmup if kind != "predict" else 0):
                    fn(side)
            for _ in range(n):
                for side in SIDES:  # A B A B: each round's pair under the same load
                    self.times[(kind, side)].append(fn(side))

    def ratio(self, kind: str) -> float:
        """Median over rounds of plain seconds / K-BERT seconds: K-BERT's share of plain's throughput."""
        return statistics.median(p / k for k, p in zip(self.times[(kind, "kbert")], self.times[(kind, "plain")],
                                                       strict=True))

    def seconds(self, kind: str, side: str) -> float:
        return statistics.median(self.times[(kind, side)])

    def tokens(self) -> tuple[float, float]:
        """Mean tokens per training batch: K-BERT's token nodes, the plain classifier's padded ids."""
        return (statistics.mean(int(b["token"].num_nodes) for b in self.kbert_batches),
                statistics.mean(int(ids.numel()) for ids, _, _ in self.plain_batches))

    def profile(self, steps: int, side: str) -> str:
        """cProfile's top functions (own time) over ``steps`` training steps of ``side``."""
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(steps):
            self.step(side)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(15)
        return f"[{side}]\n{out.getvalue()}"


def report(arms: list[Arm], args: argparse.Namespace) -> str:
    units = ", ".join(bf16_units()) or "no bf16 units"
    lines = [f"CPU: {cpu_model()} ({units}); {torch.get_num_threads()} thread; precision {args.precision}; "
             f"{args.rounds} rounds (predict: {args.predict_rounds}) interleaved; load average "
             f"{os.getloadavg()[0]:.1f}", "",
             "| recipe | batch | tokens per batch K-BERT / plain | step | inference | predict "
             f"{args.lines} lines | step s K-BERT / plain |",
             "|---|---|---|---|---|---|---|"]
    for arm in arms:
        kb, plain = arm.tokens()
        lines.append(f"| {arm.name} | {arm.recipe.train.batch_size} | {kb:.0f} / {plain:.0f} | "
                     f"{arm.ratio('step'):.2f}× | {arm.ratio('infer'):.2f}× | {arm.ratio('predict'):.2f}× | "
                     f"{arm.seconds('step', 'kbert'):.2f} / {arm.seconds('step', 'plain'):.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arms", nargs="+", default=list(ARMS), help="K-BERT recipes")
    parser.add_argument("--rounds", type=int, default=3, help="timed steps (and inference batches) per side")
    parser.add_argument("--predict-rounds", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--batches", type=int, default=3, help="training batches kept aside and cycled")
    parser.add_argument("--lines", type=int, default=2000, help="dev + test sentences predicted")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--profile", type=int, default=0, help="profile this many training steps of each side per arm")
    parser.add_argument("--set", action="append", default=[], dest="sets", help="a recipe override for every arm")
    args = parser.parse_args(argv)
    sets = list(args.sets)
    if os.environ.get("GRAPHMATCH_DATA"):
        sets.append(f"data.root={Path(os.environ['GRAPHMATCH_DATA'])}")
    arms = []
    for name in args.arms:
        arm = Arm(name, sets, args.batches, args.lines, args.precision)
        arm.run(args.rounds, args.warmup, args.predict_rounds)
        arms.append(arm)
        print(f"[yardstick] {name}: step {arm.ratio('step'):.2f}×, inference {arm.ratio('infer'):.2f}×, "
              f"predict {arm.ratio('predict'):.2f}×", flush=True)
        for side in SIDES if args.profile else ():
            print(arm.profile(args.profile, side), flush=True)
    table = report(arms, args)
    print(table)
    return table


if __name__ == "__main__":
    main()
