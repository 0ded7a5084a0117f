"""Optimiser and learning-rate schedule built from a recipe's ``optim`` section
(:class:`~graphmatch.tasks.recipes.sections.Optim`; a plain, checked mapping of it is read as one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import torch
from torch.optim.lr_scheduler import LambdaLR

from graphmatch.tasks.recipes.sections import Optim, typed


def param_groups(
    model: torch.nn.Module,
    encoder: Iterable[torch.nn.Parameter],
    optim: Optim | Mapping[str, Any],
    layers: Sequence[Sequence[torch.nn.Parameter]] = (),
) -> list[dict[str, Any]]:
    r"""Parameter groups: (encoder | rest) × (decayed | not decayed), the encoder split further by
    layer when ``optim.layer_decay`` is set.

    The encoder's parameters (``Task.encoder_parameters``) train at ``encoder_lr`` (``lr``
    when null), the rest at ``lr``. Weight decay applies to tensors with two or more dimensions
    (weight matrices, embeddings), never to biases or normalisation gains. Frozen parameters
    (``requires_grad=False``) are left out.

    With ``optim.layer_decay`` :math:`\gamma` and the encoder's ``layers`` (``Task.encoder_layers``:
    embeddings first, :math:`L` layers above), layer :math:`k` trains at

    .. math::
        \eta_k = \eta_{enc}\, \gamma^{L - k}

    (groups ``encoder.<k>`` / ``encoder.<k>_no_decay``); an encoder parameter in no layer
    trains at :math:`\eta_{enc}`, as the top layer.
    """
    optim = typed(Optim, optim)
    encoder_ids = {id(p) for p in encoder}
    lr = float(optim.lr)
    enc_lr = lr if optim.encoder_lr is None else float(optim.encoder_lr)
    decay = float(optim.weight_decay)
    layer_decay = optim.layer_decay
    depth = _layer_depths(encoder_ids, layer_decay, layers)
    top = len(layers) - 1
    groups: dict[tuple[bool, int, bool], list[torch.nn.Parameter]] = {}
    for p in model.parameters():
        if p.requires_grad:
            is_enc = id(p) in encoder_ids
            groups.setdefault((is_enc, depth.get(id(p), top) if depth else -1, p.dim() >= 2), []).append(p)
    if not groups:
        raise ValueError("the model has no trainable parameters")
    out = []
    for (is_enc, k, decayed), params in sorted(groups.items(), key=lambda kv: (not kv[0][0], kv[0][1], not kv[0][2])):
        scale = float(layer_decay) ** (top - k) if is_enc and depth else 1.0
        name = ("encoder" + (f".{k}" if depth else "")) if is_enc else "rest"
        out.append({"params": params, "lr": (enc_lr * scale) if is_enc else lr,
                    "weight_decay": decay if decayed else 0.0, "name": name + ("" if decayed else "_no_decay")})
    return out


def _layer_depths(
    encoder_ids: set[int], layer_decay: float | None, layers: Sequence[Sequence[torch.nn.Parameter]]
) -> dict[int, int]:
    """``id(parameter) → k`` for ``optim.layer_decay``; empty when it is off."""
    if layer_decay is None:
        return {}
    if not layers:
        raise ValueError("optim.layer_decay needs a task that lists its encoder's layers (Task.encoder_layers); "
                         "this task lists none: set optim.layer_decay=null")
    depth: dict[int, int] = {}
    for k, params in enumerate(layers):
        for p in params:
            if id(p) not in encoder_ids:
                raise ValueError("Task.encoder_layers lists a parameter that is not in Task.encoder_parameters")
            depth.setdefault(id(p), k)
    return depth


def build_optimizer(groups: list[dict[str, Any]], optim: Optim | Mapping[str, Any]) -> torch.optim.Optimizer:
    """The optimiser named by ``optim.optimizer`` over ``groups``.

    With ``optim.fused`` (the default), AdamW, Adam and SGD run torch's fused kernel, one pass over
    every tensor of a group; without it, torch's CPU default, a Python loop over the tensors. The
    update is the same up to rounding, so a run retrains to the last digit only with the setting it
    was made with. RMSprop and Adadelta have no fused kernel.
    """
    optim = typed(Optim, optim)
    name = optim.optimizer
    momentum = float(optim.momentum)
    fused = {"fused": True} if optim.fused else {}
    if name == "adamw":
        return torch.optim.AdamW(groups, **fused)
    if name == "adam":
        return torch.optim.Adam(groups, **fused)
    if name == "rmsprop":
        return torch.optim.RMSprop(groups, momentum=momentum)
    if name == "adadelta":
        return torch.optim.Adadelta(groups)
    if name == "sgd":
        return torch.optim.SGD(groups, momentum=momentum, **fused)
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


def build_scheduler(optimizer: torch.optim.Optimizer, total_steps: int, optim: Optim | Mapping[str, Any]) -> LambdaLR:
    """Warm-up over ``optim.warmup × total_steps`` steps, then linear decay (or constant)."""
    optim = typed(Optim, optim)
    warmup_steps = int(float(optim.warmup) * total_steps)
    schedule = optim.schedule
    return LambdaLR(optimizer, lambda step: lr_factor(step, total_steps, warmup_steps, schedule))
