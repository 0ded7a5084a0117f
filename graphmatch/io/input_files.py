r"""The files ``predict --input`` reads: a task's own data files as well as bare inputs.

Every line is one input in the task's columns (:attr:`Task.input_columns
<graphmatch.tasks.base.Task.input_columns>`, the order of the task's own data files, e.g. K-BERT
classification ``label<TAB>text_a``, pairs ``text_a<TAB>text_b<TAB>label``, the relation corpora
``head<TAB>tail<TAB>relation<TAB>sentence``). A first line made of those column names is a header:
it is never scored, and the columns are then taken by name, the gold label (``label`` or
``relation``) among them. Without a header a line holding every column is read in the file's own
order (gold included); any other line is the task's bare input (``Task.input_fields``). A family
whose corpus has a format of its own reads it in :meth:`Task.read_inputs
<graphmatch.tasks.base.Task.read_inputs>` and hands any other file to :func:`read_input_lines`
(the relation family's SemEval files, :mod:`graphmatch.data.semeval_inputs`). TSV, CSV
(``.csv``) and JSONL (``.jsonl``: a string, a list of fields, or an object keyed by column name
or ``text``/``text_b``) are read; ``-`` is stdin.

Errors are one ``ValueError`` naming ``file:line``: invalid UTF-8, a NUL byte, a line with the
wrong columns.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphmatch.io.text_files import iter_lines

#: the names a gold label column goes by
LABEL_COLUMNS = ("label", "relation")


@dataclass(frozen=True)
class InputLine:
    """One input: the task's fields, its 1-based line in the file and its gold label (or ``None``)."""

    fields: tuple[str, ...]
    line: int
    gold: str | None = None


def name_of(path: str | os.PathLike) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


Fields = Callable[[Sequence[str]], tuple[str, ...]]


def read_input_file(path: str | os.PathLike, columns: Sequence[str], bare: Fields,
                    own: Fields | None = None) -> list[InputLine]:
    """The inputs of ``path`` (module docstring): ``columns`` are the task's file columns in order,
    ``bare`` checks an input's fields and returns them (``Task.input_fields``); ``own`` first turns
    the input columns of a line in the task's own layout into bare fields (``Task.dataset_fields``,
    e.g. NER's space-separated characters joined).

    Raises:
        ValueError: ``file:line`` and what is wrong with the line, or a file without inputs.
    """
    return read_input_lines(name_of(path), iter_lines(path), columns, bare, own)


def read_input_lines(name: str, lines: Iterable[str], columns: Sequence[str], bare: Fields,
                     own: Fields | None = None) -> list[InputLine]:
    """:func:`read_input_file` of the ``lines`` of the file ``name`` (its suffix says the format),
    line 1 first."""
    in_layout = bare if own is None else (lambda fields: bare(own(fields)))  # a line in the task's own layout
    suffix = Path(name).suffix.lower()
    inputs = [c for c in columns if c not in LABEL_COLUMNS]
    gold_column = next((c for c in columns if c in LABEL_COLUMNS), None)
    header: dict[str, int] | None = None
    out: list[InputLine] = []
    first = True
    for number, line in enumerate(lines, 1):  # UTF-8, BOM and NUL checked by iter_lines: file:line
        if not line.strip():
            continue
        try:
            fields, named = _fields(line, suffix)
            if any("\0" in field for field in fields):  # JSON's \u0000
                raise ValueError("a NUL character in the input; it is not text")
            if named is not None:
                out.append(_by_name(named, inputs, gold_column, number, in_layout))
            elif first and _is_header(fields, columns, inputs):
                header = {f.strip(): i for i, f in enumerate(fields)}
            elif header is not None:
                if len(fields) != len(header):
                    raise ValueError(f"{len(fields)} columns; the header names {len(header)} "
                                     f"({', '.join(header)})")
                out.append(_by_name({c: fields[i] for c, i in header.items()}, inputs, gold_column, number, in_layout))
            elif len(columns) > len(inputs) and len(fields) == len(columns):
                out.append(_by_name(dict(zip(columns, fields, strict=True)), inputs, gold_column, number,
                                    in_layout))
            else:
                out.append(InputLine(tuple(bare(fields)), number))
        except ValueError as err:
            raise ValueError(f"{name}:{number}: {err}") from None
        first = False
    if not out:
        raise ValueError(f"{name}: no input lines (one input per line: {', '.join(inputs)}, tab-separated)")
    return out


def _fields(line: str, suffix: str) -> tuple[list[str], dict[str, str] | None]:
    """A line's fields, and for a JSON object its fields by name."""
    if suffix in (".jsonl", ".json"):
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValueError(f"not a JSON value ({err.msg})") from None
        if isinstance(value, str):
            return [value], None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value, None
        if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
            if "text" in value:  # the bare form: text (and text_b)
                return [value["text"], *([value["text_b"]] if value.get("text_b") is not None else [])], None
            return list(value.values()), value
        raise ValueError('a JSONL input is a string, a list of strings or an object of strings ("text", '
                         "or the task's column names)")
    if suffix == ".csv":
        return next(csv.reader([line])), None
    return line.split("\t"), None


def _is_header(fields: Sequence[str], columns: Sequence[str], inputs: Sequence[str]) -> bool:
    """Whether a first line names the task's columns (each once, every input column among them)."""
    names = [f.strip() for f in fields]
    return len(set(names)) == len(names) and set(names) <= set(columns) and set(inputs) <= set(names)


def _by_name(named: dict[str, str], inputs: Sequence[str], gold_column: str | None, number: int,
             bare: Fields) -> InputLine:
    missing = [c for c in inputs if c not in named]
    if missing:
        raise ValueError(f"no {', '.join(missing)} column (the columns are {', '.join(inputs)})")
    gold = named.get(gold_column) if gold_column is not None else None
    if gold is not None and not gold.strip():
        raise ValueError(f"the {gold_column} column is empty")
    return InputLine(tuple(bare([named[c] for c in inputs])), number, None if gold is None else gold.strip())
