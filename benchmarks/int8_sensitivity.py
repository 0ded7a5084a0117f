"""Which linear layers lose the points under ``--quantize int8``: a trained run's dev split scored
in fp32, all-int8, and all-int8 but one group kept in fp32 (``--keep-fp32``), each group's forward
CPU time measured in interleaved rounds over the same length-sorted batches (encoded once).

Groups: each kind of linear layer (its qualified name without layer numbers, e.g.
``encoder.layer.N.intermediate.dense``) and each encoder layer (``layer.N.``). The last rows keep
the most sensitive kinds cumulatively, the frontier (speed-up against points lost). ``--alphas``
adds smoothed int8 arms (:mod:`graphmatch.engine.inference.quantize`: each layer's input range moved into
its weights, calibrated on the first ``--calibrate`` training inputs); ``--plot`` draws every arm
as speed-up against points lost.

    PYTHONPATH=. python benchmarks/int8_sensitivity.py RUN --metric semeval2010 --rounds 2 \
        --alphas 0.5 0.65 0.8 --plot frontier.png
    PYTHONPATH=. python benchmarks/int8_sensitivity.py RUN --split test --no-groups --alphas 0.8
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_int8 import labels  # noqa: E402  (the timed forward loop, shared)

from graphmatch.engine.inference.predictor import Predictor  # noqa: E402
from graphmatch.engine.inference.quantize import MIN_SPREAD, input_ranges, linear_names, quantize_linear, spread  # noqa: E402
from graphmatch.metrics import METRICS, compute  # noqa: E402


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


def plot(points: dict[str, tuple[float, float]], frontier: list[tuple[float, float]], path: str, title: str,
         goal: tuple[float, float] = (1.8, 0.3)) -> None:
    """Every arm as (speed-up, points lost), the cumulative frontier as a line, the goal's corner
    shaded (``goal``: least speed-up, most points lost)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    right = max(goal[0], *(x for x, _ in points.values())) + 0.15
    bottom = min(0.0, *(y for _, y in points.values())) - 0.15
    ax.fill_between([goal[0], right], bottom, goal[1], color="#dff0d8", zorder=0,
                    label=f"goal: ≥ {goal[0]:g}× for ≤ {goal[1]:g} points")
    if frontier:
        ax.plot(*zip(*frontier, strict=True), color="#999999", lw=1, marker=".",
                label="most sensitive kinds kept fp32, cumulatively")
    kinds = {"whole": ("#1f77b4", "fp32 / all int8"), "smoothed": ("#d62728", "int8 smoothed"),
             "group": ("#7f7f7f", "int8, one group kept fp32")}
    for label, (x, y) in points.items():
        kind = "whole" if label in ("fp32", "int8") else "smoothed" if label.startswith("int8 smoothed") else "group"
        color, legend = kinds[kind]
        ax.scatter([x], [y], s=14 if kind == "group" else 36, zorder=3, color=color, label=legend)
        kinds[kind] = (color, None)  # one legend entry per kind
        if kind != "group":
            ax.annotate(label, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.axhline(0, color="black", lw=0.5)
    ax.set_xlabel("forward speed-up over fp32 (×, 1 thread)")
    ax.set_ylabel("points lost against fp32")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", help="a trained run folder")
    parser.add_argument("--split", default="dev")
    parser.add_argument("--metric", default="accuracy", choices=sorted(METRICS))
    parser.add_argument("--rounds", type=int, default=2, help="interleaved timing rounds (medians reported)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--limit", type=int, help="only the split's first N inputs")
    parser.add_argument("--groups", action=argparse.BooleanOptionalAction, default=True,
                        help="the arms that keep one group in fp32, and the frontier (default on)")
    parser.add_argument("--alphas", type=float, nargs="*", default=(), help="smoothed int8 arms, one per alpha")
    parser.add_argument("--calibrate", type=int, default=256, help="training inputs the smoothing ranges come from")
    parser.add_argument("--min-spread", type=float, nargs="+", default=[MIN_SPREAD],
                        help="smooth the layers whose largest input range is this many times the median (0: all); "
                             "several: arms for each")
    parser.add_argument("--plot", metavar="OUT.png", help="draw every arm: speed-up against points lost")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    predictor = Predictor.from_run(args.run, batch_size=args.batch_size)
    datasets = predictor.task.datasets()
    graphs = list(datasets[args.split])[:args.limit]
    batches = predictor.batches(graphs)
    gold = gold_labels(predictor, batches)
    negative = predictor.task.negative_labels()  # what the run's own evaluation leaves out

    def forward(model: torch.nn.Module) -> tuple[float, float]:
        predicted, seconds = labels(predictor, model, batches)
        return compute([args.metric], [{"pred": p, "gold": g} for p, g in zip(predicted, gold, strict=True)],
                       negative)[args.metric], seconds

    names = linear_names(predictor.model)
    arms: dict[str, torch.nn.Module] = {"fp32": predictor.model, "int8": quantize_linear(predictor.model)}
    if args.alphas:
        calibration = predictor.batches(list(datasets["train"])[:args.calibrate])
        ranges = input_ranges(predictor.model, (batch for _, batch in calibration))
        smoothed = ", ".join(f"{sum(spread(r) >= least for r in ranges.values())} of spread ≥ {least:g}"
                             for least in args.min_spread)
        for least in args.min_spread:
            for alpha in args.alphas:
                label = f"int8 smoothed, alpha {alpha:g}"
                label += f", spread ≥ {least:g}" if len(args.min_spread) > 1 else ""
                arms[label] = quantize_linear(predictor.model, ranges=ranges, alpha=alpha, min_spread=least)
    patterns = groups(names) if args.groups else {}
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
    points = {arm: (base / median(times[arm]), scores["fp32"] - scores[arm]) for arm in arms}
    print(f"{len(graphs)} {args.split} inputs, {len(batches)} batches of {args.batch_size}, {args.threads} thread(s), "
          f"{args.rounds} interleaved round(s), {len(names)} linear layers"
          + (f", smoothing calibrated on {args.calibrate} training inputs (layers: {smoothed})" if args.alphas else ""))
    print(f"| arm | {args.metric} | points lost | forward CPU s | speed-up |")
    print("|---|---:|---:|---:|---:|")
    for arm in arms:
        speed, lost = points[arm]
        print(f"| {arm} | {scores[arm]:.2f} | {lost:+.2f} | {median(times[arm]):.2f} | {speed:.2f}× |")
    frontier: list[tuple[float, float]] = []
    kinds = [k for k in patterns if not k.startswith("layer ")]
    if kinds:
        ranked = sorted(kinds, key=lambda k: -scores[f"int8, {k} fp32"])
        print("\nthe most sensitive kinds kept in fp32, cumulatively (one timing each, after the rounds):")
        print(f"| kept fp32 | {args.metric} | points lost | forward CPU s | speed-up |")
        print("|---|---:|---:|---:|---:|")
        for n in range(1, len(ranked)):
            pattern = "|".join(f"(?:{patterns[k]})" for k in ranked[:n])
            score, s = forward(quantize_linear(predictor.model, keep_fp32=pattern))
            _, b = forward(predictor.model)
            frontier.append((b / s, scores["fp32"] - score))
            print(f"| {', '.join(ranked[:n])} | {score:.2f} | {scores['fp32'] - score:+.2f} | {s:.2f} | {b / s:.2f}× |")
    if args.plot:
        run = Path(args.run).absolute()
        plot(points, frontier, args.plot, f"int8 on {run.parent.name}/{run.name}: {len(graphs)} {args.split} inputs, "
             f"{args.metric}")
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
