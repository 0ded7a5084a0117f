"""A package whose public names are imported when first named (PEP 562), so that a light part of it
(``graphmatch.nn.choices``) can be read without importing what the rest needs (torch)."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, namespace: dict[str, Any], where: Mapping[str, str],
                 renamed: Mapping[str, str] | None = None) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``: a name of ``where`` (name -> its
    module in the package) is imported on first use and kept in ``namespace`` (the package's
    ``globals()``); an old name of ``renamed`` (old -> new) warns and gives the new one."""
    renamed = dict(renamed or {})

    def __getattr__(name: str) -> Any:
        if name in renamed:
            warnings.warn(f"{package}.{name} is renamed {renamed[name]}; the old name goes in the next release",
                          DeprecationWarning, stacklevel=2)
            return __getattr__(renamed[name])
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
