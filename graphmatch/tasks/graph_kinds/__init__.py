"""The graph kinds that ``graphmatch inspect`` and ``graphmatch show`` offer: each family of
:data:`~graphmatch.tasks.keys.BUILTIN_TASKS` registers one in ``graph_kinds/<family>.py``
(:func:`register_graph_kind`), and the two commands loop over :func:`graph_kinds`.

A kind says how one input becomes its graph and what is printed or drawn of it. Its module imports
neither torch nor NumPy at the top level (``inspect`` builds on the array cores without torch);
each hook imports its builder when it runs.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graphmatch.tasks.keys import BUILTIN_TASKS

NO_INPUT = "no input: every line is empty"

#: ``show``'s options that only some kinds read (the others refuse them)
SHOW_FLAGS = ("kg", "matrix", "select", "pair_encoding", "tokenization")


def plain_picture(data: Any, options: dict[str, Any], args: argparse.Namespace, png: bool) -> dict[str, Any]:
    """The picture of a graph as it is built: ``save_picture``'s ``edge_types`` and ``hidden_edge_types``."""
    return {"visible": None, "edge_types": options.get("edge_types"),
            "hidden_edge_types": options.get("hidden_edge_types", ())}


@dataclass(frozen=True)
class GraphKind:
    """One family's input graph as ``inspect`` prints it and ``show`` draws it.

    - ``help``, ``add_arguments(parser)``: ``inspect KIND``'s help and its options;
    - ``rows(lines, **row_options(args))``: one JSON-ready dict per non-blank input line, errors
      naming the line;
    - ``graph(args, length)``: ``show``'s graph of ``args.text`` (and ``args.text_b``), built with
      ``keep_text``, and the picture options for it (``length``: ``{"max_length": n}`` when given);
    - ``picture(data, options, args, png)``: ``save_picture``'s ``visible``, ``edge_types`` and
      ``hidden_edge_types`` for that graph (``png``: a PNG, else an HTML page), and ``matrix``, a
      visibility to draw on its own for ``--matrix``;
    - ``show_flags``: which of :data:`SHOW_FLAGS` the kind reads;
    - ``one_line_input``: a tab-separated line on ``show``'s stdin is one input, not a pair.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    rows: Callable[..., Iterator[dict[str, Any]]]
    row_options: Callable[[argparse.Namespace], dict[str, Any]]
    graph: Callable[[argparse.Namespace, dict[str, int]], tuple[Any, dict[str, Any]]]
    picture: Callable[[Any, dict[str, Any], argparse.Namespace, bool], dict[str, Any]] = plain_picture
    show_flags: frozenset[str] = field(default_factory=frozenset)
    one_line_input: bool = False


_KINDS: dict[str, GraphKind] = {}


def register_graph_kind(kind: GraphKind) -> GraphKind:
    """Make ``kind`` one of :func:`graph_kinds` (called by its family's module)."""
    unknown = set(kind.show_flags) - set(SHOW_FLAGS)
    if unknown:
        raise ValueError(f"graph kind {kind.name!r}: unknown show flags {sorted(unknown)}")
    _KINDS[kind.name] = kind
    return kind


def graph_kinds() -> dict[str, GraphKind]:
    """``{name: kind}`` of every family of :data:`~graphmatch.tasks.keys.BUILTIN_TASKS` that has
    registered one, in the registry's order (a family without one yet is left out)."""
    for name in BUILTIN_TASKS:
        if name not in _KINDS and importlib.util.find_spec(f"{__name__}.{name}") is not None:
            importlib.import_module(f"{__name__}.{name}")
    return {name: _KINDS[name] for name in BUILTIN_TASKS if name in _KINDS}


def some_input(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` again, once one of them is not blank: no input is refused before a knowledge
    graph or a segmenter loads."""
    lines = iter(lines)
    head = []
    for line in lines:
        head.append(line)
        if line.strip():
            return itertools.chain(head, lines)
    raise ValueError(NO_INPUT)


def common_arguments(p: argparse.ArgumentParser) -> None:
    """``inspect``'s options of a kind over a character vocabulary: ``--vocab``, ``--data-dir``, the input."""
    p.add_argument("--vocab", metavar="VOCAB.txt", help="character vocabulary (default: Google's Chinese BERT)")
    p.add_argument("--data-dir", help="data root (default: $GRAPHMATCH_DATA, else a checked download)")
    p.add_argument("input", nargs="?", default="-", help="input file, - for stdin (default: -)")


VOCAB_FILE = "kbert/vocab/google_vocab.txt"


def show_tokenizer(vocab: str | None, data_dir: str | None, texts: Callable[[], list[str]],
                   pretrained: str | None = None) -> Any:
    """``show``'s tokenizer: ``pretrained``'s, else ``vocab``'s characters, else Google's Chinese
    BERT vocabulary under the data root, else one made from ``texts()`` (said on stderr; only then
    are they listed: for K-BERT, every value of the KG)."""
    import sys

    from graphmatch.io.datafiles import DataFileMissing, locate
    from graphmatch.text import CharTokenizer
    from graphmatch.text.pretrained import pretrained_tokenizer

    if pretrained:
        return pretrained_tokenizer(pretrained)
    if vocab:
        return CharTokenizer(vocab)
    try:
        return CharTokenizer(locate(VOCAB_FILE, data_dir, download=False))
    except DataFileMissing:
        print(
            f"graphmatch show: no {VOCAB_FILE} under the data root; token ids come from the input's "
            "own characters (pass --vocab or --data-dir for BERT's)",
            file=sys.stderr,
        )
        return CharTokenizer.from_texts(texts())
