"""Titles of pictures: an input of several fields (a text pair, a ``head<TAB>tail<TAB>sentence``
line) shown with visible separators, never raw tabs or line ends."""

from __future__ import annotations

#: what stands between two fields of an input in a title
SEPARATOR = "  |  "


def input_title(text: str, text_b: str | None = None) -> str:
    """``text`` (its tab-separated fields) and ``text_b`` joined by :data:`SEPARATOR`, other
    whitespace runs shown as one space."""
    fields = [*text.strip("\r\n").split("\t"), *([] if text_b is None else text_b.strip("\r\n").split("\t"))]
    return SEPARATOR.join(" ".join(field.split()) for field in fields)


def prediction_title(text: str, text_b: str | None, label: str, prob: float | None) -> str:
    """:func:`input_title`, then the predicted ``label`` and its probability (when there is one)."""
    said = label if prob is None else f"{label} ({prob:.2f})"
    return f"{input_title(text, text_b)}  →  {said}"
