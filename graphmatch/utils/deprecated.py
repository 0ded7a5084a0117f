"""Old module paths kept for one release: the old module warns once, on import, and is the new one."""

from __future__ import annotations

import importlib
import sys
import warnings


def moved_message(old: str, new: str) -> str:
    """The warning an old path gives; it starts with ``old``, which ``pyproject.toml``'s pytest
    ``filterwarnings`` turns into an error, so that the project never imports an old path itself."""
    return f"{old} is moved to {new}; the old path goes in the next release"


def moved(old: str, new: str) -> None:
    """Warn that module ``old`` is now ``new`` (a ``DeprecationWarning``) and make ``old`` that
    module: ``import old`` gives ``new`` itself, so a name patched on one is patched on both.
    Called at the top level of the old module, with ``__name__``."""
    warnings.warn(moved_message(old, new), DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(new)


def split(old: str, where: str) -> None:
    """Warn that module ``old`` is split (``where`` says into which modules), for a module whose
    names now live in several: the old module then re-exports them itself."""
    warnings.warn(moved_message(old, where), DeprecationWarning, stacklevel=3)
