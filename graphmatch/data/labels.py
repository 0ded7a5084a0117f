"""One rule for the labels of every training file (K-BERT's TSVs and LET's pair files).

- **Rare labels.** A label (for NER: a tag) found in fewer than :data:`RARE_COUNT` examples, or
  in under :data:`RARE_SHARE` of them, and at most :data:`RARE_RATIO` times as often as the most
  common label, is probably a typo (``yes`` among thousands of ``0`` and ``1``): reading the
  training file warns, naming the label, its count and its first line. It is a warning, not an
  error, because a real class can be rare; the label set stays what the training file holds. (A
  tiny file whose labels are all rare alike is not warned about.)
- **One spelling a number.** Two labels that read as the same number (``0`` and ``0.0``) would
  be two classes; reading the training file refuses them, naming a line of each spelling.
- **Labels outside the training set** in dev or test are errors naming ``file:line``.
- **Positive class.** F1 (K-BERT's sentence-pair task) is the F1 of one class,
  ``data.positive_label``: ``null`` means ``"1"`` when the labels hold it, and is an error
  otherwise (labels ``same``/``diff`` need ``--set data.positive_label=same``); a positive label
  that is not one of the labels is an error. LET reads only ``0``/``1`` labels (binary matching):
  anything else is an error naming ``file:line``, and its positive class is ``1``.
- **Columns.** A file with a header names its columns: a named column the task does not read is
  a warning; a line with more fields than the header is an error naming ``file:line`` (a tab
  inside a text would otherwise shift the columns silently).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Iterable, Sequence

#: a label in fewer examples than this is reported as rare
RARE_COUNT = 3
#: ... and so is a label in under this share of the examples
RARE_SHARE = 0.01
#: ... when it is also at most this fraction as frequent as the most common label
RARE_RATIO = 0.1


class DataWarning(UserWarning):
    """A training file looks wrong: a rare label, an unused column."""


def rare_labels(examples: Sequence[Iterable[str]]) -> list[tuple[str, int]]:
    """``(label, number of examples holding it)`` of every rare label, rarest first.

    Args:
        examples: the labels of each example (one label, or the tags of a sentence).
    """
    counts: Counter[str] = Counter()
    for labels in examples:
        counts.update(set(labels))
    if not counts:
        return []
    limit = max(RARE_COUNT, RARE_SHARE * len(examples))
    common = max(counts.values())
    rare = [(label, n) for label, n in counts.items() if n < limit and n <= RARE_RATIO * common]
    return sorted(rare, key=lambda item: (item[1], item[0]))


def warn_rare_labels(examples: Sequence[Iterable[str]], lines: Sequence[str]) -> list[str]:
    """Warn (:class:`DataWarning`) about each rare label of a training file; returns the messages.

    Args:
        examples: the labels of each example.
        lines: ``file:line`` of each example, to point at the first occurrence.
    """
    messages = []
    total = len(examples)
    for label, n in rare_labels(examples):
        first = next(lines[i] for i, labels in enumerate(examples) if label in set(labels))
        messages.append(
            f"{first}: label {label!r} is in only {n} of {total} training examples (first here); "
            "a typo? It is kept as a class of its own"
        )
    for message in messages:
        warnings.warn(message, DataWarning, stacklevel=2)
    return messages


def check_label_spellings(labels: Sequence[str], lines: Sequence[str]) -> None:
    """Refuse labels that are one number spelled two ways (``1`` and ``1.0``).

    Args:
        labels: the label of each example.
        lines: ``file:line`` of each example.

    Raises:
        ValueError: naming the first line of each of two colliding spellings.
    """
    first: dict[str, int] = {}
    for i, label in enumerate(labels):
        first.setdefault(label, i)
    seen: dict[float, str] = {}
    for label in sorted(first, key=first.__getitem__):
        try:
            number = float(label)
        except ValueError:
            continue
        if number in seen:
            other = seen[number]
            raise ValueError(
                f"{lines[first[label]]}: label {label!r} is the number of label {other!r} "
                f"({lines[first[other]]}) spelled another way: it would be a class of its own; "
                "spell every label one way"
            )
        seen[number] = label


def positive_label(labels: Sequence[str], given: str | int | None, key: str = "data.positive_label") -> str:
    """The class whose F1 is reported: ``given``, else ``"1"`` when it is a label.

    Raises:
        ValueError: ``given`` is not a label, or it is ``None`` and ``"1"`` is not a label.
    """
    names = [str(label) for label in labels]
    if given is None:
        if "1" in names:
            return "1"
        raise ValueError(
            f"F1 needs a positive class, and the labels ({', '.join(names)}) have no '1': "
            f"name it with --set {key}=LABEL"
        )
    if str(given) not in names:
        raise ValueError(f"{key}={given!r} is not one of the labels ({', '.join(names)})")
    return str(given)


def warn_unused_columns(path: str, columns: Iterable[str], used: Iterable[str]) -> list[str]:
    """Warn about named header columns the task does not read; returns them."""
    unused = [c for c in columns if c and c not in set(used)]
    if unused:
        warnings.warn(
            f"{path}:1: column(s) {', '.join(unused)} are not used (this task reads {', '.join(used)})",
            DataWarning,
            stacklevel=2,
        )
    return unused
