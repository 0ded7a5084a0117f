"""``graphmatch score semeval2010 PROPOSED KEY``: the official SemEval-2010 Task 8 score."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "score",
        help="score a prediction file with an official metric (semeval2010)",
        description="semeval2010: the (9+1)-way macro-F1 with directionality of the official perl scorer "
        "(semeval2010_task8_scorer-v1.2.pl PROPOSED KEY), printed as a percentage.",
    )
    p.add_argument("metric", choices=("semeval2010",))
    p.add_argument("proposed", metavar="PROPOSED", help="'ID<TAB>LABEL' lines (the system's answers)")
    p.add_argument("key", metavar="KEY", help="'ID<TAB>LABEL' lines (the gold answers)")
    p.add_argument("--details", action="store_true", help="also print P/R/F1 per relation")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from graphmatch.metrics.semeval import read_answer_file, score_files, semeval_scores

    score = score_files(args.proposed, args.key)
    if args.details:
        proposed, key = read_answer_file(args.proposed), read_answer_file(args.key)
        scores = semeval_scores([proposed.get(i) for i in key], list(key.values()))
        for rel, (p, r, f) in scores["relations"].items():
            print(f"{rel:>20}  P {p:6.2f}  R {r:6.2f}  F1 {f:6.2f}")
        print("(9+1)-way evaluation with directionality taken into account: macro-averaged F1 =", end=" ")
    print(f"{score:.2f}")
    return 0
