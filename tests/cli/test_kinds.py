"""``graphmatch inspect`` and ``graphmatch show`` offer the families of the task registry
(:data:`~graphmatch.tasks.keys.BUILTIN_TASKS`): each has its inspector and its picture."""

from __future__ import annotations

import argparse

import pytest

from graphmatch.cli import inspect, show
from graphmatch.tasks.keys import BUILTIN_TASKS


def _parser(module) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers(dest="command"))
    return parser


def test_every_registered_family_can_be_inspected_and_shown():
    assert set(inspect.KINDS) == set(inspect.ROWS) == set(show.GRAPHS) == set(BUILTIN_TASKS)
    assert show.KINDS == BUILTIN_TASKS
    for name in BUILTIN_TASKS:
        args = _parser(inspect).parse_args(["inspect", name, "-"])
        assert args.kind == name and args.func is inspect.run
        assert _parser(show).parse_args(["show", "x", "--kind", name, "-o", "x.png"]).kind == name


def test_the_kinds_follow_the_registry(monkeypatch, capsys):
    """A family leaves ``inspect`` when it leaves the registry (the command lists none of its own);
    one registered without an inspector yet is left out, not a crash of every command."""
    monkeypatch.setattr(inspect, "BUILTIN_TASKS", ("kbert", "relation", "new_family"))
    assert _parser(inspect).parse_args(["inspect", "relation", "-"]).kind == "relation"
    with pytest.raises(SystemExit):
        _parser(inspect).parse_args(["inspect", "let", "-"])
    err = capsys.readouterr().err
    assert "invalid choice: 'let'" in err and "kbert" in err and "relation" in err
