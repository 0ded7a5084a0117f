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
vocabulary (an English checkpoint's, :func:`graphmatch.text.pretrained.tokenization_of`) builds
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

from graphmatch.tasks.graph_kinds import VOCAB_FILE, graph_kinds
from graphmatch.tasks.graph_kinds.kbert import SEES
from graphmatch.tasks.graph_kinds.kbert import kg_texts as _kg_texts  # noqa: F401  (its old name here)
from graphmatch.tasks.graph_kinds.let import LET_CLOSURES
from graphmatch.tasks.graph_kinds.relation import relation_graph
from graphmatch.tasks.keys import BUILTIN_TASKS

__all__ = ["GRAPHS", "KINDS", "LET_CLOSURES", "SEES", "VOCAB_FILE", "add_parser", "build_graph", "read_stdin_texts",
           "relation_graph", "run"]


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


def read_stdin_texts(args: argparse.Namespace) -> None:
    """``text == "-"``: the text (and ``text_b``) from stdin (see the module docstring)."""
    if args.text != "-":
        return
    from graphmatch.io.text_files import iter_lines

    lines = [line for line in iter_lines("-") if line.strip()]
    if graph_kinds()[args.kind].one_line_input and len(lines) == 1:  # e.g. a head<TAB>tail<TAB>… line
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
    reads = graph_kinds()[args.kind].show_flags
    if args.kg is not None and "kg" not in reads:
        raise ValueError("--kg applies to --kind kbert only")
    if args.max_length is not None and args.max_length < 1:
        raise ValueError(f"--max-length must be positive, got {args.max_length}")
    length = {"max_length": args.max_length} if args.max_length is not None else {}
    if getattr(args, "select", None) is not None and ("select" not in reads or not getattr(args, "pretrained", None)):
        raise ValueError("--select scores K-BERT's branches with an encoder: give --kind kbert and --pretrained "
                         "(e.g. e5-small)")
    return GRAPHS[args.kind](args, length)


#: each task of :data:`~graphmatch.tasks.keys.BUILTIN_TASKS` with a graph kind: its graph of ``args`` and the
#: picture options
GRAPHS: dict[str, Callable[[argparse.Namespace, dict[str, int]], tuple[Any, dict[str, Any]]]] = {
    name: kind.graph for name, kind in graph_kinds().items()
}
#: the families of the task registry that ``show`` draws
KINDS = tuple(name for name in BUILTIN_TASKS if name in GRAPHS)


def run(args: argparse.Namespace) -> int:
    from graphmatch.viz import HTML_SUFFIXES, PNG_SUFFIXES, draw_visibility, save_picture
    from graphmatch.viz.titles import input_title

    out = Path(args.output)
    if out.suffix.lower() not in PNG_SUFFIXES + HTML_SUFFIXES:
        raise ValueError(f"cannot tell the picture format of {args.output!r}: name it .png or .html")
    reads = graph_kinds()[args.kind].show_flags
    if args.tokenization is not None and "tokenization" not in reads:
        raise ValueError("--tokenization applies to --kind relation and let only")
    if args.matrix and "matrix" not in reads:
        raise ValueError("--matrix draws K-BERT's visible matrix: use it with --kind kbert")
    if args.matrix and Path(args.matrix).suffix.lower() not in PNG_SUFFIXES:
        raise ValueError(f"--matrix writes a PNG picture, got {args.matrix!r}")
    if args.pair_encoding == "separate" and ("pair_encoding" not in reads or args.text_b is None):
        raise ValueError("--pair-encoding separate reads a K-BERT pair apart: use it with --kind kbert and two texts")
    if args.data_dir is not None and not os.path.isdir(args.data_dir):
        raise FileNotFoundError(f"--data-dir {args.data_dir!r} is not a folder")
    read_stdin_texts(args)
    data, options = build_graph(args)
    title = args.title or input_title(args.text, args.text_b)
    is_png = out.suffix.lower() in PNG_SUFFIXES
    picture = graph_kinds()[args.kind].picture(data, options, args, is_png)
    if args.matrix:
        draw_visibility(data, picture["matrix"], args.matrix, title=f"visible matrix: {title}")
        print(f"visible matrix: {args.matrix}", file=sys.stderr)
    save_picture(
        data,
        out,
        title=title,
        visible=picture["visible"],
        edge_types=picture["edge_types"],
        hidden_edge_types=picture["hidden_edge_types"],
    )
    counts = ", ".join(f"{int(data[t].num_nodes)} {t}" for t in data.node_types)
    print(f"{args.kind} graph ({counts}): {out}", file=sys.stderr)
    return 0
