"""File formats of relation-classification data (pure Python, no torch).

Two formats, one example type (:class:`RelationExample`: the plain sentence with the character
spans of its two entities, a label and the line it came from):

- **SemEval** (:func:`read_semeval_file`), the organisers' layout of SemEval-2010 Task 8::

      8001<TAB>"The most common <e1>audits</e1> were about <e2>waste</e2> and recycling."
      Message-Topic(e1,e2)
      Comment: Assuming an audit = an audit document.
      <blank line>

- **head/tail TSV** (:func:`read_tsv_file`), the common layout of Chinese relation corpora,
  one example per line ``head<TAB>tail<TAB>relation<TAB>sentence``; head (e1) and tail (e2)
  are found in the sentence by :func:`~graphmatch.graphs.relation_markup.locate_entities`.

Both readers strip a UTF-8 byte-order mark, accept ``\\r\\n`` line ends, and raise one-line
errors naming ``file:line``: invalid UTF-8, a malformed line, an entity not in its sentence,
a repeated SemEval sentence id. Entities may nest or overlap in both formats (``母亲`` inside
``母亲四十岁时``); an example the models cannot represent (two entities on the same tokens, ...)
is refused when it is tokenised, with
:class:`~graphmatch.graphs.relation_markup.UnrepresentableExample`, which a dataset may skip.

Labels are kept as written (directional labels such as ``Cause-Effect(e1,e2)`` stay distinct);
:func:`label_set` takes them from the training data and :func:`check_labels` refuses a dev or
test label the training data never had. When every training label is one of SemEval's 19
(:data:`SEMEVAL_LABELS`), the official SemEval scorer applies; otherwise macro-F1 over the
labels that are not :data:`NEGATIVE_LABELS` ("no relation") does.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphmatch.graphs.relation_markup import MarkedSentence, locate_entities, parse_markup

SEMEVAL_RELATIONS = (
    "Cause-Effect",
    "Component-Whole",
    "Content-Container",
    "Entity-Destination",
    "Entity-Origin",
    "Instrument-Agency",
    "Member-Collection",
    "Message-Topic",
    "Product-Producer",
)
#: the 19 labels of SemEval-2010 Task 8 (what its official scorer accepts): ``Other`` and each
#: relation in both directions
SEMEVAL_LABELS = ("Other",) + tuple(f"{r}({d})" for r in SEMEVAL_RELATIONS for d in ("e1,e2", "e2,e1"))
#: labels that mean "no relation" in common corpora (SemEval, TACRED, NYT, Chinese sets); they
#: are left out of the macro-F1 of a non-SemEval label set (``data.negative_labels``)
NEGATIVE_LABELS = ("Other", "other", "no_relation", "NA", "N/A", "None", "none", "unknown", "无关系", "其他", "无")
FORMATS = ("semeval", "tsv")
_SENTENCE_LINE = re.compile(r"(\d+)\t\"(.*)\"")
#: C0 control characters and DEL but tab, line feed and carriage return (line ends): never text
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class RelationExample:
    """One example: its id (SemEval's sentence id, else the line number), the sentence with its
    entities, its label (``None`` when unlabelled) and the 1-based line of its sentence."""

    sid: int
    sentence: MarkedSentence
    label: str | None
    line: int


def read_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a UTF-8 text file without line ends; a BOM at the start of a line is dropped and invalid
    UTF-8 is a :class:`ValueError` naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"relation file {path} does not exist" + (" (it is a folder)" if path.is_dir() else ""))
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ValueError(f"{path}:{line}: not valid UTF-8 ({err.reason} at byte {err.start})") from None
    lines = [line.removeprefix("\ufeff") for line in text.splitlines()]  # a BOM at any line start
    bad = _CONTROL.search(text)
    if bad is not None:
        line = text.count("\n", 0, bad.start()) + 1
        raise ValueError(f"{path}:{line}: control character U+{ord(bad.group()):04X} in the text "
                         "(only tab is allowed); remove it")
    return lines


def read_semeval_file(path: str | os.PathLike, labelled: bool = True) -> list[RelationExample]:
    """Parse an organisers' file (``TRAIN_FILE.TXT``, ``TEST_FILE_FULL.TXT`` or, with
    ``labelled=False``, ``TEST_FILE.txt``). Errors name ``path:line``."""
    lines = read_lines(path)
    examples: list[RelationExample] = []
    seen: dict[int, int] = {}
    n = 0
    while n < len(lines):
        line = lines[n].strip()
        n += 1
        if not line:
            continue
        where, sent_line = f"{path}:{n}", n
        m = _SENTENCE_LINE.fullmatch(line)
        if m is None:
            raise ValueError(f'{where}: expected ID<TAB>"sentence with <e1>..</e1> and <e2>..</e2>", got {line[:80]!r}')
        sid, sentence = int(m.group(1)), parse_markup(m.group(2), where)
        if sid in seen:
            raise ValueError(f"{where}: sentence id {sid} already appears on line {seen[sid]}")
        seen[sid] = n
        label = None
        if labelled:
            if n >= len(lines) or not lines[n].strip() or _SENTENCE_LINE.fullmatch(lines[n].strip()):
                raise ValueError(f"{where}: example {sid} has no label line after its sentence")
            label = lines[n].strip()
            n += 1
            if n < len(lines) and lines[n].startswith("Comment"):
                n += 1
        examples.append(RelationExample(sid, sentence, label, sent_line))
    if not examples:
        raise ValueError(f"{path}: empty file, no SemEval examples in it")
    return examples


def read_tsv_file(path: str | os.PathLike, labelled: bool = True) -> list[RelationExample]:
    """Parse ``head<TAB>tail<TAB>relation<TAB>sentence`` lines (``head<TAB>tail<TAB>sentence``
    with ``labelled=False``); blank lines are skipped, ids are line numbers. Errors name
    ``path:line``."""
    fields = 4 if labelled else 3
    layout = "head<TAB>tail<TAB>relation<TAB>sentence" if labelled else "head<TAB>tail<TAB>sentence"
    examples = []
    for n, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        where = f"{path}:{n}"
        if len(parts) != fields:
            raise ValueError(f"{where}: expected {fields} tab-separated fields ({layout}), got {len(parts)}")
        head, tail, *rest = (p.strip() for p in parts)
        label, sentence = (rest[0], rest[1]) if labelled else (None, rest[0])
        if labelled and not label:
            raise ValueError(f"{where}: the relation field is empty")
        examples.append(RelationExample(n, locate_entities(sentence, head, tail, where), label, n))
    if not examples:
        raise ValueError(f"{path}: empty file, no {layout} lines in it")
    return examples


def detect_format(path: str | os.PathLike) -> str:
    """``"semeval"`` when the first non-blank line is ``ID<TAB>"…"``, else ``"tsv"``."""
    for line in read_lines(path):
        if line.strip():
            return "semeval" if _SENTENCE_LINE.fullmatch(line.strip()) else "tsv"
    raise ValueError(f"{path}: empty file")


def read_relation_file(path: str | os.PathLike, fmt: str = "auto", labelled: bool = True) -> list[RelationExample]:
    """Read ``path`` in format ``fmt`` (``semeval``, ``tsv`` or ``auto``: told by its first line)."""
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "semeval":
        return read_semeval_file(path, labelled)
    if fmt == "tsv":
        return read_tsv_file(path, labelled)
    raise ValueError(f"unknown relation file format {fmt!r}; choose auto or one of {', '.join(FORMATS)}")


def label_set(train: Iterable[RelationExample]) -> list[str]:
    """The distinct labels of the training examples, in SemEval's official order when all are
    SemEval labels, else sorted."""
    labels = {ex.label for ex in train if ex.label is not None}
    if labels and labels <= set(SEMEVAL_LABELS):
        return [label for label in SEMEVAL_LABELS if label in labels]
    return sorted(labels)


def is_semeval(labels: Sequence[str]) -> bool:
    """Whether ``labels`` are SemEval-2010 Task 8's (the official scorer applies)."""
    return bool(labels) and set(labels) <= set(SEMEVAL_LABELS)


def check_labels(examples: Iterable[RelationExample], labels: Sequence[str], path: str | os.PathLike) -> None:
    """A label of ``examples`` (read from ``path``) outside ``labels`` (the training labels) is
    a :class:`ValueError` naming the file and line."""
    known = set(labels)
    for ex in examples:
        if ex.label is not None and ex.label not in known:
            shown = ", ".join(labels) if len(labels) <= 25 else ", ".join(labels[:25]) + ", …"
            raise ValueError(
                f"{path}:{ex.line}: label {ex.label!r} does not occur in the training data; "
                f"training labels: {shown}"
            )
