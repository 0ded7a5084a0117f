"""``graphmatch inspect kbert|let|relation [options] INPUT``: print exactly what a model is given.

Reads one example per line from ``INPUT`` (``-`` for stdin) and writes one JSON object per line
to stdout.

- ``kbert``: a line is a text or a pair ``text_a<TAB>text_b`` ([CLS]/[SEP] are added by the
  builder). Output: ``{"tokens", "ids", "pos", "seg", "visible"}`` for the real (unpadded)
  tokens; ``visible[i]`` lists the columns token ``i`` sees.
- ``let``: a pair per line; words, spans, senses, sememes and edges
  (:func:`graphmatch.graphs.let.inspect_rows`).
- ``relation``: a marked sentence per line (:func:`graphmatch.graphs.relation.inspect_rows`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="print the model input built from each line (one JSON object per line)",
        description="Print, for every input line, the graph input a model is given, as one JSON object.",
        epilog=(
            "examples:  graphmatch inspect kbert --kg hownet --mode reference sentences.txt\n"
            "           printf '南京市长江大桥\\t长江大桥在南京\\n' | graphmatch inspect let -\n"
            "           graphmatch inspect relation --max-distance 30 marked.txt"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")

    kb = kinds.add_parser("kbert", help="K-BERT sentence trees: tokens, ids, soft positions, segments, visibility")
    kb.add_argument("--kg", help="knowledge graph: hownet, medical or a .spo file (default: none, plain BERT input)")
    kb.add_argument("--max-length", type=int, default=256, help="tokens kept after the tree is built (default: 256)")
    kb.add_argument("--mode", choices=("default", "reference"), default="default",
                    help="reference reproduces the official K-BERT knowledge layer (default: default)")
    kb.add_argument("--max-entities", type=int, default=2, help="values injected per word (default: 2)")
    kb.add_argument("--no-predicate", action="store_true", help="inject the object alone (K-BERT's NER input)")
    kb.add_argument("--query", choices=("trie", "words"), default="trie",
                    help="K-Query by longest subject match, or by the words of --segmenter (default: trie)")
    kb.add_argument("--segmenter", default="jieba", help="segmenter for --query words (default: jieba)")
    _common(kb)
    kb.set_defaults(func=run)

    let = kinds.add_parser("let", help="LET lattice pair graphs: words, spans, senses, sememes, edges")
    let.add_argument("--segmenters", default=None,
                     help="lattice (all three, the default) or a comma list of jieba,thulac,pkuseg")
    let.add_argument("--no-senses", action="store_true", help="leave out HowNet senses and sememes")
    let.add_argument("--max-length", type=int, default=None,
                     help="most tokens per pair, [CLS] and both [SEP] included (default: the builder's)")
    _common(let)
    let.set_defaults(func=run)

    rel = kinds.add_parser("relation", help="relation graphs of marked sentences (<e1>…</e1> … <e2>…</e2>)")
    rel.add_argument("--max-distance", type=int, default=None, help="clip relative positions (default: the builder's)")
    rel.add_argument("--no-markers", action="store_true", help="leave the <e1>…</e2> marker tokens out of the sentence")
    rel.add_argument("--max-length", type=int, default=None, help="most tokens per sentence (default: the builder's)")
    rel.add_argument("input", nargs="?", default="-", help="input file, - for stdin (default: -)")
    rel.set_defaults(func=run)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vocab", metavar="VOCAB.txt", help="character vocabulary (default: Google's Chinese BERT)")
    p.add_argument("--data-dir", help="data root (default: $GRAPHMATCH_DATA, else a checked download)")
    p.add_argument("input", nargs="?", default="-", help="input file, - for stdin (default: -)")


def kbert_rows(lines: Iterable[str], args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    """One dict per non-blank line ``text`` or ``text_a<TAB>text_b``; errors name the line."""
    from graphmatch.graphs.kbert import SentenceTreeBuilder, visibility_mask
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.text import CharTokenizer

    tokenizer = CharTokenizer(args.vocab) if args.vocab else CharTokenizer.default(args.data_dir)
    kg = KnowledgeGraph.load(args.kg, args.data_dir) if args.kg else None
    builder = SentenceTreeBuilder(
        kg, tokenizer, max_length=args.max_length, max_entities=args.max_entities,
        predicate=not args.no_predicate, mode=args.mode, query=args.query, segmenter=args.segmenter,
        keep_text=True,
    )
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) > 2:
            raise ValueError(f"line {lineno}: expected text or text_a<TAB>text_b, got {len(fields)} fields")
        try:
            data = builder(*fields)
        except ValueError as err:
            raise ValueError(f"line {lineno}: {err}") from err
        token = data["token"]
        visible = visibility_mask(data)[0][0].numpy()
        yield {
            "tokens": token.text,
            "ids": token.input_ids.tolist(),
            "pos": token.pos.tolist(),
            "seg": token.seg.tolist(),
            "visible": [np.flatnonzero(row).tolist() for row in visible],
        }


def _rows_function(kind: str) -> Any:
    """``inspect_rows`` of ``graphmatch.graphs.<kind>``, or ``None`` when it is not there yet."""
    try:
        module = importlib.import_module(f"graphmatch.graphs.{kind}")
    except ModuleNotFoundError as err:
        if err.name != f"graphmatch.graphs.{kind}":
            raise
        return None
    return getattr(module, "inspect_rows", None)


def run(args: argparse.Namespace) -> int:
    if args.kind == "kbert":
        rows_of = kbert_rows
    else:
        rows_of = _rows_function(args.kind)
        if rows_of is None:
            print(f"graphmatch inspect: error: '{args.kind}' inspection is not available in this installation "
                  f"(graphmatch.graphs.{args.kind}.inspect_rows is missing)", file=sys.stderr)
            return 2
    stream = sys.stdin if args.input == "-" else open(args.input, encoding="utf-8")  # noqa: SIM115
    try:
        for row in rows_of(stream, args):
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    finally:
        if stream is not sys.stdin:
            stream.close()
    return 0
