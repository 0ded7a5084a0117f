"""The engine knows a model family only through :class:`~graphmatch.tasks.base.Task`: no module of
``graphmatch/engine`` imports a family's code or names a key of a family's ``data`` or ``model``
section; what a family stores in a run folder, its negative labels and its checkpoints' old names
are the task's to say."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from graphmatch.tasks.keys import BUILTIN_TASKS, SampleLimits, keys_of

ENGINE = Path(__file__).resolve().parents[2] / "graphmatch" / "engine"
#: what the engine may import of graphmatch outside itself (and below): the base, the task interface, batching
GENERIC = ("graphmatch.io", "graphmatch.pretrained", "graphmatch.tasks.recipes", "graphmatch.tasks.base",
           "graphmatch.tasks.keys", "graphmatch.data.batching", "graphmatch.utils")
#: packages the engine may import by their own name only, not their families' modules below them
ENTRY_POINTS = ("graphmatch.metrics",)


def _imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, node.module)] if node.module != "graphmatch" else \
                [(node.lineno, f"graphmatch.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, m) for line, m in found if m.startswith("graphmatch.")]


def family_imports(folder: Path) -> list[str]:
    """``file:line: module`` for every import of graphmatch code that is neither the engine's own
    nor :data:`GENERIC` nor one of :data:`ENTRY_POINTS`."""
    out = []
    for path in sorted(folder.rglob("*.py")):  # its subpackages too
        for line, module in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            own = module.startswith(f"graphmatch.{folder.name}")
            if not own and not module.startswith(GENERIC) and module not in ENTRY_POINTS:
                out.append(f"{path.relative_to(folder).as_posix()}:{line}: {module}")
    return out


def family_keys() -> set[str]:
    """The keys of the built-in families' ``data`` and ``model`` sections, but ``data.limit``
    (:class:`~graphmatch.tasks.keys.SampleLimits`, which the engine reads for every task)."""
    def names(section: dict) -> set[str]:
        return set(section) | {n for v in section.values() if isinstance(v, dict) for n in names(v)}

    sections = [section for name in BUILTIN_TASKS for section in keys_of(name).defaults.values()]
    generic = {"limit"} | {f.name for f in dataclasses.fields(SampleLimits)}
    return {n for section in sections for n in names(section)} - generic


def _section(node: ast.AST) -> str | None:
    """``"data"`` or ``"model"`` when ``node`` reads that section (``config["model"]``,
    ``config.get("model", {})``)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        name = node.slice.value
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
          and node.args and isinstance(node.args[0], ast.Constant)):
        name = node.args[0].value
    else:
        return None
    return name if name in ("data", "model") else None


def _key_read(node: ast.AST) -> tuple[str, str] | None:
    """``(section, key)`` when ``node`` reads a key of a section (``config["model"]["pretrained"]``,
    ``config.get("model", {}).get("pretrained")``)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        inner, key = node.value, node.slice.value
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
          and node.args and isinstance(node.args[0], ast.Constant)):
        inner, key = node.func.value, node.args[0].value
    else:
        return None
    section = _section(inner)
    return (section, key) if section and isinstance(key, str) else None


DOTTED = re.compile(r"\b(data|model)\.(\w+)")


def family_key_names(folder: Path) -> list[str]:
    """``file:line: section.key`` for every family key the engine reads from a recipe section or
    names in a message (docstrings aside)."""
    keys, out = family_keys(), []
    for path in sorted(folder.rglob("*.py")):  # its subpackages too
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        for node in ast.walk(tree):
            read = _key_read(node)
            if read and read[1] in keys:
                out.append(f"{path.name}:{node.lineno}: {read[0]}.{read[1]}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                out += [f"{path.name}:{node.lineno}: {m[0]}.{m[1]}" for m in DOTTED.findall(node.value) if m[1] in keys]
    return sorted(set(out))


def test_the_engine_imports_no_family():
    assert family_imports(ENGINE) == []


def test_the_engine_names_no_family_key():
    assert "pretrained" in family_keys() and "negative_labels" in family_keys()
    assert family_key_names(ENGINE) == []


@pytest.mark.parametrize("source, found", [
    ("from graphmatch.models.renamed_keys import upgrade_state_dict\n", "x.py:1: graphmatch.models.renamed_keys"),
    ("from graphmatch import graphs\n", "x.py:1: graphmatch.graphs"),
    ("def f():\n    from graphmatch.data.relation_formats import NEGATIVE_LABELS\n",
     "x.py:2: graphmatch.data.relation_formats"),
    ("from graphmatch.metrics.semeval import score_files\nfrom graphmatch.metrics import compute\n",
     "x.py:1: graphmatch.metrics.semeval"),
])
def test_the_import_check_can_fail(tmp_path, source, found):
    folder = tmp_path / "engine"
    folder.mkdir()
    (folder / "x.py").write_text(source + "from graphmatch.engine.runs import to_plain\n", encoding="utf-8")
    assert family_imports(folder) == [found]


def test_the_key_check_can_fail(tmp_path):
    folder = tmp_path / "engine"
    folder.mkdir()
    (folder / "x.py").write_text('''"""Reads model.pretrained (a docstring may say so)."""

def f(config, run_dir):
    original = config.get("model", {}).get("pretrained")
    config["model"]["pretrained"] = str(run_dir)
    limit = config["data"].get("limit")  # the engine's own key of every task
    raise ValueError(f"the original model.pretrained {original!r} is needed")
''', encoding="utf-8")
    assert family_key_names(folder) == ["x.py:4: model.pretrained", "x.py:5: model.pretrained",
                                        "x.py:7: model.pretrained"]
