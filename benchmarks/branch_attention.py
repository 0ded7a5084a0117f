"""What a trained K-BERT classifier does with its branches: attention and a branch ablation.

    python benchmarks/branch_attention.py RUN [RUN ...] --input TEST_FILE [--limit N]

For each run (a trained K-BERT sentence or pair classifier with a KG) over the inputs of a file
with gold labels (the dataset's own ``test.tsv``), built as the run builds them:

* **coverage**: the share of inputs with a branch, branch tokens per input, and the share of the
  pooled tokens that are branch tokens (mean pooling averages their states in directly);
* **attention**: in every layer, the attention mass that a trunk token which sees a branch puts on
  branch tokens, :math:`m = \\sum_{k \\in B} \\alpha_{qk}` averaged over heads and such queries,
  beside the mass a uniform attention over the same visible keys would give,
  :math:`u = |\\mathcal{V}(q) \\cap B| / |\\mathcal{V}(q)|` (``m / u`` below 1: the branches get
  less than their share);
* **ablation**: the same model, the same trees, with every branch token cut out of the visibility
  and the pooling (no token sees one and none is pooled). With soft positions this is exactly the
  model's computation on the trunk alone. Accuracy with and without, and the labels that change.

Several runs (seeds) are summarised as mean ± std. Markdown on stdout; ``--json`` writes the
figures per run. No training and nothing timed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from graphmatch.engine.input_files import read_input_file  # noqa: E402
from graphmatch.engine.predictor import Predictor  # noqa: E402
from graphmatch.graphs.kbert import dense_inputs  # noqa: E402


def without_branches(inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(token_mask, visible)`` with every branch token cut out: it sees nothing, nobody sees it,
    and it is not pooled."""
    branch = inputs["branch"]
    visible = inputs["visible"] & ~branch.unsqueeze(1) & ~branch.unsqueeze(2)
    return inputs["token_mask"] & ~branch, visible


def forward_both(model: torch.nn.Module, batch) -> tuple[dict, torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """A K-BERT batch's dense inputs, the model's logits with its branches and with them cut out
    (:func:`without_branches`), and the per-layer attention weights ``[B, H, L, L]`` with them."""
    d = dense_inputs(batch)
    args = (d["input_ids"], d["pos"], d["seg"])
    logits, weights = model.forward_dense(*args, d["token_mask"], d["visible"], return_attention_weights=True)
    if not all(isinstance(w, torch.Tensor) for w in weights):
        raise ValueError("the model took its sparse attention path; branch_attention.py reads dense weights")
    return d, logits, model.forward_dense(*args, *without_branches(d)), weights


def branch_effect(predictor: Predictor, inputs: Sequence[tuple], golds: Sequence[str]) -> dict:
    """The module docstring's figures for one trained model over ``inputs`` (each a tuple of the
    task's fields) with their gold labels."""
    model, labels = predictor.model, predictor.task.label_names()
    if getattr(model, "tagging", True):
        raise ValueError("branch_attention.py reads K-BERT sentence or pair classifiers (not taggers)")
    graphs, _ = predictor.encode(inputs)
    pred_with: list[int | None] = [None] * len(golds)
    pred_without: list[int | None] = [None] * len(golds)
    mass: list[torch.Tensor] = []  # per layer: summed over the queries that see a branch
    uniform = torch.zeros(())
    queries = 0
    sentences_with = branch_tokens = real_tokens = 0
    with torch.inference_mode():
        for positions, batch in predictor.batches(graphs):
            d, logits, bare, weights = forward_both(model, batch)
            branch, real = d["branch"], d["token_mask"]
            # trunk queries that see at least one branch key (the trunk tokens of a matched word)
            sees = (d["visible"] & branch.unsqueeze(1)).any(-1) & real & ~branch  # [B, L]
            shares = torch.stack([(w * branch[:, None, None, :]).sum(-1).mean(1) for w in weights])  # [layers, B, L]
            if not mass:
                mass = [torch.zeros(()) for _ in weights]
            for i, layer in enumerate(shares):
                mass[i] = mass[i] + layer[sees].sum()
            vis = d["visible"].float()
            uniform = uniform + ((vis * branch.unsqueeze(1)).sum(-1) / vis.sum(-1).clamp(min=1))[sees].sum()
            queries += int(sees.sum())
            sentences_with += int(branch.any(-1).sum())
            branch_tokens += int(branch.sum())
            real_tokens += int(real.sum())
            for j, i in enumerate(positions):
                pred_with[i] = int(logits[j].argmax())
                pred_without[i] = int(bare[j].argmax())
    n = len(golds)
    gold_ids = [labels.index(g) for g in golds]
    return {
        "inputs": n,
        "with_branch": 100 * sentences_with / n,
        "branch_tokens": branch_tokens / n,
        "pooled_branch_share": 100 * branch_tokens / max(real_tokens, 1),
        "queries": queries,
        "attention": [100 * float(m) / max(queries, 1) for m in mass],
        "uniform": 100 * float(uniform) / max(queries, 1),
        "accuracy": 100 * sum(p == g for p, g in zip(pred_with, gold_ids, strict=True)) / n,
        "accuracy_without": 100 * sum(p == g for p, g in zip(pred_without, gold_ids, strict=True)) / n,
        "changed": 100 * sum(a != b for a, b in zip(pred_with, pred_without, strict=True)) / n,
    }


COLUMNS = ("with_branch", "branch_tokens", "pooled_branch_share", "accuracy", "accuracy_without", "delta", "changed")


def _ms(values: Sequence[float]) -> str:
    return f"{statistics.mean(values):.2f}" + (f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else "")


def report(figures: dict[str, dict]) -> str:
    """Markdown: one row per run and the mean ± std, then the attention per layer."""
    rows = [{**f, "delta": f["accuracy"] - f["accuracy_without"]} for f in figures.values()]
    out = ["| run | inputs with a branch (%) | branch tokens / input | pooled tokens that are branches (%) | "
           "accuracy | accuracy, branches cut | Δ | labels changed (%) |", "|---|" + "---:|" * len(COLUMNS)]
    named = list(zip(figures, ([f] for f in rows), strict=True))
    for name, group in named + ([("mean ± std", rows)] if len(rows) > 1 else []):
        out.append(f"| {name} | " + " | ".join(_ms([f[c] for f in group]) for c in COLUMNS) + " |")
    layers = len(rows[0]["attention"])
    out += ["", "Attention mass on branch tokens, trunk queries that see a branch (% of the query's attention; "
            "uniform over the visible keys in the last column):", "",
            "| run | " + " | ".join(f"layer {i + 1}" for i in range(layers)) + " | uniform |",
            "|---|" + "---:|" * (layers + 1)]
    for name, group in named + ([("mean", rows)] if len(rows) > 1 else []):
        cells = [statistics.mean(f["attention"][i] for f in group) for i in range(layers)]
        out.append(f"| {name} | " + " | ".join(f"{a:.1f}" for a in cells)
                   + f" | {statistics.mean(f['uniform'] for f in group):.1f} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="trained K-BERT classifier run folders (or best.ckpt files)")
    p.add_argument("--input", required=True, help="a file with gold labels (the dataset's own test.tsv)")
    p.add_argument("--limit", type=int, help="only the first N inputs")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--json", help="also write the figures per run here")
    args = p.parse_args(argv)
    figures = {}
    try:
        for run in args.runs:
            predictor = Predictor.from_run(run, batch_size=args.batch_size)
            task = predictor.task
            lines = read_input_file(args.input, task.input_columns(), task.input_fields, task.dataset_fields)
            lines = lines[:args.limit] if args.limit else lines
            if any(item.gold is None for item in lines):
                raise ValueError(f"{args.input}: every input needs its gold label")
            figures[run] = branch_effect(predictor, [item.fields for item in lines], [item.gold for item in lines])
            print(f"{run}: done", file=sys.stderr, flush=True)
    except (ValueError, OSError) as err:
        print(f"branch_attention.py: error: {err}", file=sys.stderr)
        return 2
    print(report(figures))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
