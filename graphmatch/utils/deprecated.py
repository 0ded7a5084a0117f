"""Old module paths, keywords and loose arguments kept for one release, each with a ``DeprecationWarning``: an
old module warns once, on import, and is the new one."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any


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


def reexport(old: str, new: Sequence[str], namespace: dict[str, Any]) -> tuple[Callable[[str], Any], list[str]]:
    """Warn that module ``old`` moved into the modules ``new`` (a ``DeprecationWarning``) and return
    the old module's ``__getattr__`` and ``__all__``, for a module whose names (private ones too) now
    live in several: a name is looked up in ``new``, in order, and kept in ``namespace`` (its ``globals()``)."""
    warnings.warn(moved_message(old, " / ".join(new)), DeprecationWarning, stacklevel=3)
    modules = [importlib.import_module(name) for name in new]

    def __getattr__(name: str) -> Any:
        for module in modules:
            if hasattr(module, name):
                namespace[name] = value = getattr(module, name)
                return value
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__, sorted({n for module in modules for n in getattr(module, "__all__", ())})


def old_keywords(where: str, options: Any, given: dict[str, Any], instead: str = "options=") -> Any:
    """``options`` with the loose keywords ``given`` of an old call of ``where`` (a class or
    function that now takes one object, ``instead``) put in, with one ``DeprecationWarning``; no
    keyword gives ``options`` back unchanged. ``options`` is a dataclass instance (the defaults);
    a keyword it has no field for is a ``TypeError`` naming ``where``."""
    if not given:
        return options
    fields = {f.name for f in dataclasses.fields(options)}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    warnings.warn(f"{where}({', '.join(f'{name}=' for name in given)}) is deprecated: pass {instead} "
                  f"({type(options).__name__}); the keywords go in the next release", DeprecationWarning, stacklevel=3)
    return dataclasses.replace(options, **given)


def old_arguments(where: str, config_cls: type, config: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The config object of a call ``where(..., config)`` that now takes one ``config_cls`` (a
    dataclass): ``config`` itself, or, for an old call with the config's fields as loose arguments
    (``config`` then holds the first of them, or ``None``), ``config_cls(config, *args, **kwargs)``
    with one ``DeprecationWarning``. A config and loose arguments at once is a ``TypeError``."""
    if isinstance(config, config_cls):
        if args or kwargs:
            raise TypeError(f"{where}() takes its settings in one {config_cls.__name__}, not also as "
                            f"{', '.join([*(repr(a) for a in args), *(f'{k}=' for k in kwargs)])}")
        return config
    made = config_cls(*(() if config is None else (config,)), *args, **kwargs)  # a bad argument: no warning
    warnings.warn(f"{where}() with loose settings is deprecated: pass one {config_cls.__name__}; the loose "
                  "settings go in the next release", DeprecationWarning, stacklevel=3)
    return made
