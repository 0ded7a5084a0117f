"""``graphmatch show "text" ["text_b"] --kind kbert|let|relation -o OUT.png|OUT.html``: draw the
input graph of one text (or text pair) as a PNG picture or a standalone interactive HTML page.

- ``kbert``: K-BERT's sentence tree (knowledge from ``--kg``); the PNG shows the visible matrix
  beside the tree, ``--matrix OUT.png`` draws it on its own; the HTML page has the visibility
  pairs of the branch tokens as a hidden ``token -sees-> token`` edge type.
- ``let``: LET's lattice pair graph of two texts with HowNet senses and sememes; the dense
  reachability closures are left out of the PNG (``--closures`` draws them) and hidden in the
  HTML page; ``--pretrained CKPT --tokenization pieces`` adds the checkpoint's own pieces, which
  its encoder reads (``data.encoder_tokens: pieces``).
- ``relation``: the relation graph of a sentence marked ``… <e1>x</e1> … <e2>y</e2> …``, or of
  a ``head<TAB>tail[<TAB>relation]<TAB>sentence`` line, over the tokens the model sees
  (``--tokenization``; default characters for Chinese text, else words).

Titles show the fields of a pair or a tab-separated line with visible separators
(:func:`graphmatch.viz.titles.input_title`).

``-`` as the text reads it from stdin: one line ``text`` or ``text_a<TAB>text_b``, or two lines
``text_a`` and ``text_b`` (UTF-8; a byte-order mark is ignored). ``--kg none`` draws a K-BERT
input without knowledge.

The vocabulary is ``--pretrained``'s (a checkpoint folder, or ``minilm``), else ``--vocab`` (characters), else
Google's Chinese BERT vocabulary under the data root when it is there, else one made from the
input's own characters (ids then differ from a real model's; the picture does not). A word-piece
vocabulary (an English checkpoint's, :func:`graphmatch.text.checkpoint.tokenization_of`) builds
the tree over word pieces: ``show "The companies sold ice creams." --kind kbert --kg wordnet
--pretrained minilm``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphmatch.tasks.keys import BUILTIN_TASKS

VOCAB_FILE = "kbert/vocab/google_vocab.txt"
LET_CLOSURES = (("word", "reach_fwd", "word"),)
SEES = ("token", "sees", "token")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "show",
        help="draw the input graph of one text (or pair) to a PNG or an interactive HTML file",
        description=(
            "Draw the input graph of one text (or text pair) as a PNG picture or a standalone\n"
            "interactive HTML page (hover for attributes, click for neighbours; works offline)."
        ),
        epilog=(
            'examples:  graphmatch show "洗手间很干净，离火车站很近" --kind kbert --kg hownet -o tree.png\n'
            '           graphmatch show "The companies sold ice creams." --kind kbert --kg wordnet --pretrained minilm '
            '-o tree.png\n'
            '           graphmatch show "南京市长江大桥" "长江大桥在南京" --kind let -o lattice.html\n'
            '           graphmatch show "The <e1>storm</e1> caused <e2>floods</e2>." --kind relation -o rel.png'
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("text", help="the input (- reads it from stdin); for --kind relation marked with <e1>…</e1> "
                   "and <e2>…</e2>, or head<TAB>tail[<TAB>relation]<TAB>sentence")
    p.add_argument("text_b", nargs="?", help="second text of a pair (needed by --kind let)")
    p.add_argument("--kind", required=True, choices=KINDS, help="which paper's graph to build")
    p.add_argument("-o", "--output", required=True, metavar="OUT.png|OUT.html", help="picture to write")
    p.add_argument("--kg", help="K-BERT knowledge graph: hownet, medical, wordnet, a .spo file or none "
                   "(default: hownet)")
    p.add_argument("--max-length", type=int, help="most tokens in the graph (default: the builder's)")
    p.add_argument(
        "--segmenters", default="lattice", help="LET: lattice (all three), or a comma list of jieba,thulac,pkuseg"
    )
    p.add_argument("--no-senses", action="store_true", help="LET: leave out HowNet senses and sememes")
    p.add_argument("--closures", action="store_true", help="LET: also draw the reachability closures in a PNG")
    p.add_argument("--no-visible", action="store_true", help="K-BERT: no visible matrix (beside PNG, under HTML)")
    p.add_argument("--matrix", metavar="OUT.png", help="K-BERT: also draw the visible matrix on its own")
    p.add_argument("--pair-encoding", choices=("joint", "separate"), default="joint",
                   help="K-BERT pairs: separate draws the visibility a bi-encoder reads (model.pair_encoding: "
                   "no token sees the other text's)")
    p.add_argument("--vocab", metavar="VOCAB.txt", help="character vocabulary (a BERT vocab.txt)")
    p.add_argument("--pretrained", metavar="DIR", help="K-BERT: a checkpoint folder (or minilm) whose vocab.txt "
                   "gives the tokens; an English one's word pieces. LET: the checkpoint (e.g. e5-small) whose "
                   "characters, or with --tokenization pieces whose own pieces, the encoder reads")
    p.add_argument("--select", type=float, metavar="COSINE", help="K-BERT: knowledge that fits the sentence: "
                   "every value of a matched word scored by its cosine with the sentence in --pretrained's "
                   "embeddings, a word keeping its 2 best at or above COSINE (docs/knowledge_selection.md)")
    p.add_argument("--data-dir", help="data root (default: $GRAPHMATCH_DATA, else downloads where allowed)")
    p.add_argument("--title", help="title of the picture (default: the input text)")
    p.add_argument("--tokenization", help="relation: the tokens the model sees, words, chars, jieba, thulac or "
                   "pkuseg (default: chars for Chinese text, else words). LET: chars (default) or pieces, "
                   "--pretrained's own (data.encoder_tokens)")
    p.set_defaults(func=run)


def _tokenizer(vocab: str | None, data_dir: str | None, texts: list[str], pretrained: str | None = None) -> Any:
    from graphmatch.io.datafiles import DataFileMissing, locate
    from graphmatch.text import CharTokenizer
    from graphmatch.text.checkpoint import checkpoint_tokenizer

    if pretrained:
        return checkpoint_tokenizer(pretrained)
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
        return CharTokenizer.from_texts(texts)


def _selection(threshold: float | None, checkpoint: str | None) -> Any:
    """``--select``'s branch selection over ``--pretrained``'s embeddings, or None."""
    if threshold is None:
        return None
    from graphmatch.checkpoints import resolve_checkpoint
    from graphmatch.graphs.branch_selection import BranchSelection
    from graphmatch.tasks.sentence_embedder import SentenceEmbedder

    return BranchSelection(SentenceEmbedder(resolve_checkpoint(checkpoint), progress=False), threshold=threshold)


def _kg_texts(kg: Any) -> list[str]:
    """Every predicate and object of ``kg``, so that a vocabulary made from texts covers branches."""
    return [] if kg is None else [p + o for values in kg.subjects.values() for p, o in values]


def read_stdin_texts(args: argparse.Namespace) -> None:
    """``text == "-"``: the text (and ``text_b``) from stdin (see the module docstring)."""
    if args.text != "-":
        return
    from graphmatch.io.text_files import iter_lines

    lines = [line for line in iter_lines("-") if line.strip()]
    if args.kind == "relation" and len(lines) == 1:  # a head<TAB>tail<TAB>… line is one input
        args.text = lines[0]
        return
    fields = lines[0].split("\t") if len(lines) == 1 else lines
    if not fields:
        raise ValueError("no input: stdin holds no text")
    if len(fields) > 2:
        raise ValueError(f"stdin: expected text, text_a<TAB>text_b or two lines, got {len(fields)} texts")
    if len(fields) == 2 and args.text_b is not None:
        raise ValueError("stdin holds a pair and text_b is given too: give text_b in one place")
    args.text, args.text_b = fields[0], fields[1] if len(fields) == 2 else args.text_b


def build_graph(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The graph ``args`` ask for (built with ``keep_text=True``) and the picture options for it."""
    kind = args.kind
    if args.kg is not None and kind != "kbert":
        raise ValueError("--kg applies to --kind kbert only")
    if args.max_length is not None and args.max_length < 1:
        raise ValueError(f"--max-length must be positive, got {args.max_length}")
    length = {"max_length": args.max_length} if args.max_length is not None else {}
    if getattr(args, "select", None) is not None and (kind != "kbert" or not getattr(args, "pretrained", None)):
        raise ValueError("--select scores K-BERT's branches with an encoder: give --kind kbert and --pretrained "
                         "(e.g. e5-small)")
    return GRAPHS[kind](args, length)


def _kbert_graph(args: argparse.Namespace, length: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    from graphmatch.graphs.kbert import SentenceTreeBuilder
    from graphmatch.graphs.kbert.options import TreeOptions
    from graphmatch.knowledge import KnowledgeGraph

    text, text_b = args.text, args.text_b
    texts = [t for t in (text, text_b) if t is not None]
    no_kg = (args.kg or "").lower() in ("none", "null")
    kg = None if no_kg else KnowledgeGraph.load(args.kg or "hownet", args.data_dir)
    tokenizer = _tokenizer(args.vocab, args.data_dir, texts + _kg_texts(kg), args.pretrained)
    selection = _selection(getattr(args, "select", None), args.pretrained)
    options = TreeOptions.for_tokenizer(tokenizer, **length)
    data = SentenceTreeBuilder(kg, tokenizer, keep_text=True, selection=selection,
                               **options.core_arguments())(text, text_b)
    if selection is not None:
        for d in selection.dropped:
            print(f"graphmatch show: dropped {d.word} → {d.value} (cosine {d.score:.3f})", file=sys.stderr)
    return data, {"sep_id": tokenizer.sep_id}


def _let_graph(args: argparse.Namespace, length: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    from graphmatch.graphs.let import LatticePairBuilder
    from graphmatch.graphs.let_options import LatticeOptions
    from graphmatch.knowledge import load_lexicon
    from graphmatch.text.checkpoint import char_tokenizer_of, checkpoint_folder, piece_tokenizer_of

    text, text_b = args.text, args.text_b
    if text_b is None:
        raise ValueError("--kind let matches two texts: give text and text_b")
    tokenization = getattr(args, "tokenization", None)
    if tokenization not in (None, "chars", "pieces"):
        raise ValueError(f"--tokenization {tokenization}: LET's encoder reads chars or (with --pretrained) pieces")
    if tokenization == "pieces" and not args.pretrained:
        raise ValueError("--tokenization pieces: the pieces are a pretrained encoder's own; give --pretrained")
    lexicon = None if args.no_senses else load_lexicon(args.data_dir)
    pretrained = checkpoint_folder(args.pretrained) if args.pretrained else None
    tokenizer = char_tokenizer_of(pretrained) if pretrained else _tokenizer(args.vocab, args.data_dir, [text, text_b])
    options = LatticeOptions(segmenters=args.segmenters, senses=not args.no_senses,
                             encoder_tokens=tokenization or "chars", **length)
    pieces = piece_tokenizer_of(pretrained, "--tokenization") if options.encoder_tokens == "pieces" else None
    builder = LatticePairBuilder(tokenizer, lexicon, keep_text=True, pieces=pieces, **options.builder_arguments())
    data = builder(text, text_b)
    closures = [et for et in LET_CLOSURES if et in data.edge_types]
    drawn = None if args.closures else [et for et in data.edge_types if et not in closures]
    return data, {"edge_types": drawn, "hidden_edge_types": closures}


def _relation_graph(args: argparse.Namespace, length: dict[str, int]) -> tuple[Any, dict[str, Any]]:
    return relation_graph(args.text, args.text_b, args.tokenization, length), {}


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
    builder = RelationGraphBuilder(Vocab.build([sentence.tokens]), split=split, **options.geometry(keep_text=True))
    return builder(sentence)


#: each task of :data:`~graphmatch.tasks.keys.BUILTIN_TASKS`: its graph of ``args`` and the picture options
GRAPHS: dict[str, Callable[[argparse.Namespace, dict[str, int]], tuple[Any, dict[str, Any]]]] = {
    "kbert": _kbert_graph, "let": _let_graph, "relation": _relation_graph,
}
#: the families of the task registry that ``show`` draws
KINDS = tuple(name for name in BUILTIN_TASKS if name in GRAPHS)

def _branch_visibility(data: Any, visible: Any) -> Any:
    """The ``(token, sees, token)`` pairs that involve a branch token (trunk pairs are all visible)."""
    branch = data["token"].branch
    keep = branch[visible[0]] | branch[visible[1]]
    return visible[:, keep]


def run(args: argparse.Namespace) -> int:
    from graphmatch.viz import HTML_SUFFIXES, PNG_SUFFIXES, draw_visibility, save_picture
    from graphmatch.viz.titles import input_title

    out = Path(args.output)
    if out.suffix.lower() not in PNG_SUFFIXES + HTML_SUFFIXES:
        raise ValueError(f"cannot tell the picture format of {args.output!r}: name it .png or .html")
    if args.tokenization is not None and args.kind == "kbert":
        raise ValueError("--tokenization applies to --kind relation and let only")
    if args.matrix and args.kind != "kbert":
        raise ValueError("--matrix draws K-BERT's visible matrix: use it with --kind kbert")
    if args.matrix and Path(args.matrix).suffix.lower() not in PNG_SUFFIXES:
        raise ValueError(f"--matrix writes a PNG picture, got {args.matrix!r}")
    if args.pair_encoding == "separate" and (args.kind != "kbert" or args.text_b is None):
        raise ValueError("--pair-encoding separate reads a K-BERT pair apart: use it with --kind kbert and two texts")
    if args.data_dir is not None and not os.path.isdir(args.data_dir):
        raise FileNotFoundError(f"--data-dir {args.data_dir!r} is not a folder")
    read_stdin_texts(args)
    data, options = build_graph(args)
    title = args.title or input_title(args.text, args.text_b)
    is_png = out.suffix.lower() in PNG_SUFFIXES
    visible = None
    if args.kind == "kbert":
        from graphmatch.graphs.kbert import visible_edge_index

        visible = visible_edge_index(data, options.pop("sep_id") if args.pair_encoding == "separate" else None)
        if args.matrix:
            draw_visibility(data, visible, args.matrix, title=f"visible matrix: {title}")
            print(f"visible matrix: {args.matrix}", file=sys.stderr)
        if not is_png:
            data[SEES].edge_index = _branch_visibility(data, visible)
            options["hidden_edge_types"] = [SEES]
        if args.no_visible:
            visible = None
    save_picture(
        data,
        out,
        title=title,
        visible=visible,
        edge_types=options.get("edge_types"),
        hidden_edge_types=options.get("hidden_edge_types", ()),
    )
    counts = ", ".join(f"{int(data[t].num_nodes)} {t}" for t in data.node_types)
    print(f"{args.kind} graph ({counts}): {out}", file=sys.stderr)
    return 0
