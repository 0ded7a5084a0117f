"""How a user's text files are read: :func:`read_text` / :func:`iter_lines` (an open binary
stream: :func:`decode_lines`): UTF-8 with a byte-order mark at the start of any line removed (it
never becomes part of a label or text); invalid UTF-8 and a NUL byte are a ``ValueError`` naming
the file and line, a folder where a file is expected a ``ValueError`` naming it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

#: the byte-order mark, as text
BOM = "\ufeff"


def decode_utf8(data: bytes, where: str, first_line: int = 1) -> str:
    """``data`` (whole lines) as text: UTF-8, a byte-order mark at the start of any line removed
    (files joined together keep theirs mid-file); invalid UTF-8 and a NUL byte are a
    ``ValueError`` naming ``where`` and the line (counted from ``first_line``)."""
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        if 0 <= nul < err.start:
            raise _nul_error(data, nul, where, first_line) from None
        line = first_line + data.count(b"\n", 0, err.start)
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise ValueError(
            f"{where}:{line}: not valid UTF-8 (byte 0x{data[err.start]:02x} at byte {column} of the line); "
            "save the file as UTF-8"
        ) from None
    if nul >= 0:
        raise _nul_error(data, nul, where, first_line)
    return text.removeprefix(BOM).replace("\n" + BOM, "\n")


def _nul_error(data: bytes, at: int, where: str, first_line: int) -> ValueError:
    line = first_line + data.count(b"\n", 0, at)
    column = at - (data.rfind(b"\n", 0, at) + 1) + 1
    return ValueError(f"{where}:{line}: a NUL byte (at byte {column} of the line) in a text file; "
                      "it is not text (a binary or damaged file?): remove it or give the right file")


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise ValueError(f"{path} is a folder; a file was expected")
    if not path.exists():
        raise FileNotFoundError(f"file {path} does not exist")


def read_text(path: str | os.PathLike) -> str:
    """The whole text of a user's file (see :func:`decode_utf8`); a folder or a missing file is
    an error naming it."""
    path = Path(path)
    _check_file(path)
    return decode_utf8(path.read_bytes(), str(path))


def iter_lines(source: str | os.PathLike) -> Iterator[str]:
    """The lines of a user's text file, ``"-"`` for stdin, without their line ends (``\\n`` or
    ``\\r\\n``), read as they come: UTF-8, a byte-order mark at the start of a line removed;
    invalid UTF-8 and a NUL byte name the file and line."""
    if str(source) == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)  # a text stream when stdin was replaced
        yield from decode_lines(stream, "<stdin>")
        return
    path = Path(source)
    _check_file(path)
    with open(path, "rb") as f:
        yield from decode_lines(f, str(path))


def decode_lines(stream: Iterable[bytes] | Iterable[str], where: str) -> Iterator[str]:
    """The lines of a stream opened in binary mode (a text stream is taken as it is, but for
    the checks), as :func:`iter_lines` reads them; errors name ``where`` and the line."""
    for n, raw in enumerate(stream, 1):
        if isinstance(raw, bytes):
            line = decode_utf8(raw, where, n)
        else:
            if "\0" in raw:
                raise _nul_error(raw.encode("utf-8", "surrogatepass"), raw.index("\0"), where, n)
            line = raw.removeprefix(BOM)
        yield line.rstrip("\r\n")
