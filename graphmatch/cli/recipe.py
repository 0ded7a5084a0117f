"""``graphmatch recipe --keys [TASK ...]``, ``graphmatch recipe --list`` and ``graphmatch recipe RECIPE [--set ...]``.

``--keys`` prints the reference of every recipe key (the engine's ``optim`` and ``train`` and
each task's ``data`` and ``model``), generated from the declarations; ``docs/recipes.md`` is its
output. ``--list`` prints one line per recipe (name and description). Given a recipe, it prints
the complete, checked configuration as YAML.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from graphmatch.cli.train import add_set_argument

    p = subparsers.add_parser(
        "recipe",
        help="list the recipes (--list) or every recipe key (--keys), or print a recipe's complete configuration",
        description="With --keys: the reference of every recipe key (type, default, allowed values, meaning) as "
        "Markdown, for the given tasks or all. With a recipe: its complete, checked configuration as YAML.",
    )
    p.add_argument("recipe", nargs="?", help="recipe file or name (e.g. kbert/chnsenticorp_hownet_quick)")
    add_set_argument(p, "override recipe keys, e.g. --set train.epochs=1")
    p.add_argument("--keys", nargs="*", metavar="TASK", default=None,
                   help="print the key reference of these tasks (default: all) instead")
    p.add_argument("--list", action="store_true", help="list the recipes, one line each: name and description")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import yaml

    from graphmatch.tasks.recipes.resolve import key_reference, resolve, shipped_recipes

    if args.list:
        if args.recipe is not None or args.keys is not None:
            raise ValueError("--list lists every recipe: give no recipe or --keys with it")
        rows = shipped_recipes()
        width = max((len(name) for name, _ in rows), default=0)
        print("".join(f"{name:<{width}}  {description}\n" for name, description in rows), end="")
        return 0
    if args.keys is not None:
        if args.recipe is not None:
            raise ValueError("give either a recipe or --keys, not both")
        print(key_reference(args.keys), end="")
        return 0
    if args.recipe is None:
        raise ValueError("give a recipe, --list for the recipes, or --keys [TASK ...] for the key reference")
    print(yaml.safe_dump(resolve(args.recipe, args.overrides), sort_keys=False, allow_unicode=True), end="")
    return 0
