"""Recipe sections declared once: a frozen dataclass per section, one field per key.

A field made with :func:`key` carries its default, a one-line doc and its allowed values; its
type hint is the key's type (``int``, ``float`` (an int is accepted), ``str``, ``bool``,
``list[str]``, ``X | None``, ``Literal["a", "b"]`` (its values are the choices) or another
section dataclass for a nested mapping)::

    @dataclass(frozen=True)
    class Model:
        hidden: int = key(128, "width of every layer", interval="[1, inf)")
        pooling: Literal["first", "mean"] = key("first", "how the sentence vector is pooled")

:func:`check` checks a mapping against a declaration (unknown keys with a did-you-mean,
types, choices, ranges), :func:`build` turns a checked mapping into the dataclass,
:func:`defaults` gives the plain nested defaults and :func:`describe` the rows of the key
reference (``docs/recipes.md``). Deprecated names (:class:`Renamed`) are mapped to the current
ones by :func:`upgrade`, with one :class:`RecipeKeyDeprecated` warning per key.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import re
import types
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import Any, Literal, Union

#: a problem with a value, as the end of "KEY must be ...", or None when it is fine
Check = Callable[[Any], "str | None"]


class RecipeKeyDeprecated(FutureWarning):
    """A recipe used an old key name; it still works for one release."""


@dataclasses.dataclass(frozen=True)
class Interval:
    """A range such as ``"[1, inf)"`` or ``"(0, 1]"``."""

    text: str

    def bounds(self) -> tuple[float, bool, float, bool]:
        m = re.fullmatch(r"\s*([\[(])\s*([^,\s]+)\s*,\s*([^\]\)\s]+)\s*([\])])\s*", self.text)
        if m is None:
            raise ValueError(f"not an interval: {self.text!r}")
        return float(m[2]), m[1] == "[", float(m[3]), m[4] == "]"

    def __contains__(self, value: float) -> bool:
        low, low_in, high, high_in = self.bounds()
        return (low < value or (low_in and value == low)) and (value < high or (high_in and value == high))

    def phrase(self) -> str:
        low, low_in, high, high_in = self.bounds()
        if math.isinf(high):
            return f"{'>=' if low_in else '>'} {_number(low)}"
        return f"in {self.text.strip()}"


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def key(default: Any, doc: str, *, choices: tuple[Any, ...] | None = None, interval: str | None = None,
        check: Check | None = None, allowed: str | None = None, convert: Callable[[Any], Any] | None = None) -> Any:
    """A dataclass field declaring one recipe key.

    Args:
        default: the default value (a section dataclass instance for a nested section).
        doc: one line for the key reference.
        choices: the allowed values (a ``Literal`` type gives them too).
        interval: the allowed range of a number, e.g. ``"[1, inf)"``, ``"(0, 1]"``.
        check: a rule the type cannot say; returns what the value must be, or None.
        allowed: the allowed values in words, for the reference (default: from the above).
        convert: applied to a value of the right type before the choices are checked.
    """
    meta = {"doc": doc, "choices": choices, "interval": Interval(interval) if interval else None,
            "check": check, "allowed": allowed, "convert": convert}
    if dataclasses.is_dataclass(default) or isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: _copy(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _copy(value: Any) -> Any:
    return dataclasses.replace(value) if dataclasses.is_dataclass(value) else type(value)(value)


@dataclasses.dataclass(frozen=True)
class Spec:
    """One declared key: what :func:`key` recorded and the field's resolved type."""

    name: str
    type: Any
    default: Any
    doc: str
    choices: tuple[Any, ...] | None
    interval: Interval | None
    check: Check | None
    allowed: str | None
    convert: Callable[[Any], Any] | None

    @property
    def section(self) -> type | None:
        """The dataclass of a nested section, else None."""
        arms = [a for a in _arms(self.type) if a is not type(None)]
        return arms[0] if len(arms) == 1 and dataclasses.is_dataclass(arms[0]) else None


def specs(cls: type) -> dict[str, Spec]:
    """The declared keys of a section dataclass, in declaration order."""
    hints = typing.get_type_hints(cls, include_extras=True)
    out = {}
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        m = f.metadata
        choices = m.get("choices") or _literal_values(hints[f.name])
        out[f.name] = Spec(f.name, hints[f.name], default, m.get("doc", ""), choices, m.get("interval"),
                           m.get("check"), m.get("allowed"), m.get("convert"))
    return out


def _arms(tp: Any) -> tuple[Any, ...]:
    return typing.get_args(tp) if typing.get_origin(tp) in (Union, types.UnionType) else (tp,)


def _literal_values(tp: Any) -> tuple[Any, ...] | None:
    values = tuple(v for arm in _arms(tp) if typing.get_origin(arm) is Literal for v in typing.get_args(arm))
    return values or None


# ------------------------------------------------------------------------------ types
def _fits(value: Any, tp: Any) -> bool:
    if tp is Any:
        return True
    if tp is type(None):
        return value is None
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return any(_fits(value, arm) for arm in typing.get_args(tp))
    if origin is Literal:
        return any(value == v and type(value) is type(v) for v in typing.get_args(tp))
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if dataclasses.is_dataclass(tp):
        return isinstance(value, Mapping)
    if tp is bool:
        return isinstance(value, bool)
    if tp is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if tp is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, tp)


_NAMES = {bool: "a bool", int: "an integer", float: "a number", str: "a string", type(None): "null"}


def type_phrase(tp: Any) -> str:
    """``int | None`` → ``"an integer or null"``."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        arms = [a for a in typing.get_args(tp) if a is not type(None)]
        text = " or ".join(type_phrase(a) for a in arms)
        return f"{text} or null" if len(arms) < len(typing.get_args(tp)) else text
    if origin is Literal:
        return "a string"
    if origin is list:
        (item,) = typing.get_args(tp) or (Any,)
        return f"a list of {type_phrase(item).split(' ', 1)[-1]}s"
    if dataclasses.is_dataclass(tp):
        return "a mapping"
    return _NAMES.get(tp, getattr(tp, "__name__", str(tp)))


def type_name(tp: Any) -> str:
    """The type as the key reference writes it: ``int | None``, ``str``, ``list[str]``."""
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(tp))
    if origin is Literal:
        return "str"
    if origin is list:
        return f"list[{type_name((typing.get_args(tp) or (Any,))[0])}]"
    if tp is type(None):
        return "null"
    if dataclasses.is_dataclass(tp):
        return "mapping"
    return getattr(tp, "__name__", str(tp))


# ------------------------------------------------------------------------------ checks
def _where(source: str | None) -> str:
    return f" ({source})" if source else ""


def suggest(name: str, known: list[str]) -> str | None:
    """The known name closest to ``name`` (``difflib``), or None."""
    found = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_key(dotted: str, prefix: str, known: list[str], source: str | None) -> ValueError:
    """``unknown recipe key 'train.epoch' in FILE; did you mean 'train.epochs'?``"""
    where = f" in {source}" if source else ""
    near = suggest(dotted.removeprefix(prefix), known)
    if near is not None:
        return ValueError(f"unknown recipe key {dotted!r}{where}; did you mean {prefix + near!r}?")
    section = prefix.rstrip(".") or "the top level"
    return ValueError(f"unknown recipe key {dotted!r}{where}; valid keys of {section}: {', '.join(sorted(known))}")


def check_value(spec: Spec, value: Any, dotted: str, source: str | None = None) -> Any:
    """``value`` (converted, e.g. ``32`` → ``"32-true"``) when it fits ``spec``, else a one-line
    :class:`ValueError` naming the key and ``source``."""
    if not _fits(value, spec.type):
        if spec.choices is not None and isinstance(value, str):
            raise ValueError(f"{dotted} must be one of {', '.join(map(str, spec.choices))}, got {value!r}"
                             f"{_where(source)}")
        raise ValueError(f"{dotted} must be {_must(spec)}, got {value!r}{_where(source)}")
    if value is None:
        return value
    if spec.section is not None:
        check(spec.section, value, f"{dotted}.", source)
        return value
    if spec.convert is not None:
        value = spec.convert(value)
    if spec.choices is not None and value not in spec.choices:
        raise ValueError(f"{dotted} must be one of {', '.join(map(str, spec.choices))}, got {value!r}{_where(source)}")
    if spec.interval is not None and isinstance(value, (int, float)) and value not in spec.interval:
        raise ValueError(f"{dotted} must be {_must(spec)}, got {value!r}{_where(source)}")
    problem = spec.check(value) if spec.check is not None else None
    if problem is not None:
        raise ValueError(f"{dotted} must be {problem}, got {value!r}{_where(source)}")
    return value


def _must(spec: Spec) -> str:
    if spec.allowed:
        return spec.allowed
    text = type_phrase(spec.type)
    if spec.interval is not None:
        low = type_phrase(spec.type).replace(" or null", "")
        text = f"{low} {spec.interval.phrase()}" + (" or null" if "null" in text else "")
    return text


def check(cls: type, values: Mapping[str, Any], prefix: str, source: str | None = None) -> dict[str, Any]:
    """Check ``values`` (some keys of section ``cls``, named ``prefix + key``) and return them
    with converted values. Unknown keys, wrong types and values outside the allowed ones are
    one-line :class:`ValueError`\\ s naming the key and ``source`` (a file, or None)."""
    declared = specs(cls)
    out = {}
    for name, value in values.items():
        dotted = f"{prefix}{name}"
        if name not in declared:
            raise unknown_key(dotted, prefix, list(declared), source)
        out[name] = check_value(declared[name], value, dotted, source)
    return out


def defaults(cls: type) -> dict[str, Any]:
    """The plain nested mapping of a section's defaults."""
    return dataclasses.asdict(cls())


def build(cls: type, values: Mapping[str, Any]) -> Any:
    """The section dataclass of a complete, checked mapping (nested sections built too)."""
    declared = specs(cls)
    kwargs = {}
    for name, value in values.items():
        inner = declared[name].section
        kwargs[name] = build(inner, value) if inner is not None and isinstance(value, Mapping) else value
    return cls(**kwargs)


# ------------------------------------------------------------------------------ renames
@dataclasses.dataclass(frozen=True)
class Renamed:
    """An old key (``"data.dev_limit"``) and the current key(s) its value goes to.

    An old key that is still a section (``data.limit``, once a number) is renamed only when its
    value is not a mapping."""

    old: str
    new: tuple[str, ...]

    def message(self, value: Any) -> str:
        new = " and ".join(repr(n) for n in self.new)
        if any(n.startswith(f"{self.old}.") for n in self.new):
            return f"recipe key {self.old!r} as a single value is deprecated; use {new}"
        return f"recipe key {self.old!r} is deprecated; use {new}"


def _get(tree: Mapping[str, Any], dotted: str) -> tuple[bool, Any]:
    node: Any = tree
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _pop(tree: dict[str, Any], dotted: str) -> None:
    *parents, last = dotted.split(".")
    node = tree
    for part in parents:
        node = node[part]
    del node[last]


def _put(tree: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    node = tree
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[last] = value


def upgrade(layer: dict[str, Any], renames: list[Renamed], source: str | None = None,
            stored: bool = False) -> dict[str, Any]:
    """``layer`` (one recipe file, the ``--set`` keys, or a stored configuration) with old key
    names replaced by the current ones, in place.

    Each old key used warns once (:class:`RecipeKeyDeprecated`), unless ``stored`` (a run's own
    ``config.yaml``, written by an earlier release, where the current key wins). An old key
    beside its current one with a different value is a :class:`ValueError`; several old keys
    for one current key (``data.limit`` and ``train.limit_train``) must agree where set (null
    stands for unset)."""
    used = []
    for rename in renames:
        present, value = _get(layer, rename.old)
        if present and not (isinstance(value, Mapping) and any(n.startswith(f"{rename.old}.") for n in rename.new)):
            used.append((rename, value))
    found: dict[str, list[tuple[str, Any]]] = {}
    for rename, value in used:
        for new in rename.new:
            found.setdefault(new, []).append((rename.old, value))
    where = f" in {source}" if source else ""
    values: dict[str, Any] = {}
    for new, olds in found.items():
        present, current = _get(layer, new)
        if present:
            clash = [(old, v) for old, v in olds if v != current]
            if clash and not stored:
                old, v = clash[0]
                raise ValueError(f"{new} is set twice{where}: to {current!r}, and to {v!r} through the deprecated "
                                 f"{old}; keep {new}")
            continue
        given = [(old, v) for old, v in olds if v is not None] or olds[:1]
        if len({repr(v) for _, v in given}) > 1:
            raise ValueError(f"{new} is set twice{where} through deprecated keys "
                             f"({', '.join(f'{o}: {v!r}' for o, v in given)}); set {new} instead")
        values[new] = given[0][1]
    for rename, value in used:
        if not stored:
            warnings.warn(rename.message(value), RecipeKeyDeprecated, stacklevel=3)
        _pop(layer, rename.old)
    for new, value in values.items():
        _put(layer, new, value)
    return layer


# ------------------------------------------------------------------------------ reference
def describe(cls: type, prefix: str) -> list[tuple[str, str, str, str, str]]:
    """Rows ``(key, type, default, allowed, doc)`` of a section, nested sections flattened."""
    rows = []
    for spec in specs(cls).values():
        dotted = f"{prefix}{spec.name}"
        if spec.section is not None:
            rows.append((dotted, "mapping", "", "", spec.doc))
            rows += describe(spec.section, f"{dotted}.")
            continue
        rows.append((dotted, type_name(spec.type), _yaml(spec.default), _allowed(spec), spec.doc))
    return rows


def _allowed(spec: Spec) -> str:
    if spec.allowed:
        return spec.allowed
    if spec.choices is not None:
        return ", ".join(f"`{c}`" for c in spec.choices)
    if spec.interval is not None:
        return spec.interval.phrase()
    return ""


def _yaml(value: Any) -> str:
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str) and value == "":
        return '`""`'
    return f"`{value}`"
