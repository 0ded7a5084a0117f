"""Old module paths, keywords and loose arguments kept for one release, each with a ``DeprecationWarning``: an
old module warns once, on import, and is the new one."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def moved_message(old: str, new: str) -> str:
    """The warning an old path gives; it starts with ``old``, which ``pyproject.toml``'s pytest
    ``filterwarnings`` turns into an error, so that the project never imports an old path itself."""
    return f"{old} is moved to {new}; the old path goes in the next release"


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


def options_given(where: str, cls: type, options: Any, old: Mapping[str, Any]) -> Any:
    """The settings of ``where``, which takes them in one ``cls`` now: ``options`` (``None``: ``cls()``),
    or ``None`` when it was called with the old loose keywords ``old`` instead (for the caller to
    translate, :func:`old_keywords`). Other options, or options and keywords both, are a ``TypeError``."""
    if options is not None and not isinstance(options, cls):
        raise TypeError(f"{where}() takes its settings in one {cls.__name__}, not {options!r}")
    if old and options is not None:
        raise TypeError(f"{where}() takes its settings in options= only, not also as {', '.join(old)}=")
    return None if old else (options if options is not None else cls())


def old_keywords(where: str, options: Any, given: dict[str, Any], instead: str = "options=",
                 names: Sequence[str] | None = None, stacklevel: int = 3) -> Any:
    """``options`` with the loose keywords ``given`` of an old call of ``where`` (a class or
    function that now takes one object, ``instead``) put in, with one ``DeprecationWarning`` naming
    the keywords (``names``, where the call's differ from the fields ``given``); no
    keyword gives ``options`` back unchanged. ``options`` is a dataclass instance (the defaults);
    a keyword it has no field for is a ``TypeError`` naming ``where``. The warning points at the
    frame ``stacklevel`` up (3: the caller of the function that calls this one)."""
    if not given:
        return options
    fields = {f.name for f in dataclasses.fields(options)}
    unknown = sorted(set(given) - fields)
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    called = given if names is None else names
    warnings.warn(f"{where}({', '.join(f'{name}=' for name in called)}) is deprecated: pass {instead} "
                  f"({type(options).__name__}); the keywords go in the next release", DeprecationWarning,
                  stacklevel=stacklevel)
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


class OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The import hook behind :func:`keep_old_paths`: ``import old`` warns once (a
    ``DeprecationWarning``, :func:`moved_message`) and gives the module ``moved[old]`` itself."""

    def __init__(self, moved: Mapping[str, str]) -> None:
        self.moved = dict(moved)
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = self.moved[spec.name]
        warnings.warn(moved_message(spec.name, new), DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[spec.name] = module.__spec__  # the import system sets the old name's spec on it: put it back
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._specs.pop(module.__spec__.name)  # set to the old name's by the import system


def keep_old_paths(moved: Mapping[str, str]) -> OldPaths:
    """Keep the modules ``moved`` (``{old: new}``) importable by their old paths for one release,
    without a file at the old path (so that ``git mv`` leaves a rename that merges follow): an old
    path warns once, on import, and is the new module. Called once, by ``graphmatch/__init__.py``."""
    for finder in sys.meta_path:
        if isinstance(finder, OldPaths):
            finder.moved.update(moved)
            return finder
    finder = OldPaths(moved)
    sys.meta_path.insert(0, finder)
    return finder


def renamed(module: str, names: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """The ``__getattr__`` of module ``module`` whose names ``{old: new}`` were renamed: an old name
    warns (a ``DeprecationWarning``, :func:`moved_message`) and gives the object of the new one
    (looked up in ``namespace``, the module's ``globals()``)."""

    def __getattr__(name: str) -> Any:
        if name in names:
            warnings.warn(moved_message(f"{module}.{name}", f"{module}.{names[name]}"), DeprecationWarning,
                          stacklevel=2)
            return namespace[names[name]]
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def renamed_method(old: str, new: Callable[..., Any]) -> Callable[..., Any]:
    """A method ``old`` kept for one release as the method ``new``, with a warning when called."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        owner = f"{type(self).__module__}.{type(self).__qualname__}"
        warnings.warn(moved_message(f"{owner}.{old}", f"{owner}.{new.__name__}"), DeprecationWarning, stacklevel=2)
        return getattr(self, new.__name__)(*args, **kwargs)

    method.__name__ = old
    method.__doc__ = f"Deprecated name of :meth:`{new.__name__}` (goes in the next release)."
    return method
