"""The package's layers point one way: text → knowledge → graphs → data → nn → models → metrics →
tasks → engine → viz → cli. A module may import its own layer and the ones before it, never a later one
(imports inside functions included); ``nn`` knows nothing of text, knowledge, graphs or data."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "graphmatch"
# the base: each may import the others
BASE = ("errors", "utils", "io", "datafiles", "pretrained")
ORDER = (*BASE, "text", "knowledge", "graphs", "data", "nn", "models", "metrics", "tasks", "engine", "viz", "cli")
RANK = {name: max(i - len(BASE) + 1, 0) for i, name in enumerate(ORDER)}
FORBIDDEN = {"nn": {"text", "knowledge", "graphs", "data"}}


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "graphmatch" and len(parts) > 1 else None


def imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every absolute graphmatch import in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # ``from graphmatch.x.y import z`` names layer x; ``from graphmatch import x`` names x
            names = [node.module] if layer_of(node.module) else [f"{node.module}.{a.name}" for a in node.names]
            found += [(node.lineno, n) for n in names if layer_of(n) in RANK]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if layer_of(a.name) in RANK]
    return found


def violations(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        me = parts[0]
        if me not in RANK:
            continue
        for line, module in imports(path):
            target = layer_of(module)
            if RANK[target] > RANK[me] or target in FORBIDDEN.get(me, ()):
                out.append(f"{path.relative_to(root.parent)}:{line}: {me} imports {module} ({target})")
    return out


def test_every_module_belongs_to_a_layer():
    modules = [p for p in PACKAGE.iterdir() if p.is_dir() or p.suffix == ".py"]  # not py.typed, datafiles.json
    assert sorted(p.stem if p.is_file() else p.name for p in modules
                  if p.name not in ("__pycache__", "__init__.py")) == sorted(ORDER)


def test_layers_point_one_way():
    assert violations(PACKAGE) == []


def test_the_check_can_fail(tmp_path):
    pkg = tmp_path / "graphmatch"
    (pkg / "graphs").mkdir(parents=True)
    (pkg / "nn").mkdir()
    (pkg / "graphs" / "x.py").write_text("def f():\n    from graphmatch.engine.runner import train\n")
    (pkg / "nn" / "y.py").write_text("from graphmatch.graphs import kbert\nfrom graphmatch import ragged\n")
    found = violations(pkg)
    assert len(found) == 2 and "graphs imports graphmatch.engine.runner" in found[0] and "nn imports" in found[1]
