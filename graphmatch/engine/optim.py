"""Optimiser and learning-rate schedule built from a recipe's ``optim`` section."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch.optim.lr_scheduler import LambdaLR


def param_groups(
    model: torch.nn.Module, encoder: Iterable[torch.nn.Parameter], optim: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Up to four parameter groups: (encoder | rest) × (decayed | not decayed).

    The encoder's parameters (``Task.encoder_parameters``) train at ``encoder_lr`` (``lr``
    when null), the rest at ``lr``. Weight decay applies to tensors with two or more dimensions
    (weight matrices, embeddings), never to biases or normalisation gains. Frozen parameters
    (``requires_grad=False``) are left out.
    """
    encoder_ids = {id(p) for p in encoder}
    lr = float(optim["lr"])
    enc_lr = lr if optim["encoder_lr"] is None else float(optim["encoder_lr"])
    decay = float(optim["weight_decay"])
    groups: dict[tuple[bool, bool], list[torch.nn.Parameter]] = {}
    for p in model.parameters():
        if p.requires_grad:
            groups.setdefault((id(p) in encoder_ids, p.dim() >= 2), []).append(p)
    if not groups:
        raise ValueError("the model has no trainable parameters")
    return [
        {
            "params": params,
            "lr": enc_lr if is_enc else lr,
            "weight_decay": decay if decayed else 0.0,
            "name": f"{'encoder' if is_enc else 'rest'}{'' if decayed else '_no_decay'}",
        }
        for (is_enc, decayed), params in sorted(groups.items(), key=lambda kv: (not kv[0][0], not kv[0][1]))
    ]


def build_optimizer(groups: list[dict[str, Any]], optim: Mapping[str, Any]) -> torch.optim.Optimizer:
    """The optimiser named by ``optim.optimizer`` over ``groups``."""
    name = optim["optimizer"]
    momentum = float(optim["momentum"])
    if name == "adamw":
        return torch.optim.AdamW(groups)
    if name == "adam":
        return torch.optim.Adam(groups)
    if name == "rmsprop":
        return torch.optim.RMSprop(groups, momentum=momentum)
    if name == "adadelta":
        return torch.optim.Adadelta(groups)
    if name == "sgd":
        return torch.optim.SGD(groups, momentum=momentum)
    raise ValueError(f"unknown optimizer {name!r}")


def lr_factor(step: int, total: int, warmup_steps: int, schedule: str) -> float:
    """Multiplier of the base learning rate after ``step`` optimiser steps.

    .. math::
        f(s) = \\begin{cases} s / W & s < W \\\\
        \\max\\left(0, \\frac{T - s}{T - W}\\right) & s \\ge W \\text{ (linear)} \\\\
        1 & s \\ge W \\text{ (constant)} \\end{cases}

    with :math:`W` warm-up steps out of :math:`T`.
    """
    if step < warmup_steps:
        return step / warmup_steps
    if schedule == "constant" or total <= warmup_steps:
        return 1.0
    return max(0.0, (total - step) / (total - warmup_steps))


def build_scheduler(optimizer: torch.optim.Optimizer, total_steps: int, optim: Mapping[str, Any]) -> LambdaLR:
    """Warm-up over ``optim.warmup × total_steps`` steps, then linear decay (or constant)."""
    warmup_steps = int(float(optim["warmup"]) * total_steps)
    schedule = optim["schedule"]
    return LambdaLR(optimizer, lambda step: lr_factor(step, total_steps, warmup_steps, schedule))
