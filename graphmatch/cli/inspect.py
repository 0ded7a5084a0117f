"""``graphmatch inspect kbert|let|relation [options] INPUT``: print exactly what a model is given.

Reads one example per line from ``INPUT`` (``-`` for stdin; UTF-8, a byte-order mark is
ignored) and writes one JSON object per line to stdout; an input without a non-empty line is an
error ("no input").

- ``kbert``: a line is a text or a pair ``text_a<TAB>text_b`` ([CLS]/[SEP] are added by the
  builder). Output: ``{"tokens", "ids", "pos", "seg", "visible"}`` for the real (unpadded)
  tokens; ``visible[i]`` lists the columns token ``i`` sees.
- ``let``: a pair per line ``text_a<TAB>text_b[<TAB>label]``; words, spans, senses, sememes and
  edges (:func:`let_rows`).
- ``relation``: a marked sentence per line, optionally SemEval's ``id<TAB>"sentence"``, or a
  ``head<TAB>tail<TAB>[relation<TAB>]sentence`` line (:func:`relation_rows`).

Each family registers its kind (:mod:`graphmatch.tasks.graph_kinds`), which imports its graph
builder only when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from graphmatch.tasks.graph_kinds import NO_INPUT, graph_kinds
from graphmatch.tasks.graph_kinds.kbert import kbert_rows
from graphmatch.tasks.graph_kinds.let import let_graph_dict, let_rows
from graphmatch.tasks.graph_kinds.relation import relation_graph_dict, relation_rows
from graphmatch.tasks.keys import BUILTIN_TASKS

__all__ = ["KINDS", "NO_INPUT", "ROWS", "add_parser", "kbert_rows", "let_graph_dict", "let_rows",
           "relation_graph_dict", "relation_rows", "row_options", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="print the model input built from each line (one JSON object per line)",
        description="Print, for every input line, the graph input a model is given, as one JSON object.",
        epilog=(
            "examples:  graphmatch inspect kbert --kg hownet --mode reference sentences.txt\n"
            "           echo 'Geese eat corn.' | graphmatch inspect kbert --kg wordnet --pretrained minilm -\n"
            "           printf '南京市长江大桥\\t长江大桥在南京\\n' | graphmatch inspect let -\n"
            "           graphmatch inspect relation --max-distance 30 marked.txt\n"
            "           graphmatch inspect relation --tokenization chars head_tail.tsv"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    for name in (n for n in BUILTIN_TASKS if n in KINDS):  # the registry's families, each with its options
        help_text, add_arguments = KINDS[name]
        kind = kinds.add_parser(name, help=help_text)
        add_arguments(kind)
        kind.set_defaults(func=run)


#: each task of :data:`~graphmatch.tasks.keys.BUILTIN_TASKS` with a graph kind: its help and its options
KINDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    name: (kind.help, kind.add_arguments) for name, kind in graph_kinds().items()
}
#: what ``inspect`` prints of a line, by kind
ROWS = {name: kind.rows for name, kind in graph_kinds().items()}


def row_options(args: argparse.Namespace) -> dict:
    """The row builder's keyword arguments from the parsed command line of ``args.kind``."""
    return graph_kinds()[args.kind].row_options(args)


def run(args: argparse.Namespace) -> int:
    from graphmatch.io.text_files import iter_lines

    for row in ROWS[args.kind](iter_lines(args.input), **row_options(args)):
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0
