"""The ``graphmatch`` command. Each subcommand lives in its own module of this package and
exposes ``add_parser(subparsers)``, which registers its parser with ``func=run``; a subcommand
imports what it needs inside ``run``, so that ``graphmatch inspect`` does not load the trainer.

Errors a user can fix (a bad file, flag, value or path) are one line on stderr, ``graphmatch
COMMAND: error: ...``, with exit code 2 and no traceback; ``--debug`` (anywhere on the command
line) shows the traceback instead. Everything else is a bug and keeps its traceback. Warnings are
one line each, ``graphmatch COMMAND: warning: ...``.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import sys
import warnings
from collections.abc import Iterator
from typing import NoReturn, TextIO

from graphmatch import __version__

#: subcommand modules, in the order ``graphmatch --help`` lists them
COMMANDS = ("demo", "train", "evaluate", "predict", "probe", "score", "inspect", "show", "recipe", "kg", "pretrained")
DEBUG_FLAG = "--debug"
#: exit code of a user's error (argparse uses the same)
USER_ERROR = 2
#: exit code after Ctrl-C, as a shell reports a process killed by SIGINT
INTERRUPTED = 130
#: the most characters of an error's message shown (a value echoed back may be huge; a message that
#: names two or three folders of a user's must still read whole)
MAX_MESSAGE = 1000


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors (an unknown choice, a missing argument) are one line,
    ``graphmatch COMMAND: error: ...``, and point to ``--help`` instead of printing the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(USER_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="graphmatch",
        description="Knowledge-enhanced Chinese NLP on PyTorch Geometric (K-BERT, LET, relation classification).",
    )
    parser.add_argument("--version", action="version", version=f"graphmatch {__version__}")
    parser.add_argument(DEBUG_FLAG, action="store_true",
                        help="show the traceback of an error (may be given anywhere on the command line)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"graphmatch.cli.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"graphmatch.cli.{name}":
                raise
            continue
        module.add_parser(sub)
    return parser


def capped(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` on one line, at most ``limit`` characters: a longer one keeps its start and its
    end (where the reason usually is) around a ``…``."""
    message = " ".join(message.split("\n"))
    if len(message) <= limit:
        return message
    head = (limit - 1) * 2 // 3
    return message[:head] + "…" + message[len(message) - (limit - 1 - head):]


def user_error(err: BaseException) -> str | None:
    """The one-line message of an error a user can fix, or ``None`` for anything else (a bug).

    User errors: ``ValueError`` (a bad value, file content or configuration, invalid UTF-8
    included), ``FileNotFoundError`` and the other path errors (a folder where a file is expected,
    a file where a folder is, no permission, a name already taken), ``KeyError`` (an unknown name,
    e.g. a task, raised with a sentence; a bare ``KeyError('y')`` is a bug), ``NotImplementedError``
    (an option a task does not offer) and :class:`~graphmatch.engine.runs.RunError` (a run that
    cannot go on, e.g. interrupted).
    """
    if isinstance(err, (IsADirectoryError, NotADirectoryError, PermissionError, FileExistsError)):
        reason = {
            IsADirectoryError: "is a folder; a file was expected",
            NotADirectoryError: "a part of this path is a file, not a folder",
            PermissionError: "permission denied",
            FileExistsError: "already exists",
        }[type(err)]
        return f"{err.filename}: {reason}" if err.filename else str(err)
    if isinstance(err, OSError) and err.errno == errno.ENAMETOOLONG:
        return f"{err.filename}: the name is too long for this system"
    if isinstance(err, FileNotFoundError) and err.filename is not None:  # from open() and the like
        return f"{err.filename}: no such file or folder"
    if isinstance(err, KeyError):  # a sentence (unknown task, metric); a bare key is a bug
        message = err.args[0] if len(err.args) == 1 else None
        return message if isinstance(message, str) and " " in message else None
    if isinstance(err, (FileNotFoundError, ValueError, NotImplementedError)):
        return str(err)
    from graphmatch.engine.runs import RunError  # light: no torch

    if isinstance(err, RunError):
        return str(err)
    return None


@contextlib.contextmanager
def one_line_warnings(command: str) -> Iterator[None]:
    """Show each warning as ``graphmatch COMMAND: warning: message`` while the block runs."""
    show = warnings.showwarning

    def showwarning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                    file: TextIO | None = None, line: str | None = None) -> None:
        print(f"graphmatch {command}: warning: {message}", file=file or sys.stderr)

    warnings.showwarning = showwarning
    try:
        yield
    finally:
        warnings.showwarning = show


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in argv
    argv = [a for a in argv if a != DEBUG_FLAG]
    args = build_parser().parse_args(argv)
    with one_line_warnings(args.command):
        try:
            return int(args.func(args) or 0)
        except KeyboardInterrupt:
            if debug:
                raise
            print(f"graphmatch {args.command}: interrupted", file=sys.stderr)
            return INTERRUPTED
        except Exception as err:  # sorted into user errors and bugs below
            status = getattr(err, "exit_status", None)  # a run stopped by a signal (engine.signals)
            if isinstance(status, int) and not debug:
                print(f"graphmatch {args.command}: {capped(str(err))}", file=sys.stderr)
                return status
            message = user_error(err)
            if debug or message is None:
                raise
            print(f"graphmatch {args.command}: error: {capped(message)}", file=sys.stderr)
            return USER_ERROR


def entry() -> None:
    """The ``graphmatch`` console script: :func:`main` with the start-up imports deferred
    (:mod:`graphmatch.cli.lazy_imports`)."""
    from graphmatch.cli.lazy_imports import defer_heavy_imports

    defer_heavy_imports()
    sys.exit(main())


if __name__ == "__main__":
    entry()
