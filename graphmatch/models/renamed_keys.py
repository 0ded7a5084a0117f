"""Checkpoints of earlier releases: parameters a model has since renamed, mapped on load.

A model that renames parameters lists them in a class attribute ``RENAMED_KEYS`` (old name
prefix → new name prefix, relative to the model) and calls :func:`accept_renamed_keys` in its
``__init__``. Its ``load_state_dict`` then accepts both names, wherever the model sits (alone or
inside a LightningModule, whose resume loads it as ``model.*``), and :func:`upgrade_state_dict`
gives the current names for code that compares keys before loading
(:func:`graphmatch.engine.runs.checkpoint.check_state_dict`).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

import torch


def rename_keys(state: MutableMapping[str, Any], renames: Mapping[str, str], prefix: str = "") -> None:
    """In place: each key ``prefix + old + rest`` becomes ``prefix + new + rest`` for every
    ``old → new`` of ``renames``, in the same place in the order; other keys are left alone."""

    def renamed(key: str) -> str:
        rest = key[len(prefix):] if key.startswith(prefix) else None
        for old, new in renames.items():
            if rest is not None and rest.startswith(old):
                return prefix + new + rest[len(old):]
        return key

    items = list(state.items())
    state.clear()
    state.update((renamed(key), value) for key, value in items)


def accept_renamed_keys(module: torch.nn.Module) -> None:
    """Let ``module.load_state_dict`` (and that of any module holding it) read the names of
    ``module.RENAMED_KEYS``."""
    module.register_load_state_dict_pre_hook(_rename_on_load)


def _rename_on_load(module: torch.nn.Module, state: MutableMapping[str, Any], prefix: str, *_: Any) -> None:
    # a module-level function, so that a model holding it still pickles (ddp_spawn, torch.save)
    rename_keys(state, module.RENAMED_KEYS, prefix)


def upgrade_state_dict(model: torch.nn.Module, state: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``state`` with the old names of ``model`` and its submodules replaced by the
    current ones, and the parameters a submodule lists in ``ZERO_IF_MISSING`` (zero-initialised
    additions such as :class:`~graphmatch.nn.branch_marking.BranchMarking`'s) added as zeros where
    ``state`` lacks them."""
    out = dict(state)
    for name, module in model.named_modules():
        prefix = f"{name}." if name else ""
        renames = getattr(module, "RENAMED_KEYS", None)
        if renames:
            rename_keys(out, renames, prefix)
        for param in getattr(module, "ZERO_IF_MISSING", ()):
            value = getattr(module, param, None)
            if value is not None and prefix + param not in out:
                out[prefix + param] = torch.zeros_like(value)
    return out
