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

Each kind imports its graph builder only when it runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from graphmatch.graphs.defaults import KBERT_MAX_ENTITIES, KBERT_MAX_LENGTH, KBERT_SEGMENTER
from graphmatch.tasks.keys import BUILTIN_TASKS

NO_INPUT = "no input: every line is empty"


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


def _kbert_arguments(kb: argparse.ArgumentParser) -> None:
    kb.add_argument("--kg", help="knowledge graph: hownet, medical, wordnet or a .spo file "
                    "(default: none, plain BERT input)")
    kb.add_argument("--max-length", type=int, help=f"tokens kept after the tree is built (default: {KBERT_MAX_LENGTH})")
    kb.add_argument("--mode", choices=("default", "reference"), default="default",
                    help="reference reproduces the official K-BERT knowledge layer (default: default)")
    kb.add_argument("--max-entities", type=int, help=f"values injected per word (default: {KBERT_MAX_ENTITIES})")
    kb.add_argument("--no-predicate", action="store_true", help="inject the object alone (K-BERT's NER input)")
    kb.add_argument("--query", choices=("trie", "words"), default=None,
                    help="K-Query by longest subject match, or by the words of --segmenter (default: trie; "
                    "word pieces: their words)")
    kb.add_argument("--pretrained", metavar="DIR", help="a checkpoint folder (or minilm) whose vocab.txt gives the "
                    "tokens; an English one's word pieces")
    kb.add_argument("--segmenter", help=f"segmenter for --query words (default: {KBERT_SEGMENTER})")
    _common(kb)


def _let_arguments(let: argparse.ArgumentParser) -> None:
    let.add_argument("--segmenters", default=None,
                     help="lattice (all three, the default) or a comma list of jieba,thulac,pkuseg")
    let.add_argument("--no-senses", action="store_true", help="leave out HowNet senses and sememes")
    let.add_argument("--max-length", type=int, default=None,
                     help="most tokens per pair, [CLS] and both [SEP] included (default: the builder's)")
    _common(let)


def _relation_arguments(rel: argparse.ArgumentParser) -> None:
    rel.add_argument("--max-distance", type=int, default=None, help="clip relative positions (default: the builder's)")
    rel.add_argument("--no-markers", action="store_true", help="leave the <e1>…</e2> marker tokens out of the sentence")
    rel.add_argument("--max-length", type=int, default=None, help="most tokens per sentence (default: the builder's)")
    rel.add_argument("--tokenization", default="words",
                     help="words, chars, jieba, thulac or pkuseg (default: words)")
    rel.add_argument("--pretrained", metavar="DIR",
                     help="a local checkpoint folder: its tokenizer's word pieces, markers in [unused] slots")
    rel.add_argument("input", nargs="?", default="-", help="input file, - for stdin (default: -)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--vocab", metavar="VOCAB.txt", help="character vocabulary (default: Google's Chinese BERT)")
    p.add_argument("--data-dir", help="data root (default: $GRAPHMATCH_DATA, else a checked download)")
    p.add_argument("input", nargs="?", default="-", help="input file, - for stdin (default: -)")


#: each task of :data:`~graphmatch.tasks.keys.BUILTIN_TASKS`: the help of its kind and its options
KINDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "kbert": ("K-BERT sentence trees: tokens, ids, soft positions, segments, visibility", _kbert_arguments),
    "let": ("LET lattice pair graphs: words, spans, senses, sememes, edges", _let_arguments),
    "relation": ("relation graphs of marked sentences (<e1>…</e1> … <e2>…</e2>)", _relation_arguments),
}


def _some_input(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` again, once one of them is not blank: no input is refused before a knowledge
    graph or a segmenter loads."""
    lines = iter(lines)
    head = []
    for line in lines:
        head.append(line)
        if line.strip():
            return itertools.chain(head, lines)
    raise ValueError(NO_INPUT)


def kbert_rows(
    lines: Iterable[str],
    *,
    max_length: int | None = None,
    kg: str | None = None,
    vocab: str | None = None,
    data_dir: str | None = None,
    mode: str = "default",
    max_entities: int | None = None,
    predicate: bool = True,
    query: str | None = None,
    segmenter: str | None = None,
    pretrained: str | None = None,
) -> Iterator[dict[str, Any]]:
    """One dict per non-blank line ``text`` or ``text_a<TAB>text_b``; errors name the line.

    The options are ``inspect kbert``'s (``predicate=False`` is ``--no-predicate``); ``kg`` is
    a graph name or ``.spo`` file (:obj:`None`, ``"none"`` or ``"null"``: plain BERT input),
    ``vocab`` a character vocabulary (default: Google's Chinese BERT under ``data_dir``), ``pretrained`` a
    checkpoint folder or short name whose vocabulary is used instead (word pieces for an English
    one); ``max_length``, ``max_entities``, ``query`` and ``segmenter`` :obj:`None` for the builder's
    (:class:`~graphmatch.graphs.kbert.options.TreeOptions`).
    """
    import numpy as np

    from graphmatch.graphs.kbert import TreeCore, tree_visibility
    from graphmatch.graphs.kbert.options import TreeOptions
    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.text import CharTokenizer
    from graphmatch.text.checkpoint import checkpoint_tokenizer

    lines = _some_input(lines)
    if pretrained:
        tokenizer = checkpoint_tokenizer(pretrained)
    else:
        tokenizer = CharTokenizer(vocab) if vocab else CharTokenizer.default(data_dir)
    graph = KnowledgeGraph.load(kg, data_dir) if kg and kg.lower() not in ("none", "null") else None
    given = {name: value for name, value in (("max_length", max_length), ("max_entities", max_entities),
                                             ("segmenter", segmenter)) if value is not None}
    options = TreeOptions.for_tokenizer(tokenizer, mode=mode, query=query, predicate=predicate, **given)
    # the array core of SentenceTreeBuilder: the same trees, without importing torch
    builder = TreeCore(graph, tokenizer, keep_text=True, **options.core_arguments())
    seen = 0
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        seen += 1
        fields = line.split("\t")
        if len(fields) > 2:
            raise ValueError(f"line {lineno}: expected text or text_a<TAB>text_b, got {len(fields)} fields")
        try:
            builder.check(*fields)
        except ValueError as err:
            raise ValueError(f"line {lineno}: {err}") from err
        trees = builder.build(fields[:1], fields[1:] or None)
        token = trees.stores["token"]
        yield {
            "tokens": token["text"],
            "ids": token["input_ids"].tolist(),
            "pos": token["pos"].tolist(),
            "seg": token["seg"].tolist(),
            "visible": [np.flatnonzero(row).tolist() for row in tree_visibility(trees)],
        }
    if not seen:
        raise ValueError(NO_INPUT)


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
    builder = LatticePairCore(tokenizer, load_lexicon(data_dir) if senses else None, keep_text=True,
                              **options.builder_arguments())
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
    max_distance, common = options.max_distance, options.geometry(keep_text=True)
    if pretrained:
        builder = RelationGraphBuilder.for_pieces(WordPieces.from_pretrained(pretrained), **common)
        sentences = [(n, sid, s) for n, sid, s in parsed]
    else:
        split = splitter(options.tokenization)
        sentences = [(n, sid, tokenize_marked(s, split, f"line {n}")) for n, sid, s in parsed]
        mark = with_markers if common["markers"] else (lambda sent: sent)
        builder = RelationGraphBuilder(Vocab.build(mark(s).tokens for _, _, s in sentences), split=split, **common)
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
    """The row builder's keyword arguments from the parsed command line of ``args.kind``."""
    if args.kind == "kbert":
        return dict(max_length=args.max_length, kg=args.kg, vocab=args.vocab, data_dir=args.data_dir, mode=args.mode,
                    max_entities=args.max_entities, predicate=not args.no_predicate, query=args.query,
                    segmenter=args.segmenter, pretrained=args.pretrained)
    if args.kind == "let":
        return dict(segmenters=args.segmenters, senses=not args.no_senses, max_length=args.max_length,
                    vocab=args.vocab, data_dir=args.data_dir)
    return dict(max_distance=args.max_distance, markers=not args.no_markers, max_length=args.max_length,
                tokenization=args.tokenization, pretrained=args.pretrained)


#: each task of :data:`~graphmatch.tasks.keys.BUILTIN_TASKS`: what ``inspect`` prints of a line
ROWS = {"kbert": kbert_rows, "let": let_rows, "relation": relation_rows}


def run(args: argparse.Namespace) -> int:
    from graphmatch.io.text_files import iter_lines

    for row in ROWS[args.kind](iter_lines(args.input), **row_options(args)):
        sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    return 0
