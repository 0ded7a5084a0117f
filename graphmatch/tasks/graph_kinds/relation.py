"""The relation graph of a marked sentence as a graph kind: tokens, word ids, relative positions
and entity edges (``inspect relation``), the graph over the tokens the model sees (``show --kind
relation``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Iterator
from typing import Any

from graphmatch.tasks.graph_kinds import NO_INPUT, GraphKind, register_graph_kind


def add_arguments(rel: argparse.ArgumentParser) -> None:
    rel.add_argument("--max-distance", type=int, default=None, help="clip relative positions (default: the builder's)")
    rel.add_argument("--no-markers", action="store_true", help="leave the <e1>…</e2> marker tokens out of the sentence")
    rel.add_argument("--max-length", type=int, default=None, help="most tokens per sentence (default: the builder's)")
    rel.add_argument("--tokenization", default="words",
                     help="words, chars, jieba, thulac or pkuseg (default: words)")
    rel.add_argument("--pretrained", metavar="DIR",
                     help="a local checkpoint folder: its tokenizer's word pieces, markers in [unused] slots")
    rel.add_argument("input", nargs="?", default="-", help="input file, - for stdin (default: -)")


def relation_rows(
    lines: Iterable[str],
    *,
    max_distance: int | None = None,
    markers: bool = True,
    max_length: int | None = None,
    tokenization: str = "words",
    pretrained: str | None = None,
) -> Iterator[dict[str, Any]]:
    """One dict per non-blank line: a marked sentence, optionally SemEval's ``id<TAB>"sentence"``,
    or ``head<TAB>tail<TAB>[relation<TAB>]sentence``.

    The options are ``inspect relation``'s (``markers=False`` is ``--no-markers``;
    ``max_distance`` and ``max_length`` :obj:`None` for the builder's). Tokens are
    ``tokenization``'s, or the word pieces of the tokenizer in the ``pretrained`` folder; word ids
    come from a vocabulary built over the given lines (or the tokenizer's); positions are shown
    unshifted (``-D … D``).
    """
    from graphmatch.graphs.relation import (
        RelationGraphBuilder,
        WordPieces,
        split_input_line,
        splitter,
        tokenize_marked,
        with_markers,
    )
    from graphmatch.graphs.relation_markup import locate_entities, parse_markup
    from graphmatch.graphs.relation_options import RelationOptions
    from graphmatch.text import Vocab

    parsed = []
    for n, line in enumerate(lines, start=1):
        line = line.removeprefix("\ufeff") if n == 1 else line
        if not line.strip():
            continue
        fields = line.rstrip("\r\n").split("\t")
        if len(fields) in (3, 4) and "<e1>" not in line:
            parsed.append((n, None, locate_entities(fields[-1].strip(), fields[0].strip(), fields[1].strip(),
                                                    f"line {n}")))
        else:
            sid, text = split_input_line(line)
            parsed.append((n, sid, parse_markup(text, where=f"line {n}")))
    if not parsed:
        raise ValueError(NO_INPUT)
    options = RelationOptions(tokenization=tokenization, max_distance=max_distance or RelationOptions.max_distance,
                              max_length=RelationOptions.max_length if max_length is None else max_length,
                              markers=markers)
    max_distance = options.max_distance
    if pretrained:
        builder = RelationGraphBuilder.for_pieces(WordPieces.from_pretrained(pretrained), options, keep_text=True)
        sentences = [(n, sid, s) for n, sid, s in parsed]
    else:
        split = splitter(options.tokenization)
        sentences = [(n, sid, tokenize_marked(s, split, f"line {n}")) for n, sid, s in parsed]
        mark = with_markers if options.markers else (lambda sent: sent)
        builder = RelationGraphBuilder(Vocab.build(mark(s).tokens for _, _, s in sentences), options, keep_text=True,
                                       split=split)
    for n, sid, sent in sentences:
        yield relation_graph_dict(builder(sent, where=f"line {n}"), line=n, sid=sid, max_distance=max_distance)


def relation_graph_dict(data: Any, line: int | None = None, sid: str | None = None,
                        max_distance: int = 50) -> dict[str, Any]:
    """A relation graph built with ``keep_text`` as a JSON-ready dict (positions unshifted)."""
    tok = data["token"]
    ent = data["token", "in", "entity"].edge_index
    row: dict[str, Any] = {"line": line} if line is not None else {}
    if sid is not None:
        row["id"] = sid
    row.update(
        tokens=list(tok.text),
        word_id=tok.word_id.tolist(),
        pos1=(tok.pos1 - max_distance).tolist(),
        pos2=(tok.pos2 - max_distance).tolist(),
        entities=[
            {"name": f"e{k + 1}", "text": data["entity"].text[k], "tokens": ent[0, ent[1] == k].tolist()}
            for k in range(2)
        ],
        edges={
            "token-in-entity": ent.tolist(),
            "token-in-sentence": data["token", "in", "sentence"].edge_index.tolist(),
        },
    )
    if "y" in data:
        row["y"] = int(data.y)
    return row


def row_options(args: argparse.Namespace) -> dict[str, Any]:
    return dict(max_distance=args.max_distance, markers=not args.no_markers, max_length=args.max_length,
                tokenization=args.tokenization, pretrained=args.pretrained)


def relation_graph(text: str, text_b: str | None, tokenization: str | None, length: dict[str, int]) -> Any:
    """The relation graph of a marked sentence or of a ``head<TAB>tail[<TAB>relation]<TAB>sentence``
    line, over the tokens the model sees with ``tokenization`` (default: characters for Chinese
    text, else words)."""
    from graphmatch.graphs.relation import RelationGraphBuilder, splitter, tokenize_marked
    from graphmatch.graphs.relation_markup import locate_entities, parse_markup
    from graphmatch.graphs.relation_options import RelationOptions
    from graphmatch.text.vocab import Vocab

    if text_b is not None:
        raise ValueError("--kind relation takes one marked sentence (or a head<TAB>tail<TAB>sentence line), "
                         "not a pair")
    fields = [f.strip() for f in text.strip("\r\n").split("\t")]
    if len(fields) in (3, 4):  # head, tail, (relation,) sentence
        marked = locate_entities(fields[-1], fields[0], fields[1])
    elif len(fields) == 1:
        marked = parse_markup(text)
    else:
        raise ValueError(f"--kind relation: expected a marked sentence or head<TAB>tail[<TAB>relation]<TAB>sentence, "
                         f"got {len(fields)} tab-separated fields")
    if tokenization is None:
        tokenization = "chars" if any("\u4e00" <= c <= "\u9fff" for c in marked.text) else "words"
    options = RelationOptions.of(length, tokenization=tokenization)
    split = splitter(options.tokenization)
    sentence = tokenize_marked(marked, split)
    builder = RelationGraphBuilder(Vocab.build([sentence.tokens]), options, keep_text=True, split=split)
    return builder(sentence)


def _show_graph(args: argparse.Namespace, length: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    return relation_graph(args.text, args.text_b, args.tokenization, length), {}


KIND = register_graph_kind(GraphKind(
    name="relation",
    help="relation graphs of marked sentences (<e1>…</e1> … <e2>…</e2>)",
    add_arguments=add_arguments,
    rows=relation_rows,
    row_options=row_options,
    graph=_show_graph,
    show_flags=frozenset({"tokenization"}),
    one_line_input=True,
))
