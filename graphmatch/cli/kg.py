"""``graphmatch kg wordnet -o wordnet.spo --relations type,hypernym``: an English knowledge graph
from WordNet 3.0's database files (see :mod:`graphmatch.knowledge.wordnet`); ``graphmatch kg cache
big.spo``: a ``.spo`` file read into the KG cache (see :mod:`graphmatch.knowledge.kg_store`)."""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from graphmatch.knowledge.wordnet import DEFAULT_RELATIONS, ENV_VAR, RELATIONS

    p = subparsers.add_parser(
        "kg",
        help="build a knowledge graph (.spo) from a lexical database (wordnet), or read one into the cache",
        description="wordnet: subject<TAB>predicate<TAB>object triples for every WordNet 3.0 noun lemma, read "
        f"from ${ENV_VAR}, <data root>/wordnet or /usr/share/wordnet (Debian's wordnet-base). The default "
        "relations give the graph packaged as kg: wordnet, byte for byte. cache FILE.spo: parse a KG (and its "
        "K-Query trie) once into $GRAPHMATCH_CACHE/kgs, keyed by the file's sha256, so that every later run "
        "loads it memory-mapped in a moment (a progress bar on a terminal).",
    )
    p.add_argument("source", choices=("wordnet", "cache"))
    p.add_argument("files", nargs="*", metavar="FILE", help="cache: the .spo file(s) of one knowledge graph")
    p.add_argument("-o", "--output", help="wordnet: the .spo file to write (gzip-compressed if it ends in .gz)")
    p.add_argument("--relations", default=",".join(DEFAULT_RELATIONS),
                   help=f"comma-separated, in the order each subject lists them: {', '.join(RELATIONS)} "
                   "(default: %(default)s)")
    p.add_argument("--wordnet-dir", help=f"the folder of index.noun, data.noun and noun.exc (default: ${ENV_VAR}, ...)")
    p.add_argument("--data-dir", help="a data root whose wordnet/ folder holds WordNet's files")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.source == "cache":
        return cache(args.files)
    if args.files or not args.output:
        raise ValueError("kg wordnet takes no FILE and needs -o/--output (the .spo file to write)")
    from graphmatch.knowledge.wordnet import WordNet, wordnet_triples, write_spo

    relations = [r.strip() for r in args.relations.split(",") if r.strip()]
    wn = WordNet(args.wordnet_dir, root=args.data_dir)
    triples, subjects = write_spo(wordnet_triples(wn, relations), args.output)
    print(f"wrote {triples:,} triples about {subjects:,} subjects to {args.output} (WordNet in {wn.folder})",
          file=sys.stderr)
    return 0


def cache(files: list[str]) -> int:
    """Parse ``files`` into the KG cache with a progress bar on a terminal, then one line of summary."""
    import os
    import time

    from tqdm import tqdm

    from graphmatch.knowledge import KnowledgeGraph
    from graphmatch.knowledge.trie import CACHE_MIN_WORDS

    if not files:
        raise ValueError("kg cache needs the .spo file(s) of a knowledge graph")
    for name in files:
        if not os.path.isfile(name):
            raise FileNotFoundError(f"knowledge graph file not found: {name}")
    total = sum(os.path.getsize(name) for name in files)
    start = time.perf_counter()
    with tqdm(total=total, desc="reading the KG", unit="B", unit_scale=True, file=sys.stderr, disable=None,
              mininterval=0.5) as bar:
        kg = KnowledgeGraph.from_spo(files, progress=bar.update)
    took, folder = time.perf_counter() - start, kg.cache_folder
    if kg.from_cache:
        how = f"read from the cache {folder} in {took:.1f} s"
    elif folder is not None:
        how = f"parsed in {took:.1f} s and cached in {folder}"
    else:
        how = f"parsed in {took:.1f} s (fewer than {CACHE_MIN_WORDS:,} subjects: not cached)"
    print(f"{', '.join(files)}: {len(kg):,} subjects; {how}", file=sys.stderr)
    return 0
