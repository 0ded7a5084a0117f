"""Which precision a run computes in on the CPU: :func:`bf16_units` (the CPU flags that say it has
bf16 matrix units), :func:`cpu_precision` (``train.precision`` resolved for a CPU) and
:func:`autocast` (the context a model runs in at inference, as Lightning's mixed precision trains it).

On a CPU with bf16 units (AVX-512 BF16, ``avx512_bf16``; AMX, ``amx_bf16``) ``auto`` is
``bf16-mixed``: ``torch.autocast("cpu", torch.bfloat16)`` runs the matrix products in bf16 and
keeps what needs the range or the digits in fp32 (LayerNorm, softmax, the losses, the visible
matrix's mask; ``tests/nn/test_bf16_fp32_layers.py``). Elsewhere ``auto`` stays ``32-true``: bf16
emulated without those units is slower than fp32. Reads ``/proc/cpuinfo`` only (no torch).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

#: the CPU flags of bf16 matrix units (``/proc/cpuinfo``)
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
#: what ``predict --precision`` and ``evaluate --precision`` take
INFERENCE_PRECISIONS = ("auto", "32-true", "bf16-mixed")


def cpu_flags(path: str = "/proc/cpuinfo") -> frozenset[str]:
    """The flags of the first CPU of ``/proc/cpuinfo`` (empty where there is no such file: not Linux)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def bf16_units() -> tuple[str, ...]:
    """The flags of :data:`BF16_FLAGS` this CPU has (empty: no bf16 units). ``torch.backends.cpu.
    get_cpu_capability()`` cannot say it: it reads ``AVX512`` with or without them."""
    flags = cpu_flags()
    return tuple(flag for flag in BF16_FLAGS if flag in flags)


def cpu_precision(requested: str | int) -> str:
    """``train.precision`` on a CPU: ``auto`` is ``bf16-mixed`` where :func:`bf16_units` finds bf16
    units, else ``32-true``; a bf16 precision asked for on a CPU without them runs, with one warning
    that it will be slow."""
    name = f"{requested}-true" if isinstance(requested, int) else str(requested)
    if name == "auto":
        return "bf16-mixed" if bf16_units() else "32-true"
    if name.startswith("bf16") and not bf16_units():
        warnings.warn(f"precision {name}: this CPU has no bf16 units ({' or '.join(BF16_FLAGS)}), so bf16 is "
                      "emulated and slower than fp32; 32-true is faster here", stacklevel=2)
    return name


def inference_precision(requested: str | int, quantize: str | None = None) -> str:
    """What a CPU model predicts in for a run's ``train.precision`` (or ``--precision``):
    :func:`cpu_precision`'s answer, ``bf16-mixed`` for any bf16 precision and ``32-true`` for the
    rest (fp16 is a GPU's); always ``32-true`` for an int8 model (``quantize``)."""
    if quantize is not None:
        return "32-true"
    return "bf16-mixed" if cpu_precision(requested).startswith("bf16") else "32-true"


@contextlib.contextmanager
def autocast(precision: str) -> Iterator[None]:
    """The context a CPU model runs in for ``precision`` (:func:`cpu_precision`'s answer):
    ``torch.autocast("cpu", torch.bfloat16)`` for ``bf16-mixed``, nothing for ``32-true``."""
    import torch

    if precision == "bf16-mixed":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            yield
    elif precision in ("32-true", "32"):
        yield
    else:
        raise ValueError(f"precision {precision!r} is not one a CPU model runs in here: "
                         f"{', '.join(INFERENCE_PRECISIONS)}")


def to_fp32(out: Any) -> Any:
    """``out`` (a tensor, or a tuple, list or dict of them) with its floating tensors in fp32: what a
    model computed under :func:`autocast`, read as fp32 probabilities."""
    import torch

    if isinstance(out, torch.Tensor):
        return out.float() if out.is_floating_point() else out
    if isinstance(out, tuple) and hasattr(out, "_fields"):  # a named tuple
        return type(out)(*(to_fp32(o) for o in out))
    if isinstance(out, (tuple, list)):
        return type(out)(to_fp32(o) for o in out)
    if isinstance(out, dict):
        return {k: to_fp32(v) for k, v in out.items()}
    return out


def precision_record(requested: str | int, in_force: str) -> dict[str, Any]:
    """What a run's provenance says of its precision: the recipe's ``requested`` value, the one
    ``in_force``, and the bf16 flags this CPU has (those that made ``auto`` bf16-mixed)."""
    return {"requested": str(requested), "in_force": str(in_force), "cpu_bf16": list(bf16_units())}
