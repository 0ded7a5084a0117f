"""``graphmatch kg wordnet -o wordnet.spo --relations type,hypernym``: an English knowledge graph
from WordNet 3.0's database files (see :mod:`graphmatch.knowledge.wordnet`)."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from graphmatch.knowledge.wordnet import DEFAULT_RELATIONS, ENV_VAR, RELATIONS

    p = subparsers.add_parser(
        "kg",
        help="build a knowledge graph (.spo) from a lexical database (wordnet)",
        description="wordnet: subject<TAB>predicate<TAB>object triples for every WordNet 3.0 noun lemma, read "
        f"from ${ENV_VAR}, <data root>/wordnet or /usr/share/wordnet (Debian's wordnet-base). The default "
        "relations give the graph packaged as kg: wordnet, byte for byte.",
    )
    p.add_argument("source", choices=("wordnet",))
    p.add_argument("-o", "--output", required=True, help="the .spo file to write (gzip-compressed if it ends in .gz)")
    p.add_argument("--relations", default=",".join(DEFAULT_RELATIONS),
                   help=f"comma-separated, in the order each subject lists them: {', '.join(RELATIONS)} "
                   "(default: %(default)s)")
    p.add_argument("--wordnet-dir", help=f"the folder of index.noun, data.noun and noun.exc (default: ${ENV_VAR}, ...)")
    p.add_argument("--data-dir", help="a data root whose wordnet/ folder holds WordNet's files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from graphmatch.knowledge.wordnet import WordNet, wordnet_triples, write_spo

    relations = [r.strip() for r in args.relations.split(",") if r.strip()]
    wn = WordNet(args.wordnet_dir, root=args.data_dir)
    triples, subjects = write_spo(wordnet_triples(wn, relations), args.output)
    print(f"wrote {triples:,} triples about {subjects:,} subjects to {args.output} (WordNet in {wn.folder})",
          file=sys.stderr)
    return 0
