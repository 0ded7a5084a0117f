"""K-BERT's sentence tree as a graph kind: tokens, ids, soft positions, segments and visibility
(``inspect kbert``), the tree beside its visible matrix (``show --kind kbert``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from graphmatch.graphs.defaults import KBERT_MAX_ENTITIES, KBERT_MAX_LENGTH, KBERT_SEGMENTER
from graphmatch.tasks.graph_kinds import (
    NO_INPUT,
    GraphKind,
    common_arguments,
    register_graph_kind,
    show_tokenizer,
    some_input,
)

SEES = ("token", "sees", "token")


def add_arguments(kb: argparse.ArgumentParser) -> None:
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
    common_arguments(kb)


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
    from graphmatch.text.pretrained import pretrained_tokenizer

    lines = some_input(lines)
    if pretrained:
        tokenizer = pretrained_tokenizer(pretrained)
    else:
        tokenizer = CharTokenizer(vocab) if vocab else CharTokenizer.default(data_dir)
    graph = KnowledgeGraph.load(kg, data_dir) if kg and kg.lower() not in ("none", "null") else None
    given = {name: value for name, value in (("max_length", max_length), ("max_entities", max_entities),
                                             ("segmenter", segmenter)) if value is not None}
    options = TreeOptions.for_tokenizer(tokenizer, mode=mode, query=query, predicate=predicate, **given)
    # the array core of SentenceTreeBuilder: the same trees, without importing torch
    builder = TreeCore(graph, tokenizer, options, keep_text=True)
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


def row_options(args: argparse.Namespace) -> dict[str, Any]:
    return dict(max_length=args.max_length, kg=args.kg, vocab=args.vocab, data_dir=args.data_dir, mode=args.mode,
                max_entities=args.max_entities, predicate=not args.no_predicate, query=args.query,
                segmenter=args.segmenter, pretrained=args.pretrained)


def _selection(threshold: float | None, checkpoint: str | None) -> Any:
    """``--select``'s branch selection over ``--pretrained``'s embeddings, or None."""
    if threshold is None:
        return None
    from graphmatch.graphs.branch_selection import BranchSelection
    from graphmatch.pretrained import resolve_pretrained
    from graphmatch.tasks.sentence_embedder import SentenceEmbedder

    return BranchSelection(SentenceEmbedder(resolve_pretrained(checkpoint), progress=False), threshold=threshold)


def kg_texts(kg: Any) -> list[str]:
    """Every predicate and object of ``kg``, so that a vocabulary made from texts covers branches."""
    return [] if kg is None else [p + o for values in kg.subjects.values() for p, o in values]


def kbert_graph(args: argparse.Namespace, length: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    """``show --kind kbert``'s sentence tree (knowledge from ``--kg``, default HowNet)."""
    from graphmatch.graphs.kbert import SentenceTreeBuilder
    from graphmatch.graphs.kbert.options import TreeOptions
    from graphmatch.knowledge import KnowledgeGraph

    text, text_b = args.text, args.text_b
    texts = [t for t in (text, text_b) if t is not None]
    no_kg = (args.kg or "").lower() in ("none", "null")
    kg = None if no_kg else KnowledgeGraph.load(args.kg or "hownet", args.data_dir)
    tokenizer = show_tokenizer(args.vocab, args.data_dir, lambda: texts + kg_texts(kg), args.pretrained)
    selection = _selection(getattr(args, "select", None), args.pretrained)
    options = TreeOptions.for_tokenizer(tokenizer, **length)
    data = SentenceTreeBuilder(kg, tokenizer, options, keep_text=True, selection=selection)(text, text_b)
    if selection is not None:
        for d in selection.dropped:
            print(f"graphmatch show: dropped {d.word} → {d.value} (cosine {d.score:.3f})", file=sys.stderr)
    return data, {"sep_id": tokenizer.sep_id}


def _branch_visibility(data: Any, visible: Any) -> Any:
    """The ``(token, sees, token)`` pairs that involve a branch token (trunk pairs are all visible)."""
    branch = data["token"].branch
    keep = branch[visible[0]] | branch[visible[1]]
    return visible[:, keep]


def picture(data: Any, options: dict[str, Any], args: argparse.Namespace, png: bool) -> dict[str, Any]:
    """The tree with its visible matrix beside it (PNG, unless ``--no-visible``), or with the
    visibility pairs of the branch tokens as a hidden ``token -sees-> token`` edge type (HTML);
    ``--pair-encoding separate``: the visibility a bi-encoder reads."""
    from graphmatch.graphs.kbert import visible_edge_index

    visible = visible_edge_index(data, options.pop("sep_id") if args.pair_encoding == "separate" else None)
    hidden = options.get("hidden_edge_types", ())
    if not png:
        data[SEES].edge_index = _branch_visibility(data, visible)
        hidden = [SEES]
    return {"visible": None if args.no_visible else visible, "matrix": visible,
            "edge_types": options.get("edge_types"), "hidden_edge_types": hidden}


KIND = register_graph_kind(GraphKind(
    name="kbert",
    help="K-BERT sentence trees: tokens, ids, soft positions, segments, visibility",
    add_arguments=add_arguments,
    rows=kbert_rows,
    row_options=row_options,
    graph=kbert_graph,
    picture=picture,
    show_flags=frozenset({"kg", "matrix", "select", "pair_encoding"}),
))
