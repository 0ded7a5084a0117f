"""CONTRIBUTING's how-tos stay true: each is its number of steps (five; three for a builder option),
every file a step names exists, and every name it gives (a class, function or constant) is in one of
the files that step names (in the package when it names none)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: each how-to and its number of steps
HOW_TOS = {"How to add a recipe key": 5, "How to add a task": 5, "How to add a tokenizer": 5,
           "How to add a builder option": 3}
CODE = re.compile(r"`([^`]+)`")
PATH = re.compile(r"[\w./-]+/[\w.-]+\.(py|md|toml|yaml)")
NAME = re.compile(r"([A-Za-z_]\w*)(?:\.(\w+))?(?:\(.*\))?")


def steps(title: str) -> list[str]:
    """The numbered steps of the section ``## title``, each as one string."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]
    return [" ".join(step.split()) for step in re.split(r"\n(?=\d\. )", "\n" + section)[1:]]


def stale(step: str) -> list[str]:
    """What ``step`` names that is not there: files missing, names absent from its files."""
    codes = [c for c in CODE.findall(step) if "<" not in c]
    paths = [c for c in codes if PATH.fullmatch(c)]
    missing = [p for p in paths if not (REPO / p).exists()]
    sources = [REPO / p for p in paths if p.endswith(".py") and (REPO / p).is_file()] or \
        list((REPO / "graphmatch").rglob("*.py"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources)
    names = [m.group(2) or m.group(1) for c in codes if c not in paths and (m := NAME.fullmatch(c))]
    return missing + [n for n in names if len(n) > 3 and not re.search(rf"\b{re.escape(n)}\b", text)]


@pytest.mark.parametrize("title", HOW_TOS)
def test_each_how_to_is_its_number_of_true_steps(title):
    found = steps(title)
    assert [s[:2] for s in found] == [f"{n}." for n in range(1, HOW_TOS[title] + 1)]
    assert {s[:2]: stale(s) for s in found} == {s[:2]: [] for s in found}


def test_the_check_can_fail():
    assert stale("2. **Write it** in `graphmatch/tasks/base.py` with `_import_builtin_tasks_old`") == \
        ["_import_builtin_tasks_old"]
    assert stale("3. `graphmatch/tasks/nothing.py`: `BUILTIN_TASKS`") == ["graphmatch/tasks/nothing.py"]
    assert stale("3. **Register it** in `graphmatch/tasks/keys.py`: `BUILTIN_TASKS`, `register_keys`") == []


def test_the_task_section_names_every_hook_once_and_the_required_core_is_abstract():
    """``## The `Task` interface`` lists each method of :class:`~graphmatch.tasks.base.Task` in one
    group, and its required groups are exactly the abstract methods."""
    from graphmatch.tasks.base import Task

    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    section = text.split("## The `Task` interface\n", 1)[1].split("\n## ", 1)[0]
    groups: dict[str, list[str]] = {}
    for row in (r for r in section.splitlines() if r.startswith("| ") and not r.startswith("| group")):
        group, methods = row.split("|")[1:3]
        for name in CODE.findall(methods):
            groups.setdefault(name, []).append(group.strip())
    own = {n for n, v in vars(Task).items() if not n.startswith("_") and (callable(v) or isinstance(v, classmethod))}
    assert {n: g for n, g in groups.items() if len(g) > 1} == {}
    assert set(groups) == own | {"metrics", "monitor"}
    assert {n for n, (g,) in groups.items() if g.startswith("**required**")} == set(Task.__abstractmethods__)
