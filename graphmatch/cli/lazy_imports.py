"""Start-up time of the ``graphmatch`` command: defer two heavy imports nothing of ours needs to
start.

``import torch_geometric`` imports every part of PyG. Two of them cost most of a cold start
(measured with ``python -X importtime``; see ``docs/benchmarks.md``) and are used by no
graphmatch code path that inspects, draws or predicts:

- ``torch._dynamo`` (the ``torch.compile`` machinery, with sympy), imported by
  ``torch_geometric.isinstance`` only to recognise compiled modules;
- ``torch_geometric.datasets``, which imports ``torch_geometric.llm`` and through it
  ``transformers``.

:func:`defer_heavy_imports` puts a placeholder module under each name in ``sys.modules`` when
``torch_geometric`` is first imported. The
first attribute read on a placeholder (``torch._dynamo.OptimizedModule``, ``from
torch_geometric.datasets import Planetoid``, a submodule import) imports the real module, puts it
in ``sys.modules`` and on its parent package, and answers from it; so a command that needs them
(training: Lightning uses ``torch._dynamo``) gets them, a few seconds later, unchanged. Only the
command line calls it (:func:`graphmatch.cli.main.entry`); importing graphmatch as a library
changes nothing.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import types
from typing import Any

#: the modules deferred (neither is read as an attribute of its parent package by PyG or Lightning)
DEFERRED = ("torch._dynamo", "torch_geometric.datasets")


class DeferredModule(types.ModuleType):
    """Stands in for a module until an attribute of it is read, then imports and forwards to it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        # the import system reads __spec__ of a module found in sys.modules; None means "loaded"
        self.__dict__["__spec__"] = None
        self.__dict__["_deferred_real"] = None

    def _real(self) -> types.ModuleType:
        real = self.__dict__["_deferred_real"]
        if real is None:
            name = self.__name__
            if sys.modules.get(name) is self:
                del sys.modules[name]
            real = importlib.import_module(name)
            self.__dict__["_deferred_real"] = real
            parent, _, child = name.rpartition(".")
            if parent in sys.modules:
                setattr(sys.modules[parent], child, real)
        return real

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._real(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._real(), attr, value)

    def __dir__(self) -> list[str]:
        return dir(self._real())


def defer_now() -> list[str]:
    """Install a :class:`DeferredModule` for each name of :data:`DEFERRED` not imported yet (torch
    is imported first: its own start-up must see the real modules); returns the names deferred."""
    import torch  # noqa: F401

    deferred = []
    for name in DEFERRED:
        if name in sys.modules:  # already imported (or deferred)
            continue
        sys.modules[name] = DeferredModule(name)
        deferred.append(name)
    return deferred


class _BeforePyG(importlib.abc.MetaPathFinder):
    """Calls :func:`defer_now` when ``torch_geometric`` is first imported, then steps aside."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch_geometric":
            sys.meta_path.remove(self)
            defer_now()
        return None  # the ordinary finders import it


def defer_heavy_imports() -> None:
    """Defer :data:`DEFERRED` from the moment ``torch_geometric`` is imported (at once if it is
    already); a command that never imports PyG (``score``, ``--help``) does not even import torch."""
    if "torch_geometric" in sys.modules:
        defer_now()
    elif not any(isinstance(f, _BeforePyG) for f in sys.meta_path):
        sys.meta_path.insert(0, _BeforePyG())


def loaded(name: str) -> bool:
    """Whether the real module ``name`` has been imported (a placeholder that was never read is not)."""
    module = sys.modules.get(name)
    if module is None:
        return False
    return not isinstance(module, DeferredModule) or module.__dict__["_deferred_real"] is not None
