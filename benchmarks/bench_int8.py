"""What ``--quantize`` costs and gains on a trained run: the test metric and the forward loop's
CPU time of fp32, ``int8`` (weights scaled per output channel) and ``int8-per-tensor``, side by
side in one process over the same length-sorted batches (encoded once).

The inputs are a file in the task's own columns (what ``graphmatch predict --input`` reads) and a
file of gold labels, one per line; ``--metric`` is any of ``graphmatch.metrics.METRICS``
that compares single labels (``accuracy``, ``semeval2010``, ``macro_f1`` …).

    PYTHONPATH=. python benchmarks/bench_int8.py RUN --input texts.txt --gold labels.txt --metric semeval2010
"""

from __future__ import annotations

import argparse
import time

import torch

from graphmatch.engine.inference.predictor import QUANTIZE, Predictor, read_inputs
from graphmatch.engine.inference.quantize import quantize_linear
from graphmatch.metrics import METRICS, compute


def labels(predictor: Predictor, model: torch.nn.Module, batches) -> tuple[list, float]:
    """Every input's predicted label (input order) and the CPU seconds of the forward passes."""
    out: dict[int, str] = {}
    seconds = 0.0
    with torch.inference_mode():
        for positions, batch in batches:
            start = time.process_time()
            scores = model(batch)
            seconds += time.process_time() - start
            for i, row in zip(positions, predictor.task.decode(scores, batch), strict=True):
                out[i] = row["pred"]
    return [out[i] for i in range(len(out))], seconds


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a trained run folder")
    parser.add_argument("--input", required=True, help="the inputs, one per line, in the task's columns")
    parser.add_argument("--gold", required=True, help="the gold label of each input, one per line")
    parser.add_argument("--metric", default="accuracy", choices=sorted(METRICS))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    predictor = Predictor.from_run(args.run)
    inputs = read_inputs(args.input, predictor.task)
    with open(args.gold, encoding="utf-8") as f:
        gold = [line.strip() for line in f if line.strip()]
    if len(gold) != len(inputs):
        raise SystemExit(f"{len(inputs)} inputs but {len(gold)} gold labels")
    graphs, _ = predictor.encode(inputs)
    batches = predictor.batches(graphs)
    negative = predictor.task.negative_labels()  # what the run's own evaluation leaves out
    def score(predicted: list) -> float:
        return compute([args.metric], [{"pred": p, "gold": g} for p, g in zip(predicted, gold, strict=True)],
                       negative)[args.metric]

    fp32, base_s = labels(predictor, predictor.model, batches)
    print(f"{len(inputs)} inputs, {len(batches)} batches of {predictor.batch_size}, {args.threads} thread(s)")
    print(f"| precision | {args.metric} | labels changed | forward CPU s | speed-up |")
    print("|---|---:|---:|---:|---:|")
    print(f"| fp32 | {score(fp32):.2f} | — | {base_s:.1f} | 1.00× |")
    for name, weights in QUANTIZE.items():
        predicted, seconds = labels(predictor, quantize_linear(predictor.model, weights), batches)
        changed = 100 * sum(a != b for a, b in zip(predicted, fp32, strict=True)) / len(fp32)
        print(f"| {name} | {score(predicted):.2f} | {changed:.2f} % | {seconds:.1f} | {base_s / seconds:.2f}× |")


if __name__ == "__main__":
    main()
