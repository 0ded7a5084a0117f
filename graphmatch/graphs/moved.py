"""Old module paths that keep working for one release: a shim module warns once, on import, and
gives every name (private ones included) of the modules its code moved to."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Sequence
from typing import Any


def moved(old: str, new: Sequence[str], namespace: dict[str, Any]) -> tuple[Callable[[str], Any], list[str]]:
    """Warn that module ``old`` moved to the modules ``new`` (a :class:`DeprecationWarning`) and
    return the shim's module ``__getattr__`` and ``__all__``: a name is looked up in ``new``, in
    order, and kept in ``namespace`` (the shim's ``globals()``)."""
    warnings.warn(f"{old} is deprecated: import from {' / '.join(new)}; the old path goes in the next release",
                  DeprecationWarning, stacklevel=3)
    modules = [importlib.import_module(name) for name in new]

    def __getattr__(name: str) -> Any:
        for module in modules:
            if hasattr(module, name):
                namespace[name] = value = getattr(module, name)
                return value
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__, sorted({n for module in modules for n in getattr(module, "__all__", ())})


__all__ = ["moved"]
