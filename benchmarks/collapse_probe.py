"""What a relation run does while it trains, to see why a model collapses to the negative label:
per epoch, the share of dev sentences predicted as each of the most frequent labels, the entropy
of the latent-type attention (entity-aware models; :math:`\\ln K` = uniform, 0 = saturated), the
global gradient norm and the optimiser's relative step :math:`\\lVert\\Delta\\theta\\rVert /
\\lVert\\theta\\rVert` (mean over the epoch's steps), as JSON lines on stdout.

    PYTHONPATH=. python benchmarks/imbalanced_relation.py --data-dir $GRAPHMATCH_DATA --out runs/imbalanced
    PYTHONPATH=. python benchmarks/collapse_probe.py relation/semeval_entity_attention --out runs/probe-ea \\
        --set data.train_file=runs/imbalanced/train.tsv data.test_file=runs/imbalanced/test.tsv \\
        data.dev_size=400 train.epochs=4 train.patience=null train.threads=1
"""

from __future__ import annotations

import argparse
import json
import math
from collections import Counter
from typing import Any

import lightning.pytorch as pl
import torch
from torch_geometric.data import Batch

from graphmatch.engine import train


class Probe(pl.Callback):
    """Records the figures of the module docstring, printing one JSON line per dev evaluation."""

    def __init__(self) -> None:
        self.grad: list[float] = []
        self.step: list[float] = []
        self.before: list[torch.Tensor] | None = None

    def on_train_batch_start(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        self.before = [p.detach().clone() for p in module.parameters() if p.requires_grad]

    def on_after_backward(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        grads = [p.grad.norm() ** 2 for p in module.parameters() if p.grad is not None]
        self.grad.append(float(sum(grads)) ** 0.5)

    def on_train_batch_end(self, trainer: pl.Trainer, module: pl.LightningModule, *args: Any) -> None:
        params = [p.detach() for p in module.parameters() if p.requires_grad]
        delta = sum(float((p - b).norm() ** 2) for p, b in zip(params, self.before, strict=True)) ** 0.5
        self.step.append(delta / sum(float(p.norm() ** 2) for p in params) ** 0.5)

    def on_validation_end(self, trainer: pl.Trainer, module: pl.LightningModule) -> None:
        if trainer.state.fn != "fit":
            return
        rows = module.rows.get("dev") or []
        preds = Counter(r["pred"] for r in rows)
        entropy = None
        dev = trainer.datamodule.val_dataset
        batch = Batch.from_data_list([dev[i] for i in range(min(200, len(dev)))]).to(module.device)
        was_training = module.training
        module.eval()
        with torch.no_grad():
            out = module.model(batch, return_attention=True)
        module.train(was_training)
        types = out[1].get("types") if isinstance(out, tuple) else None
        if types is not None:
            entropy = float(-(types * types.clamp_min(1e-12).log()).sum(-1).mean())
        print(json.dumps({
            "epoch": trainer.current_epoch + 1, "step": trainer.global_step,
            "dev": {k: round(v, 2) for k, v in module.metrics.get("dev", {}).items()},
            "pred_share": {k: round(100 * n / len(rows), 1) for k, n in preds.most_common(4)},
            "type_entropy": None if entropy is None else round(entropy, 3),
            "max_type_entropy": None if types is None else round(math.log(types.size(-1)), 3),
            "grad_norm": round(sum(self.grad) / max(len(self.grad), 1), 4),
            "rel_step": float(f"{sum(self.step) / max(len(self.step), 1):.3g}"),
        }, ensure_ascii=False), flush=True)
        self.grad, self.step = [], []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("recipe")
    parser.add_argument("--out", required=True)
    parser.add_argument("--set", nargs="*", default=[], dest="sets")
    args = parser.parse_args()
    train(args.recipe, args.sets, args.out, callbacks=[Probe()])


if __name__ == "__main__":
    main()
