"""``graphmatch evaluate RUN_OR_CKPT [--split test]``: metrics of a run's selected checkpoint."""

from __future__ import annotations

import argparse

from graphmatch.cli.train import add_set_argument


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="evaluate a run folder's selected checkpoint (or a .ckpt) on dev or test",
        description="Rebuild the task and model from the checkpoint's configuration and evaluate it.",
    )
    p.add_argument("run", metavar="RUN_OR_CKPT", help="run folder (uses its best.ckpt) or checkpoint file")
    p.add_argument("--split", default="test", choices=("dev", "test"))
    add_set_argument(p, "data/train overrides, e.g. --set data.root=/path/to/data train.eval_batch_size=64")
    p.add_argument("--predictions", metavar="OUT.jsonl", help="also write the per-sample rows here")
    p.add_argument("--precision", choices=["auto", "32-true", "bf16-mixed"],
                   help="what the model runs in (default: the run's train.precision; auto = bf16-mixed on a CPU "
                        "with bf16 units, else 32-true)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from graphmatch.engine.arguments import check_evaluate  # no torch: arguments refused at once

    check_evaluate(args.run, args.split, args.overrides, args.predictions)
    from graphmatch.engine.runs.restore import evaluate  # torch; Lightning once it validates

    metrics = evaluate(args.run, split=args.split, overrides=args.overrides, predictions=args.predictions,
                       precision=args.precision)
    for name, value in metrics.items():
        print(f"{args.split} {name}\t{value:.2f}")
    return 0
