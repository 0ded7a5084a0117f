"""``graphmatch probe RUN --input FILE [--json]``: does a trained K-BERT (or relation) run read its knowledge
(:mod:`graphmatch.engine.inference.probe`)? Coverage, attention on the branches per layer against a uniform
share, the score with every branch cut, and NER's recall of the entities the KG matches."""

from __future__ import annotations

import argparse
import json


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "probe",
        help="does a trained K-BERT (or relation transformer) run read its knowledge graph's branches? (coverage, "
             "attention, branches cut)",
        description="Markdown on stdout (JSON with --json): the inputs with a branch, the attention a trunk token "
                    "puts on its branches per layer against a uniform share, the score and the labels that change "
                    "with every branch cut, and for NER the recall of the gold entities the KG matches.",
    )
    p.add_argument("run", metavar="RUN_OR_CKPT", help="run folder (uses its best.ckpt) or checkpoint file")
    p.add_argument("--input", metavar="FILE", required=True,
                   help="TSV/CSV/JSONL file of inputs with their gold labels (e.g. the dataset's dev.tsv; a "
                        "SemEval file for a relation run)")
    p.add_argument("--seen", metavar="TRAIN_FILE",
                   help="NER: the run's training file; recall is also reported for the gold entities never seen there")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N inputs")
    p.add_argument("--batch-size", type=int, default=64, help="inputs per batch (default 64)")
    p.add_argument("--json", action="store_true", help="the figures as JSON instead of Markdown")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {args.limit}")
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be >= 1, got {args.batch_size}")
    from graphmatch.engine.inference.probe import probe_file, report

    figures = probe_file(args.run, args.input, limit=args.limit, batch_size=args.batch_size, seen=args.seen)
    print(json.dumps(figures, indent=1) if args.json else report(figures))
    return 0
