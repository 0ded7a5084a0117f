"""Which linear layers lose the points under ``--quantize int8``: a trained run's dev split scored
in fp32, all-int8, and all-int8 but one group kept in fp32 (``--keep-fp32``), each group's forward
CPU time measured in interleaved rounds over the same length-sorted batches (encoded once).

Groups: each kind of linear layer (its qualified name without layer numbers, e.g.
``encoder.layer.N.intermediate.dense``) and each encoder layer (``layer.N.``). The last rows keep
the most sensitive kinds cumulatively, the frontier (speed-up against points lost).

    PYTHONPATH=. python benchmarks/int8_sensitivity.py RUN --metric semeval2010 --rounds 2
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_int8 import labels  # noqa: E402  (the timed forward loop, shared)

from graphmatch.engine.metrics import METRICS, compute  # noqa: E402
from graphmatch.engine.predictor import Predictor, linear_names, quantize_linear  # noqa: E402


def gold_labels(predictor: Predictor, batches) -> list:
    """Every input's gold label (input order), as the task decodes it."""
    out: dict[int, str] = {}
    with torch.inference_mode():
        for positions, batch in batches:
            out.update(zip(positions, (row["gold"] for row in predictor.task.decode(predictor.model(batch), batch)),
                           strict=True))
    return [out[i] for i in range(len(out))]


def groups(names: list[str]) -> dict[str, str]:
    """Label → ``--keep-fp32`` pattern: one per kind of linear layer, one per numbered layer."""
    kinds = {re.sub(r"\.\d+\.", ".N.", n) for n in names}
    out = {kind: "^" + re.escape(kind).replace(r"\.N\.", r"\.\d+\.") + "$" for kind in sorted(kinds)}
    for number in sorted({int(m) for n in names for m in re.findall(r"layer\.(\d+)\.", n)}):
        out[f"layer {number}"] = rf"layer\.{number}\."
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a trained run folder")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--metric", default="accuracy", choices=sorted(METRICS))
    parser.add_argument("--rounds", type=int, default=2, help="interleaved timing rounds (medians reported)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--limit", type=int, help="only the split's first N inputs")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    predictor = Predictor.from_run(args.run, batch_size=args.batch_size)
    graphs = list(predictor.task.datasets()[args.split])[:args.limit]
    batches = predictor.batches(graphs)
    gold = gold_labels(predictor, batches)
    negative = predictor.task.negative_labels()  # what the run's own evaluation leaves out

    def forward(model: torch.nn.Module) -> tuple[float, float]:
        predicted, seconds = labels(predictor, model, batches)
        return compute([args.metric], [{"pred": p, "gold": g} for p, g in zip(predicted, gold, strict=True)],
                       negative)[args.metric], seconds

    names = linear_names(predictor.model)
    arms: dict[str, torch.nn.Module] = {"fp32": predictor.model, "int8": quantize_linear(predictor.model)}
    patterns = groups(names)
    for label, pattern in patterns.items():
        arms[f"int8, {label} fp32"] = quantize_linear(predictor.model, keep_fp32=pattern)
    scores: dict[str, float] = {}
    times: dict[str, list[float]] = {a: [] for a in arms}
    for _ in range(args.rounds):
        for arm, model in arms.items():
            scores[arm], seconds = forward(model)
            times[arm].append(seconds)

    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    base = median(times["fp32"])
    print(f"{len(graphs)} {args.split} inputs, {len(batches)} batches of {args.batch_size}, {args.threads} thread(s), "
          f"{args.rounds} interleaved round(s), {len(names)} linear layers")
    print(f"| arm | {args.metric} | points lost | forward CPU s | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for arm in arms:
        s = median(times[arm])
        print(f"| {arm} | {scores[arm]:.2f} | {scores['fp32'] - scores[arm]:+.2f} | {s:.2f} | {base / s:.2f}× |")
    kinds = [k for k in patterns if not k.startswith("layer ")]
    ranked = sorted(kinds, key=lambda k: -scores[f"int8, {k} fp32"])
    print("\nthe most sensitive kinds kept in fp32, cumulatively (one timing each, after the rounds):")
    print(f"| kept fp32 | {args.metric} | points lost | forward CPU s | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for n in range(1, len(ranked)):
        pattern = "|".join(f"(?:{patterns[k]})" for k in ranked[:n])
        score, s = forward(quantize_linear(predictor.model, keep_fp32=pattern))
        _, b = forward(predictor.model)
        print(f"| {', '.join(ranked[:n])} | {score:.2f} | {scores['fp32'] - score:+.2f} | {s:.2f} | {b / s:.2f}× |")


if __name__ == "__main__":
    main()
