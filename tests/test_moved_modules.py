"""Old module paths keep working for one release: importing one gives one ``DeprecationWarning``
naming the new path, and its names are the new modules' own; the project itself imports none."""

from __future__ import annotations

import ast
import importlib
import re
import sys
import warnings
from pathlib import Path

import pytest

from graphmatch.utils.old_paths import OLD_PATHS

ROOT = Path(__file__).resolve().parents[1]
#: old module -> the module that is now what it was
MOVED = OLD_PATHS  # kept by an import hook, no file left at the old path
#: old module split in several -> {name: the module it now lives in}
SPLIT = {"graphmatch.datafiles": {
    "locate": "graphmatch.io.datafiles", "REGISTRY": "graphmatch.io.datafiles",
    "resolve_path": "graphmatch.io.datafiles",
    "iter_lines": "graphmatch.io.text_files", "read_text": "graphmatch.io.text_files",
    "write_atomically": "graphmatch.io.atomic", "packaged_pretrained": "graphmatch.pretrained.packaged",
    "SHORT_NAMES": "graphmatch.pretrained.packaged",
}}


def _import_fresh(old: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, list[str]]:
    parent = old.rpartition(".")[0]
    if parent in MOVED:  # an old package's own warning comes once, with whichever of its modules is first
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            importlib.import_module(parent)
    monkeypatch.delitem(sys.modules, old, raising=False)
    with pytest.warns(DeprecationWarning) as record:
        module = importlib.import_module(old)
    # the new module's own imports (torch's) may warn too: only graphmatch's warnings count
    return module, [str(w.message) for w in record
                    if issubclass(w.category, DeprecationWarning) and str(w.message).startswith("graphmatch.")]


@pytest.mark.parametrize("old, new", MOVED.items())
def test_an_old_path_warns_once_and_is_the_new_module(old, new, monkeypatch):
    module, messages = _import_fresh(old, monkeypatch)
    assert messages == [f"{old} is moved to {new}; the old path goes in the next release"]
    assert module is importlib.import_module(new)


@pytest.mark.parametrize("old", SPLIT)
def test_a_split_module_warns_once_and_gives_the_new_names(old, monkeypatch):
    module, messages = _import_fresh(old, monkeypatch)
    assert len(messages) == 1 and messages[0].startswith(f"{old} is moved to ")
    for name, new in SPLIT[old].items():
        assert getattr(module, name) is getattr(importlib.import_module(new), name), name


def old_imports(paths: list[Path], root: Path = ROOT) -> list[str]:
    """``file:line: module`` (relative to ``root``) for every import of an old path in ``paths``."""
    old = tuple(MOVED) + tuple(SPLIT)
    out = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            out += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names if n in old]
    return out


def test_the_project_imports_no_old_path():
    shims = {ROOT / "graphmatch" / Path(*m.split(".")[1:]).with_suffix(".py") for m in (*MOVED, *SPLIT)}
    paths = [p for folder in ("graphmatch", "tests", "benchmarks") for p in sorted((ROOT / folder).rglob("*.py"))
             if p not in shims and p != Path(__file__).resolve()]
    assert old_imports(paths) == []


def test_the_old_path_check_can_fail(tmp_path):
    (tmp_path / "x.py").write_text("from graphmatch.engine import metrics\n"
                                   "def f():\n    import graphmatch.engine.semeval\n", encoding="utf-8")
    assert old_imports([tmp_path / "x.py"], tmp_path) == ["x.py:1: graphmatch.engine.metrics",
                                                          "x.py:3: graphmatch.engine.semeval"]


def test_pytest_turns_an_old_path_into_an_error():
    """``pyproject.toml``'s ``filterwarnings`` makes the warning an error in the suite."""
    import warnings

    from graphmatch.utils.deprecated import moved_message

    with pytest.raises(DeprecationWarning, match=re.escape("graphmatch.engine.metrics is moved to")):
        warnings.warn(moved_message("graphmatch.engine.metrics", "graphmatch.metrics"), DeprecationWarning,
                      stacklevel=1)


@pytest.mark.parametrize("old, new", OLD_PATHS.items())
def test_a_path_kept_by_the_hook_has_no_file_and_keeps_the_new_modules_identity(old, new, monkeypatch):
    assert not (ROOT / Path(*old.split("."))).with_suffix(".py").exists()
    module, _ = _import_fresh(old, monkeypatch)
    assert module.__name__ == module.__spec__.name == new  # the old name's spec is not left on it
    parent, _, name = old.rpartition(".")
    assert getattr(importlib.import_module(parent), name) is module  # from parent import name


def test_the_hook_warns_once_per_fresh_interpreter():
    import subprocess

    code = ("import warnings\nwarnings.simplefilter('always')\nwith warnings.catch_warnings(record=True) as w:\n"
            "    import graphmatch.engine.config\n    from graphmatch.engine.config import resolve\n"
            "    import graphmatch.engine.config as again\n"
            "print(sum(str(x.message).startswith('graphmatch.engine.config is moved') for x in w))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["1"]


#: (module, old name) -> new name: "checkpoint" now means a run's training checkpoint only
RENAMED = {
    ("graphmatch.pretrained", "resolve_checkpoint"): "resolve_pretrained",
    ("graphmatch.pretrained", "Checkpoint"): "PretrainedWeights",
    ("graphmatch.pretrained.record", "resolve_checkpoint"): "resolve_pretrained",
    ("graphmatch.pretrained.files", "Checkpoint"): "PretrainedWeights",
    ("graphmatch.pretrained.files", "not_a_checkpoint"): "not_pretrained",
    ("graphmatch.text.pretrained", "checkpoint_folder"): "pretrained_folder",
    ("graphmatch.text.pretrained", "checkpoint_vocab"): "pretrained_vocab",
    ("graphmatch.text.pretrained", "checkpoint_tokenizer"): "pretrained_tokenizer",
    ("graphmatch.nn.pretrained", "as_checkpoint"): "as_pretrained",
    ("graphmatch.nn.pretrained", "load_checkpoint"): "load_weights",
}


@pytest.mark.parametrize("where, new", RENAMED.items())
def test_an_old_name_warns_and_is_the_new_one(where, new):
    module, old = importlib.import_module(where[0]), where[1]
    with pytest.warns(DeprecationWarning, match=re.escape(f"{where[0]}.{old} is moved to {where[0]}.{new}")):
        assert getattr(module, old) is getattr(module, new)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018


def test_an_old_method_name_warns_and_calls_the_new_one(monkeypatch):
    from graphmatch.nn.mask_transformer import MaskTransformerEncoder
    from graphmatch.pretrained import Pretrained

    monkeypatch.setattr(Pretrained, "read_weights", lambda self: ("weights of", self))
    with pytest.warns(DeprecationWarning, match=r"graphmatch\.pretrained\.record\.Pretrained\.checkpoint is moved to "
                                                r"graphmatch\.pretrained\.record\.Pretrained\.read_weights"):
        found = object.__new__(Pretrained)
        assert found.checkpoint() == ("weights of", found)
    assert MaskTransformerEncoder.load_checkpoint.__name__ == "load_checkpoint"
