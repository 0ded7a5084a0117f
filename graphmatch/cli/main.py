"""The ``graphmatch`` command. Each subcommand lives in its own module of this package and
exposes ``add_parser(subparsers)``, which registers its parser with ``func=run``."""

from __future__ import annotations

import argparse
import importlib
import sys

#: subcommand modules, in the order ``graphmatch --help`` lists them
COMMANDS = ("demo", "train", "evaluate", "predict", "score", "inspect", "show")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmatch",
        description="Knowledge-enhanced Chinese NLP on PyTorch Geometric (K-BERT, LET, relation classification).",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"graphmatch.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"graphmatch.cli.{name}":
                raise
            continue
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (FileNotFoundError, ValueError, KeyError, NotImplementedError) as err:
        # user errors: one clear line, no traceback
        print(f"graphmatch {args.command}: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
