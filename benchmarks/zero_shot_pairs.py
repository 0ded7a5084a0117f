r"""A K-BERT pair bi-encoder before any training: its encoder's cosine, thresholded.

    python benchmarks/zero_shot_pairs.py RECIPE [RECIPE ...] [--set KEY=VALUE ...]

Each recipe must read pairs apart (``model.pair_encoding: separate``, e.g.
``kbert/lcqmc_e5_separate``). Its task and model are made as ``graphmatch train`` makes them,
pretrained weights loaded and no step taken: the pair's logit is
:math:`s\,(\cos(\mathbf{u}, \mathbf{v}) - t)` with :math:`t` fitted on the first 512 training pairs
(what training starts from). Reported per recipe, on the recipe's dev and test samples:

* accuracy at that :math:`t` (from training pairs);
* accuracy on test at the :math:`t` that classifies dev best (dev's own figure there is fitted on
  dev, so it is not a held-out figure, and is given only as such).

Nothing is random (no seed) and nothing is timed. Markdown on stdout; ``--json`` writes the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def zero_shot(recipe: str, sets: list[str]) -> dict[str, float]:
    """The figures of one recipe (see the module doc)."""
    from graphmatch.engine import resolve
    from graphmatch.nn.cosine_match import CosineMatchHead
    from graphmatch.tasks.kbert import KBertTask

    task = KBertTask(resolve(recipe, ["train.progress=false", *sets]))
    if task.model.pair_encoding != "separate":
        raise ValueError(f"{recipe}: model.pair_encoding must be separate (a bi-encoder) for a zero-shot cosine")
    model = task.build_model()
    task.init_weights(model)  # the pretrained weights, and t fitted on the first 512 training pairs
    t_train = model.match.threshold.item()
    splits = task.datasets()
    (dev_cos, dev_y), (test_cos, test_y) = (task.match_cosines(model, splits[s]) for s in ("dev", "test"))

    def accuracy(cos, y, t: float) -> float:
        return 100 * float(((cos >= t) == y).float().mean())

    on_dev = CosineMatchHead()
    dev_fit = 100 * on_dev.fit_threshold(dev_cos, dev_y)
    t_dev = on_dev.threshold.item()
    return {"t_train": t_train, "dev": accuracy(dev_cos, dev_y, t_train), "test": accuracy(test_cos, test_y, t_train),
            "t_dev": t_dev, "dev_fitted": dev_fit, "test_at_t_dev": accuracy(test_cos, test_y, t_dev),
            "dev_pairs": len(dev_y), "test_pairs": len(test_y)}


def report(figures: dict[str, dict[str, float]]) -> str:
    lines = ["| recipe | t (512 training pairs) | dev | test | t (dev) | test at t (dev) |",
             "|---|---|---|---|---|---|"]
    for name, f in figures.items():
        lines.append(f"| {name} | {f['t_train']:.4f} | {f['dev']:.2f} | **{f['test']:.2f}** | {f['t_dev']:.4f} "
                     f"| {f['test_at_t_dev']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("recipes", nargs="+", help="K-BERT pair recipes with model.pair_encoding: separate")
    p.add_argument("--set", nargs="+", default=[], metavar="KEY=VALUE", help="overrides for every recipe")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    figures = {}
    try:
        for recipe in args.recipes:
            figures[recipe] = zero_shot(recipe, args.set)
            print(f"{recipe}: done", file=sys.stderr, flush=True)
    except (ValueError, OSError) as err:
        print(f"zero_shot_pairs.py: error: {err}", file=sys.stderr)
        return 2
    print(report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
