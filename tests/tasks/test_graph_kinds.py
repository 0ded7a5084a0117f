"""The graph kinds each family registers for ``graphmatch inspect`` and ``graphmatch show``
(:mod:`graphmatch.tasks.graph_kinds`): the commands loop over them, and they load without torch."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphmatch.tasks import graph_kinds as registry
from graphmatch.tasks.graph_kinds import GraphKind, graph_kinds, register_graph_kind
from graphmatch.tasks.keys import BUILTIN_TASKS

ROOT = Path(__file__).resolve().parents[2]


def _kind(name: str, **extra) -> GraphKind:
    return GraphKind(name=name, help=f"{name} graphs", add_arguments=lambda p: p.add_argument("input"),
                     rows=lambda lines: iter([{"line": line} for line in lines]), row_options=lambda args: {},
                     graph=lambda args, length: (None, {}), **extra)


def test_every_family_registers_its_kind_in_the_registry_order():
    kinds = graph_kinds()
    assert tuple(kinds) == BUILTIN_TASKS and all(kind.name == name for name, kind in kinds.items())
    assert kinds["kbert"].show_flags == {"kg", "matrix", "select", "pair_encoding"}
    assert kinds["relation"].one_line_input and not kinds["let"].one_line_input


def test_a_kind_reading_an_unknown_show_flag_is_refused():
    with pytest.raises(ValueError, match=r"graph kind 'x': unknown show flags \['colour'\]"):
        register_graph_kind(_kind("x", show_flags=frozenset({"colour", "kg"})))


def test_a_registered_family_is_offered_and_one_outside_the_task_registry_is_not(monkeypatch):
    monkeypatch.setattr(registry, "BUILTIN_TASKS", (*BUILTIN_TASKS, "toy"))
    assert "toy" not in graph_kinds()  # the family has not registered a kind yet
    monkeypatch.setitem(registry._KINDS, "toy", _kind("toy"))
    assert tuple(graph_kinds()) == (*BUILTIN_TASKS, "toy")
    monkeypatch.setitem(registry._KINDS, "stray", _kind("stray"))  # not a task of the registry
    assert "stray" not in graph_kinds()


def test_the_plain_picture_draws_the_graph_as_built():
    args = argparse.Namespace(no_visible=False)
    options = {"edge_types": [("a", "b", "c")], "hidden_edge_types": [("c", "d", "a")]}
    assert graph_kinds()["let"].picture(None, options, args, True) == {
        "visible": None, "edge_types": [("a", "b", "c")], "hidden_edge_types": [("c", "d", "a")]}


def test_the_kinds_load_without_torch():
    """``inspect`` builds on the NumPy cores: its registry and argument parsers import no torch."""
    code = ("import json, sys\nfrom graphmatch.cli.main import build_parser\nbuild_parser()\n"
            "from graphmatch.tasks.graph_kinds import graph_kinds\nkinds = list(graph_kinds())\n"
            "print(json.dumps([kinds, sorted(m for m in ('torch', 'torch_geometric') if m in sys.modules)]))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    kinds, heavy = json.loads(done.stdout.splitlines()[-1])
    assert kinds == list(BUILTIN_TASKS) and heavy == []
