"""Training-step throughput of graphmatch's models against a plain ``transformers.BertModel`` of the
same size, in fp32 and bf16, and ``graphmatch predict`` on trained runs (``benchmarks/gpu_check.sh``
runs it on a GPU machine; ``--device cpu --steps 2`` is a smoke run).

**Arms** (``--arms``): K-BERT with HowNet (``kbert/chnsenticorp_hownet_quick``), LET
(``let/lcqmc_quick``) and the MiniLM relation classifier (``relation/semeval_minilm_entity_start``).
Each is set up as ``train`` sets it up (``bench_knowledge_cost.Arm``:
:func:`~graphmatch.engine.training.fitting.prepare`
with its pretrained weights, the recipe's length-bucketed training loader, AdamW over the recipe's
parameter groups) and steps on its real batches: the training loss of
:meth:`~graphmatch.engine.training.module.TaskModule.training_step`, backward, the recipe's clipping, the
optimiser's step (no schedule).

**Plain BertModel**: ``BertModel`` of the arm's encoder configuration (layers, hidden size, heads,
feed-forward size, vocabulary, dropout), a linear head on the first token and cross-entropy, the
same optimiser settings, stepped on batches of the same shapes as the arm's, batch for batch: one
row per sample, padded to the batch's longest sample (its ``token`` nodes), the padding masked;
random ids and labels. (The relation model packs two sentences into an encoder row,
``model.pack``; the plain BertModel has one per row, as plain BERT does.)

**Timing**: ``--warmup`` untimed steps of each, then ``--rounds`` rounds of ``--steps`` steps, the
arm and its plain BertModel taking turns (A B, B A, ...), every block between
``torch.cuda.synchronize()`` calls; the batches are on the device before timing. samples/s =
samples of the timed steps / their seconds; the ratio is the arm's samples/s over its plain
BertModel's in the same precision. ``bf16`` runs forward and loss under
``torch.autocast(dtype=torch.bfloat16)`` (what Lightning's ``bf16-mixed`` does); CUDA only.

**Predict**: a run of each ``--predict`` model trained for ``--predict-steps`` steps
(``bench_predict.train``), then ``python -m graphmatch.cli.main predict RUN --input FILE --output
OUT`` in a fresh process on ``--lines`` test lines; lines/s of the whole command, start-up
included. ``graphmatch predict`` has no device option: its model runs on the CPU.

    PYTHONPATH=. python benchmarks/gpu_throughput.py --data-dir ../shared/data --device cuda
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F
from transformers import BertConfig, BertModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_knowledge_cost import Arm  # noqa: E402  (a recipe's model, loader and optimiser, as train sets them up)
from bench_predict import _cli, kbert_lines, relation_lines, train  # noqa: E402

from graphmatch.engine.training.optim import build_optimizer, param_groups  # noqa: E402
from graphmatch.utils.ragged import batch_vector  # noqa: E402

ARMS = {
    "K-BERT (HowNet)": "kbert/chnsenticorp_hownet_quick",
    "LET": "let/lcqmc_quick",
    "relation (MiniLM, entity start)": "relation/semeval_minilm_entity_start",
}
PREDICT = {"kbert": kbert_lines, "relation": relation_lines}
PREDICT_RECIPES = {"kbert": "kbert/chnsenticorp_hownet_quick", "relation": "relation/semeval_minilm_entity_start"}
PRECISIONS = ("fp32", "bf16")


class PlainBert(torch.nn.Module):
    """``transformers.BertModel`` with a linear head on the first token's state."""

    def __init__(self, config: BertConfig, num_labels: int):
        super().__init__()
        self.bert = BertModel(config, add_pooling_layer=False)
        self.head = torch.nn.Linear(config.hidden_size, num_labels)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head(self.bert(input_ids=ids, attention_mask=mask).last_hidden_state[:, 0])


def bert_config(encoder: torch.nn.Module) -> BertConfig:
    """The ``BertConfig`` of an arm's encoder: the mask-transformer's own (:meth:`to_hf`), or the
    HuggingFace encoder's."""
    config = encoder.config
    return config.to_hf() if hasattr(config, "to_hf") else BertConfig.from_dict(config.to_dict())


def lengths(batch) -> torch.Tensor:
    """Each sample's ``token`` nodes in a batch: the unpacked encoder row it fills."""
    return torch.bincount(batch_vector(batch["token"]), minlength=batch.num_graphs)


def plain_batches(batches: list, vocab: int, labels: int, device: torch.device) -> list[tuple]:
    """Random ids, the padding mask and random labels in the shape of each arm batch."""
    g = torch.Generator().manual_seed(0)
    out = []
    for batch in batches:
        n = lengths(batch).cpu()
        mask = torch.arange(int(n.max()))[None, :] < n[:, None]
        ids = torch.randint(1, vocab, mask.shape, generator=g) * mask
        targets = torch.randint(0, labels, (len(n),), generator=g)
        out.append((ids.to(device), mask.long().to(device), targets.to(device)))
    return out


def stepper(optimizer: torch.optim.Optimizer, params: list, clip: float | None, device: torch.device,
            bf16: bool, loss: Callable[[int], torch.Tensor]) -> Callable[[int], None]:
    """One training step on batch ``k``: ``loss(k)`` (under bf16 autocast when asked), backward,
    clipping, the optimiser's step."""

    def step(k: int) -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=bf16):
            value = loss(k)
        optimizer.zero_grad(set_to_none=True)
        value.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()

    return step


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Pair:
    """An arm and its plain BertModel, on the device, with the batches they step on."""

    def __init__(self, name: str, recipe: str, sets: list[str], n_batches: int, device: torch.device):
        self.name, self.device = name, device
        arm = self.arm = Arm(recipe, sets)
        arm.module.to(device)
        self.batches = [arm.next_batch().to(device) for _ in range(n_batches)]
        config = bert_config(arm.model.encoder)
        self.config = config
        self.plain = PlainBert(config, len(arm.task.label_names())).to(device)
        optim = arm.recipe.optim
        self.plain_optimizer = build_optimizer(
            param_groups(self.plain, self.plain.bert.parameters(), optim), optim)
        self.plain_inputs = plain_batches(self.batches, config.vocab_size, len(arm.task.label_names()), device)
        sizes = [lengths(b) for b in self.batches]
        self.samples = [len(n) for n in sizes]
        self.mean_padded = sum(len(n) * int(n.max()) for n in sizes) / sum(self.samples)
        self.mean_real = sum(int(n.sum()) for n in sizes) / sum(self.samples)

    def steps(self, bf16: bool) -> tuple[Callable[[int], None], Callable[[int], None]]:
        arm, plain = self.arm, self.plain

        def arm_loss(k: int) -> torch.Tensor:
            with warnings.catch_warnings():  # training_step logs, and no Trainer is attached here
                warnings.filterwarnings("ignore", message=".*self.log.*")
                return arm.module.training_step(self.batches[k], k)

        def plain_loss(k: int) -> torch.Tensor:
            ids, mask, labels = self.plain_inputs[k]
            return F.cross_entropy(plain(ids, mask), labels)

        clip = arm.recipe.optim.clip
        arm.model.train()
        plain.train()
        return (stepper(arm.optimizer, list(arm.model.parameters()), clip, self.device, bf16, arm_loss),
                stepper(self.plain_optimizer, list(plain.parameters()), clip, self.device, bf16, plain_loss))

    def measure(self, bf16: bool, warmup: int, rounds: int, steps: int) -> tuple[float, float]:
        """samples/s of the arm and of its plain BertModel, interleaved round by round."""
        arm_step, plain_step = self.steps(bf16)
        for k in range(warmup):
            arm_step(k)
            plain_step(k)
        seconds = {"arm": 0.0, "plain": 0.0}
        samples = 0
        for r in range(rounds):
            block = range(warmup + r * steps, warmup + (r + 1) * steps)
            order = [("arm", arm_step), ("plain", plain_step)]
            for which, step in order if r % 2 == 0 else order[::-1]:
                sync(self.device)
                start = time.perf_counter()
                for k in block:
                    step(k)
                sync(self.device)
                seconds[which] += time.perf_counter() - start
            samples += sum(self.samples[k] for k in block)
        return samples / seconds["arm"], samples / seconds["plain"]

    def size(self) -> str:
        c = self.config
        return (f"{c.num_hidden_layers} layers × {c.hidden_size}, {c.num_attention_heads} heads, FFN "
                f"{c.intermediate_size}; batch {self.arm.recipe.train.batch_size}, mean length "
                f"{self.mean_real:.0f} (padded {self.mean_padded:.0f})")


def one_line(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}".splitlines()[0]
    return text[:200]


class Report:
    """The Markdown tables, written whole to ``out`` after every row (a run cut short keeps its rows)."""

    def __init__(self, header: str, out: Path | None):
        self.header, self.out = header, out
        self.rows: list[str] = []
        self.notes: list[str] = []
        self.predict: list[str] = []

    def text(self) -> str:
        lines = [self.header, "", "| model | precision | samples/s | × plain BertModel | size |",
                 "|---|---|---:|---:|---|", *self.rows, ""]
        lines += [f"- {n}" for n in self.notes]
        if self.predict:
            lines += ["", "`graphmatch predict RUN --input FILE` (a fresh process; the model runs on the CPU: "
                      "predict has no device option):", "",
                      "| run | steps trained | lines | seconds | lines/s |", "|---|---:|---:|---:|---:|",
                      *self.predict]
        return "\n".join(lines) + "\n"

    def save(self) -> None:
        if self.out is not None:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            self.out.write_text(self.text(), encoding="utf-8")


def arm_sets(sets: list[str], recipe: str) -> list[str]:
    """The overrides for one arm: every plain ``KEY=VALUE``, and ``FAMILY:KEY=VALUE`` where FAMILY
    is the recipe's folder (``kbert``, ``let``, ``relation``)."""
    family = recipe.split("/")[0]
    out = []
    for s in sets:
        prefix, _, rest = s.partition(":")
        if rest and "=" not in prefix:
            if prefix == family:
                out.append(rest)
        else:
            out.append(s)
    return out


def bench_arms(args: argparse.Namespace, sets: list[str], device: torch.device, report: Report) -> bool:
    """Every arm's rows; False when one failed (its row says why)."""
    ok = True
    n_batches = args.warmup + args.rounds * args.steps
    for name in args.arms:
        recipe = ARMS.get(name, name)
        try:
            pair = Pair(name, recipe, arm_sets(sets, recipe), n_batches, device)
        except Exception as err:  # one arm's failure keeps the others' figures (a device run is one shot)
            traceback.print_exc()
            report.rows.append(f"| {name} | all | failed: {one_line(err)} | | |")
            report.save()
            ok = False
            continue
        plain = f"plain BertModel (size of {name})"
        for precision in PRECISIONS:
            if precision == "bf16" and device.type != "cuda":
                report.rows += [f"| {n} | bf16 | skipped on {device.type} | | |" for n in (name, plain)]
                continue
            try:
                ours, theirs = pair.measure(precision == "bf16", args.warmup, args.rounds, args.steps)
            except Exception as err:
                traceback.print_exc()
                report.rows.append(f"| {name} | {precision} | failed: {one_line(err)} | | {pair.size()} |")
                ok = False
                continue
            report.rows += [f"| {name} | {precision} | {ours:.1f} | {ours / theirs:.2f} | {pair.size()} |",
                            f"| {plain} | {precision} | {theirs:.1f} | 1.00 | {pair.size()} |"]
            report.save()
        del pair
        if device.type == "cuda":
            torch.cuda.empty_cache()
    if device.type != "cuda":
        report.notes.append(f"bf16 rows are skipped on {device.type}: bf16 autocast is timed on a CUDA device only.")
    report.save()
    return ok


def bench_predict(args: argparse.Namespace, report: Report) -> bool:
    """``graphmatch predict`` lines/s of each ``--predict`` run; False when one failed."""
    ok = True
    threads = args.threads or os.cpu_count() or 1
    for kind in args.predict:
        try:
            run = train(PREDICT_RECIPES[kind], args.work / kind, args.data_dir, args.predict_steps, threads)
            lines, _ = PREDICT[kind](args.data_dir, args.lines)
            inputs, output = args.work / f"{kind}_lines.tsv", args.work / f"{kind}_predictions.jsonl"
            inputs.write_text("\n".join(lines) + "\n", encoding="utf-8")
            seconds = _cli(["predict", str(run), "--input", str(inputs), "--output", str(output), "--no-progress"],
                           threads)
            written = len(output.read_text(encoding="utf-8").splitlines())
            if written != len(lines):
                raise RuntimeError(f"predict wrote {written} rows for {len(lines)} lines")
            report.predict.append(f"| {PREDICT_RECIPES[kind]} | {args.predict_steps} | {len(lines)} | "
                                  f"{seconds:.1f} | {len(lines) / seconds:.1f} |")
        except Exception as err:
            traceback.print_exc()
            report.predict.append(f"| {PREDICT_RECIPES[kind]} | {args.predict_steps} | {args.lines} | "
                                  f"failed: {one_line(err)} | |")
            ok = False
        report.save()
    return ok


def machine(device: torch.device) -> str:
    import transformers

    name = (torch.cuda.get_device_name(device) if device.type == "cuda"
            else f"{platform.processor() or platform.machine()}, {torch.get_num_threads()} torch thread(s)")
    return f"{device.type} ({name}), {os.cpu_count()} CPUs; torch {torch.__version__}, transformers " \
           f"{transformers.__version__}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", type=Path, default=os.environ.get("GRAPHMATCH_DATA"),
                   help="data root with kbert/, hownet/, lcqmc/, semeval2010_task8/ (default $GRAPHMATCH_DATA)")
    p.add_argument("--device", default="cuda")
    p.add_argument("--arms", nargs="*", default=list(ARMS), help="arm names (or recipes)")
    p.add_argument("--steps", type=int, default=30, help="timed steps per model, precision and round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=5, help="untimed steps per model and precision first")
    p.add_argument("--train-samples", type=int, default=1024, help="training samples each arm builds (cycled)")
    p.add_argument("--set", action="append", default=[], dest="sets",
                   help="a recipe override for every arm (KEY=VALUE) or for one family's (FAMILY:KEY=VALUE)")
    p.add_argument("--predict", nargs="*", default=list(PREDICT), choices=list(PREDICT))
    p.add_argument("--predict-steps", type=int, default=8, help="training steps of each predict run")
    p.add_argument("--lines", type=int, default=5000, help="input lines of each predict command")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: every CPU)")
    p.add_argument("--work", type=Path, default=Path("/tmp/gpu_check"), help="runs and input files")
    p.add_argument("--cache-dir", type=Path, help="processed graphs (default: $GRAPHMATCH_CACHE)")
    p.add_argument("--out", type=Path, help="also write the tables to this Markdown file")
    args = p.parse_args(argv)
    if min(args.steps, args.rounds) < 1 or args.warmup < 0:
        p.error("need --steps >= 1, --rounds >= 1 and --warmup >= 0")
    if args.data_dir is None:
        p.error("no data root: give --data-dir or set GRAPHMATCH_DATA")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"gpu_throughput: --device {args.device}, but torch {torch.__version__} sees no CUDA device "
              "(for a CPU smoke run: --device cpu --steps 2)", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    args.work.mkdir(parents=True, exist_ok=True)
    sets = [f"data.root={args.data_dir}", f"data.limit.train={args.train_samples}", "data.limit.dev=64",
            "data.limit.test=64", "train.progress=false", *args.sets]
    if args.cache_dir:
        sets.append(f"data.cache_dir={args.cache_dir}")
        os.environ["GRAPHMATCH_CACHE"] = str(args.cache_dir)  # the predict runs' processes
    report = Report(f"GPU check: {machine(device)}; {args.rounds} rounds × {args.steps} timed steps per model "
                    f"and precision, interleaved, after {args.warmup} warm-up steps", args.out)
    ok = bench_arms(args, sets, device, report)
    ok = bench_predict(args, report) and ok
    report.save()
    print(report.text(), end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
