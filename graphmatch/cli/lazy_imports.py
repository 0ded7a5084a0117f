"""Start-up time of the ``graphmatch`` command: defer two heavy imports nothing of ours needs to
start.

``import torch_geometric`` imports every part of PyG. Two of them cost most of a cold start
(measured with ``python -X importtime``; see ``docs/benchmarks.md``) and are used by no
graphmatch code path that inspects, draws or predicts:

- ``torch._dynamo`` (the ``torch.compile`` machinery, with sympy), imported by
  ``torch_geometric.isinstance`` only to recognise compiled modules;
- ``torch_geometric.datasets``, which imports ``torch_geometric.llm`` and through it
  ``transformers``.

:func:`defer_heavy_imports` adds an import finder (Python's documented hook,
``sys.meta_path``) that imports these two modules with the standard library's
:class:`importlib.util.LazyLoader`: ``import torch._dynamo`` binds the module at once, and its
code runs when one of its attributes is first read (``torch._dynamo.OptimizedModule``, ``from
torch_geometric.datasets import Planetoid``, a submodule import). So a command that needs them
(training: Lightning uses ``torch._dynamo``) gets them, a few seconds later, unchanged; nothing
else is touched (``sys.modules`` is filled by the import system itself). One order must be kept:
transformers' models import DTensor, whose import reaches ``torch._dynamo`` half-way (a circular
import if ``torch._dynamo`` is loaded only then), so a deferred ``torch._dynamo`` is loaded before
any module of ``transformers`` is; a command that never imports transformers (K-BERT with its
own vocabulary) never pays for it. Only the command line calls it
(:func:`graphmatch.cli.main.entry`); importing graphmatch as a library changes nothing.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

#: the modules deferred (neither is read as an attribute of its parent package by PyG or Lightning)
DEFERRED = ("torch._dynamo", "torch_geometric.datasets")


class LazyFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of :data:`DEFERRED` as the ordinary finders do and has them loaded
    lazily (:class:`importlib.util.LazyLoader`); any other name is left to the other finders.
    Also imports torch first, when ``torch_geometric`` is first imported: torch's own start-up
    sees the real modules."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name == "torch_geometric" and "torch" not in sys.modules:
            import torch  # noqa: F401
        if name.partition(".")[0] == "transformers" and "torch._dynamo" in sys.modules:
            getattr(sys.modules["torch._dynamo"], "config", None)  # loads it if deferred (see above)
        if name not in DEFERRED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


def defer_heavy_imports() -> None:
    """Load :data:`DEFERRED` lazily from now on (those already imported stay as they are); a
    command that never imports PyG (``score``, ``--help``) does not even import torch."""
    if not any(isinstance(f, LazyFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, LazyFinder())
