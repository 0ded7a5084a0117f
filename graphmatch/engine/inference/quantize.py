r"""Dynamic int8 quantization of a trained model's linear layers, for prediction on a CPU.

:func:`quantize_linear` replaces every ``nn.Linear`` by its dynamically quantized version
(:func:`torch.ao.quantization.quantize_dynamic`): int8 weights, one scale per output channel or
per matrix, and activations quantized per batch with one scale for the whole tensor. That one
scale is where the points go: a few input channels with large values stretch it (in MiniLM
fine-tuned on SemEval, channels 99 and 63 of what the feed-forward layers read are 13–16 times
the median channel), and every other channel is left with a handful of levels.

Smoothing (SmoothQuant, Xiao et al., 2023) moves that range from the activations into the
weights, which are quantized per output channel and take it well. From each input channel's
largest value over a few calibration batches (:func:`input_ranges`),

.. math::

    s_j = \frac{\max |x_j|^{\alpha}}{\max_i |W_{ij}|^{1 - \alpha}}, \qquad
    y = (x \oslash s)\,(W \operatorname{diag}(s))^\top + b,

the same function (:class:`SmoothedLinear`), whose input ``x / s`` has channels of nearly equal
range, so its int8 copy loses less. ``alpha`` trades activation range for weight range (0.5 is the
paper's default; 0.8 here). The division costs one pass over the input, so only layers whose
input is uneven are smoothed: those whose largest channel range is at least ``min_spread`` (8)
times the median one (:func:`spread`; in that MiniLM, 8 of the 12 feed-forward layers, 3.6–16
times, and none of the attention layers, 1.7–4.8 times).

The int8 weights are packed for oneDNN on a CPU with AMX int8 units (:func:`int8_engine`;
torch's own ``x86`` choice otherwise): the packed weights choose the kernels, whatever the
process's ``torch.backends.quantized.engine`` is later. On this project's Intel CPU, MiniLM fine-tuned on
SemEval ran its forward pass 2.8× faster than fp32 with oneDNN's kernels and 1.9× with fbgemm's
(``x86``), at the same test macro-F1 within 0.02 (``docs/benchmarks.md``).

Example::

    ranges = input_ranges(model, calibration_batches)
    fast = quantize_linear(model, ranges=ranges)
"""

from __future__ import annotations

import copy
import re
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor, nn

from graphmatch.engine.arguments import SMOOTH_ALPHA

#: the smallest input range or weight column range smoothing divides by
_TINY = 1e-5
#: a layer is smoothed when its largest input range is at least this many times the median one
MIN_SPREAD = 8.0


class SmoothedLinear(nn.Module):
    r"""``linear`` with its input channels rescaled: :math:`y = (x \oslash s)(W \operatorname{diag}(s))^\top + b`.

    Args:
        linear (nn.Linear): the layer (left unchanged; its weights are copied).
        scale (Tensor): ``[in_features]`` positive scales :math:`s`.
    """

    def __init__(self, linear: nn.Linear, scale: Tensor):
        super().__init__()
        weight = linear.weight.detach()
        self.linear = nn.Linear(linear.in_features, linear.out_features, bias=linear.bias is not None,
                                device=weight.device, dtype=weight.dtype)
        scale = scale.to(weight)
        with torch.no_grad():
            self.linear.weight.copy_(weight * scale)
            if linear.bias is not None:
                self.linear.bias.copy_(linear.bias)
        self.register_buffer("inv_scale", scale.reciprocal())

    def forward(self, x: Tensor) -> Tensor:
        return self.linear(x * self.inv_scale)


def linear_names(model: nn.Module) -> list[str]:
    """The qualified names of ``model``'s ``nn.Linear`` layers, in module order."""
    return [name for name, module in model.named_modules() if isinstance(module, nn.Linear)]


def input_ranges(model: nn.Module, batches: Iterable[Any]) -> dict[str, Tensor]:
    """Each linear layer's largest absolute input per channel (``[in_features]``) over ``batches``
    (each given to ``model`` as ``model(batch)``, without gradients). A layer that never ran (e.g.
    an unused pooler) has no range.

    Raises:
        ValueError: no batch.
    """
    ranges: dict[str, Tensor] = {}

    def watch(name: str):
        def hook(_module: nn.Module, args: tuple[Tensor, ...]) -> None:
            x = args[0].detach().abs().reshape(-1, args[0].shape[-1]).amax(0)
            ranges[name] = x if name not in ranges else torch.maximum(ranges[name], x)
        return hook

    handles = [model.get_submodule(name).register_forward_pre_hook(watch(name)) for name in linear_names(model)]
    seen = 0
    try:
        with torch.inference_mode():
            for batch in batches:
                model(batch)
                seen += 1
    finally:
        for handle in handles:
            handle.remove()
    if not seen:
        raise ValueError("no calibration batch")
    return ranges


def smoothing_scale(ranges: Tensor, weight: Tensor, alpha: float = SMOOTH_ALPHA) -> Tensor:
    r""":math:`s_j = \max|x_j|^{\alpha} / \max_i |W_{ij}|^{1-\alpha}` (both ranges at least 1e-5)."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    columns = weight.detach().abs().amax(0).clamp_min(_TINY)
    return ranges.clamp_min(_TINY).pow(alpha) / columns.pow(1.0 - alpha)


def spread(ranges: Tensor) -> float:
    """How uneven a layer's input is: its largest channel range over the median one."""
    return float(ranges.max() / ranges.median().clamp_min(_TINY))


def int8_engine() -> str:
    """The quantized engine int8 weights are packed for: ``onednn`` where this torch has it and the
    CPU has AMX tiles (the int8 matrix units oneDNN's kernels were measured on), else the
    process's own (``torch.backends.quantized.engine``)."""
    amx = getattr(torch.cpu, "_is_amx_tile_supported", None)
    if "onednn" in torch.backends.quantized.supported_engines and amx is not None and amx():
        return "onednn"
    return torch.backends.quantized.engine


@contextmanager
def _packing_for(engine: str) -> Iterator[None]:
    """``torch.backends.quantized.engine`` set to ``engine`` inside, as it was after."""
    before = torch.backends.quantized.engine
    torch.backends.quantized.engine = engine
    try:
        yield
    finally:
        torch.backends.quantized.engine = before


def quantize_linear(model: nn.Module, weights: str = "per-channel", keep_fp32: str | None = None,
                    ranges: dict[str, Tensor] | None = None, alpha: float = SMOOTH_ALPHA,
                    min_spread: float = MIN_SPREAD, engine: str | None = None) -> nn.Module:
    """``model`` with every ``nn.Linear`` dynamically quantized to int8 (a copy): weights with one
    scale per output channel (``weights="per-channel"``) or per matrix (``"per-tensor"``),
    activations quantized per batch. Linear layers whose qualified name (``model.named_modules()``)
    the regular expression ``keep_fp32`` finds (:func:`re.search`) stay in fp32. With ``ranges``
    (:func:`input_ranges`), every quantized layer that has a range whose :func:`spread` is at
    least ``min_spread`` is smoothed first (:class:`SmoothedLinear`). The weights are packed for
    ``engine`` (default :func:`int8_engine`).

    Raises:
        ValueError: ``keep_fp32`` finds no linear layer, or finds all of them.
    """
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig

    qconfig = per_channel_dynamic_qconfig if weights == "per-channel" else default_dynamic_qconfig
    names = linear_names(model)
    chosen = names
    if keep_fp32 is not None:
        kept = [n for n in names if re.search(keep_fp32, n)]
        if not kept:
            raise ValueError(f"--keep-fp32 {keep_fp32!r} matches no linear layer (they are named like {names[0]!r})"
                             if names else "--keep-fp32: the model has no linear layer")
        if len(kept) == len(names):
            raise ValueError(f"--keep-fp32 {keep_fp32!r} matches every linear layer: nothing left to quantize")
        chosen = [n for n in names if n not in kept]
    if ranges is not None:
        model = copy.deepcopy(model)
        for name in (n for n in chosen if n in ranges and spread(ranges[n]) >= min_spread):
            linear = model.get_submodule(name)
            parent, _, child = name.rpartition(".")
            smoothed = SmoothedLinear(linear, smoothing_scale(ranges[name], linear.weight, alpha))
            setattr(model.get_submodule(parent), child, smoothed)
    # a name's qconfig reaches its children: a smoothed layer's inner nn.Linear is the one swapped
    whole = chosen is names and ranges is None
    spec: dict[Any, Any] = {nn.Linear: qconfig} if whole else dict.fromkeys(chosen, qconfig)
    with warnings.catch_warnings(), _packing_for(engine or int8_engine()):  # warnings: torch's API will move
        warnings.filterwarnings("ignore", message=".*(quantize_per_tensor|torch.ao.quantization).*deprecated.*")
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        return torch.ao.quantization.quantize_dynamic(model, spec, dtype=torch.qint8, inplace=ranges is not None)


__all__ = ["MIN_SPREAD", "SmoothedLinear", "input_ranges", "int8_engine", "linear_names", "quantize_linear",
           "smoothing_scale", "spread"]
