"""``graphmatch.graphs.kbert`` is a package; its old module paths keep working for one release, each
with one DeprecationWarning, and the project itself imports none of them."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import graphmatch.errors
import graphmatch.graphs.kbert as kbert

PACKAGE = Path(graphmatch.errors.__file__).parent
OLD = {"graphmatch.graphs.kbert_core": ("TreeCore", "Trees", "fold", "STOP_WORDS", "word_finder", "tree_visibility",
                                        "_Layout", "_written"),
       "graphmatch.graphs.kbert_one": ("OneTree",),
       "graphmatch.graphs.kbert_corpus": ("TreeCorpusBuilder", "collated_coverage", "InputError"),
       "graphmatch.graphs.kbert_text": ("KNOWLEDGE_AS", "text_trees"),
       "graphmatch.data.kbert_options": ("TreeOptions", "TOKENIZATIONS"),
       "graphmatch.data.let_options": ("LatticeOptions",),
       "graphmatch.data.relation_options": ("RelationOptions",)}
NEW = {"graphmatch.data.kbert_options": "graphmatch.graphs.kbert.options",
       "graphmatch.data.let_options": "graphmatch.graphs.let_options",
       "graphmatch.data.relation_options": "graphmatch.graphs.relation_options"}


@pytest.mark.parametrize("old", sorted(OLD))
def test_an_old_path_warns_once_and_gives_the_same_names(old):
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
        names = {name: getattr(module, name) for name in OLD[old]}
    deprecations = [w for w in caught if issubclass(w.category, DeprecationWarning) and "graphmatch" in str(w.message)]
    assert len(deprecations) == 1 and old in str(deprecations[0].message)
    new = importlib.import_module(NEW[old]) if old in NEW else kbert
    assert (NEW.get(old) or "graphmatch.graphs.kbert.") in str(deprecations[0].message)
    for name, value in names.items():
        if not name.startswith("_"):
            assert getattr(new, name) is value
    assert set(OLD[old]) - {n for n in OLD[old] if n.startswith("_")} <= set(module.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        module.nothing  # noqa: B018


def test_input_error_is_one_class():
    from graphmatch.graphs.kbert.corpus import InputError

    assert InputError is graphmatch.errors.InputError is kbert.InputError
    assert str(InputError(3, "empty text")) == "input 3: empty text"


def test_the_project_imports_no_old_path():
    old = {name.rsplit(".", 1)[1] for name in OLD}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name in ("graphs", "data") and path.stem in old:
            continue  # the shims themselves
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            names += [f"{node.module}.{a.name}" for a in node.names] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path}:{node.lineno}" for n in names if n in OLD]
    assert found == []


def test_the_numpy_modules_load_without_torch():
    code = ("import sys; from graphmatch.graphs.kbert import TreeCore, tree_visibility, FORMAT_VERSION; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_builder_keeps_its_public_name():
    """Caches are keyed by the builder's class name and its module's FORMAT_VERSION."""
    from graphmatch.data.cached import builder_format

    builder = kbert.SentenceTreeBuilder.__new__(kbert.SentenceTreeBuilder)
    assert builder_format(builder) == {"name": "graphmatch.graphs.kbert.SentenceTreeBuilder",
                                       "format": kbert.FORMAT_VERSION}
