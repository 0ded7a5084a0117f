"""LET's lattice pair graph as a graph kind: words, spans, senses, sememes and edges
(``inspect let``), the lattice with its reachability closures hidden (``show --kind let``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from typing import Any

from graphmatch.tasks.graph_kinds import (
    NO_INPUT,
    GraphKind,
    common_arguments,
    register_graph_kind,
    show_tokenizer,
)

LET_CLOSURES = (("word", "reach_fwd", "word"),)


def add_arguments(let: argparse.ArgumentParser) -> None:
    let.add_argument("--segmenters", default=None,
                     help="lattice (all three, the default) or a comma list of jieba,thulac,pkuseg")
    let.add_argument("--no-senses", action="store_true", help="leave out HowNet senses and sememes")
    let.add_argument("--max-length", type=int, default=None,
                     help="most tokens per pair, [CLS] and both [SEP] included (default: the builder's)")
    common_arguments(let)


def let_rows(
    lines: Iterable[str],
    *,
    segmenters: str | None = None,
    senses: bool = True,
    max_length: int | None = None,
    vocab: str | None = None,
    data_dir: str | None = None,
) -> Iterator[dict[str, Any]]:
    """One dict per line ``text_a<TAB>text_b[<TAB>label]`` (a ``text_a<TAB>text_b`` header is
    skipped): tokens, words with spans and senses, sememes and every edge list.

    The options are ``inspect let``'s (``senses=False`` is ``--no-senses``; ``segmenters`` a
    comma list, :obj:`None` for the lattice of all three; ``max_length`` :obj:`None` for the
    builder's).
    """
    from graphmatch.graphs.let_core import LatticePairCore
    from graphmatch.graphs.let_options import LatticeOptions
    from graphmatch.knowledge import load_lexicon
    from graphmatch.text import CharTokenizer

    tokenizer = CharTokenizer(vocab) if vocab else CharTokenizer.default(data_dir)
    given = {name: value for name, value in (("segmenters", segmenters), ("max_length", max_length))
             if value is not None}
    options = LatticeOptions(senses=senses, **given)
    # the array core of LatticePairBuilder: the same graph, without importing torch
    builder = LatticePairCore(tokenizer, load_lexicon(data_dir) if senses else None, options, keep_text=True)
    seen = 0
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        fields = line.split("\t")
        if not line.strip() or (lineno == 1 and fields[:2] == ["text_a", "text_b"]):
            continue
        seen += 1
        if len(fields) not in (2, 3):
            raise ValueError(f"line {lineno}: expected text_a<TAB>text_b[<TAB>label], got {len(fields)} fields")
        label = None
        if len(fields) == 3:
            if fields[2].strip() not in ("0", "1"):
                raise ValueError(f"line {lineno}: label must be 0 or 1, got {fields[2].strip()!r}")
            label = int(fields[2])
        try:
            stores = builder.arrays(fields[0], fields[1], label)
        except ValueError as err:
            raise ValueError(f"line {lineno}: {err}") from err
        yield let_graph_dict(stores, fields[0], fields[1], label)
    if not seen:
        raise ValueError(NO_INPUT)


def let_graph_dict(stores: dict[Any, dict[str, Any]], text_a: str, text_b: str,
                   label: int | None = None) -> dict[str, Any]:
    """The arrays of a LET pair graph built with ``keep_text``
    (:meth:`~graphmatch.graphs.let_core.LatticePairCore.arrays`) as plain JSON-ready lists."""
    from graphmatch.graphs.let_core import EDGE_TYPES, NODE_TYPES

    sense_word = stores["sense", "of", "word"]["edge_index"][1].tolist()
    sememe_sense = stores["sememe", "of", "sense"]["edge_index"][1].tolist()
    sememes: list[list[str]] = [[] for _ in sense_word]
    for m, k in enumerate(sememe_sense):
        sememes[k].append(stores["sememe"]["text"][m])
    word = stores["word"]
    words = [
        {"id": i, "word": w, "sent": s, "span": span, "senses": [sememes[k] for k, sw in enumerate(sense_word)
                                                                  if sw == i]}
        for i, (w, s, span) in enumerate(zip(word["text"], word["sent"].tolist(), word["span"].tolist(), strict=True))
    ]
    return {
        "text_a": text_a,
        "text_b": text_b,
        "label": label,
        "tokens": stores["token"]["text"],
        "words": words,
        "senses": [{"id": k, "word": w, "sememes": sememes[k]} for k, w in enumerate(sense_word)],
        "sememe_ids": stores["sememe"]["sememe_id"].tolist(),
        "num_nodes": {t: int(stores[t]["num_nodes"]) for t in NODE_TYPES},
        "edges": {"_".join(et): stores[et]["edge_index"].T.tolist() for et in EDGE_TYPES},
    }


def row_options(args: argparse.Namespace) -> dict[str, Any]:
    return dict(segmenters=args.segmenters, senses=not args.no_senses, max_length=args.max_length,
                vocab=args.vocab, data_dir=args.data_dir)


def let_graph(args: argparse.Namespace, length: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    """``show --kind let``'s lattice pair graph of ``text`` and ``text_b``; the closures are hidden
    unless ``--closures``."""
    from graphmatch.graphs.let import LatticePairBuilder
    from graphmatch.graphs.let_options import LatticeOptions
    from graphmatch.knowledge import load_lexicon
    from graphmatch.text.pretrained import char_tokenizer_of, piece_tokenizer_of, pretrained_folder

    text, text_b = args.text, args.text_b
    if text_b is None:
        raise ValueError("--kind let matches two texts: give text and text_b")
    tokenization = getattr(args, "tokenization", None)
    if tokenization not in (None, "chars", "pieces"):
        raise ValueError(f"--tokenization {tokenization}: LET's encoder reads chars or (with --pretrained) pieces")
    if tokenization == "pieces" and not args.pretrained:
        raise ValueError("--tokenization pieces: the pieces are a pretrained encoder's own; give --pretrained")
    lexicon = None if args.no_senses else load_lexicon(args.data_dir)
    pretrained = pretrained_folder(args.pretrained) if args.pretrained else None
    tokenizer = (char_tokenizer_of(pretrained) if pretrained
                 else show_tokenizer(args.vocab, args.data_dir, lambda: [text, text_b]))
    options = LatticeOptions(segmenters=args.segmenters, senses=not args.no_senses,
                             encoder_tokens=tokenization or "chars", **length)
    pieces = piece_tokenizer_of(pretrained, "--tokenization") if options.encoder_tokens == "pieces" else None
    builder = LatticePairBuilder(tokenizer, lexicon, options, keep_text=True, pieces=pieces)
    data = builder(text, text_b)
    closures = [et for et in LET_CLOSURES if et in data.edge_types]
    drawn = None if args.closures else [et for et in data.edge_types if et not in closures]
    return data, {"edge_types": drawn, "hidden_edge_types": closures}


KIND = register_graph_kind(GraphKind(
    name="let",
    help="LET lattice pair graphs: words, spans, senses, sememes, edges",
    add_arguments=add_arguments,
    rows=let_rows,
    row_options=row_options,
    graph=let_graph,
    show_flags=frozenset({"tokenization"}),
))
