"""``predict --input`` of a SemEval-2010 Task 8 file, as the organisers wrote it: a sentence line
``ID<TAB>"sentence"`` (recognised on the file's first line), the label line after it (no tab)
and ``Comment`` lines. The relation family's :meth:`Task.read_inputs
<graphmatch.tasks.base.Task.read_inputs>`; any other file goes to
:func:`~graphmatch.io.input_files.read_input_lines`."""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from graphmatch.io.input_files import Fields, InputLine, name_of, read_input_lines
from graphmatch.io.text_files import iter_lines

#: a SemEval sentence line: ``ID<TAB>"sentence"``
SEMEVAL_SENTENCE = re.compile(r"\d+\t\".*\"")


def read_relation_inputs(path: str | os.PathLike, columns: Sequence[str], bare: Fields,
                         own: Fields | None = None) -> list[InputLine]:
    """The inputs of ``path``: a SemEval file's sentences (and gold labels), or any other file's
    lines by :func:`~graphmatch.io.input_files.read_input_lines` (``columns``, ``bare`` and ``own``
    as there).

    Raises:
        ValueError: ``file:line`` and what is wrong with the line, or a file without inputs.
    """
    name, lines = name_of(path), iter(iter_lines(path))
    head: list[str] = []  # up to the first line that is not blank: stdin is read once, so it is put back
    for line in lines:
        head.append(line)
        if line.strip():
            break
    lines = itertools.chain(head, lines)
    if head and head[-1].strip() and Path(name).suffix.lower() not in (".jsonl", ".json", ".csv") \
            and SEMEVAL_SENTENCE.fullmatch(head[-1].strip()):
        return _semeval_lines(name, lines, bare)
    return read_input_lines(name, lines, columns, bare, own)


def _semeval_lines(name: str, lines: Iterable[str], bare: Fields) -> list[InputLine]:
    out: list[InputLine] = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                _semeval_line(line.strip(), number, out, bare)
            except ValueError as err:
                raise ValueError(f"{name}:{number}: {err}") from None
    return out


def _semeval_line(line: str, number: int, out: list[InputLine], bare: Fields) -> None:
    """One line of a SemEval file: a sentence, the label line after it, or a comment."""
    if SEMEVAL_SENTENCE.fullmatch(line):
        out.append(InputLine(tuple(bare(line.split("\t", 1))), number))
    elif line.startswith("Comment"):
        return
    elif "\t" in line:
        raise ValueError(f'expected ID<TAB>"sentence", a label line or a Comment line, got {line[:80]!r}')
    elif out and out[-1].gold is None:
        last = out[-1]
        out[-1] = InputLine(last.fields, last.line, line)
    else:
        raise ValueError(f"a label line {line[:80]!r} with no sentence line before it")
