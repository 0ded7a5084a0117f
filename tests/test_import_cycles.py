"""No circle among graphmatch's modules: following the top-level imports (``import`` and ``from ...
import`` outside functions) from any module never comes back to it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "graphmatch"


def module_names(root: Path) -> dict[str, Path]:
    """``{dotted name: file}`` of every module under ``root`` (a package ``__init__`` by the package's name)."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name, *path.relative_to(root).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def top_level_imports(path: Path, known: set[str]) -> set[str]:
    """The graphmatch modules ``path`` imports at its top level (``from a import b`` names ``a.b``
    where that is a module, else ``a``); a ``TYPE_CHECKING`` block is not run and not counted."""
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in known:
            subs = {f"{node.module}.{a.name}" for a in node.names} & known
            found |= subs or {node.module}
            found |= {node.module} if len(subs) < len(node.names) else set()
    return found


def cycles(root: Path) -> list[list[str]]:
    """Every circle of top-level imports among the modules under ``root`` (one per strongly
    connected group, by Tarjan's algorithm), each sorted."""
    files = module_names(root)
    graph = {name: top_level_imports(path, set(files)) - {name} for name, path in files.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(PACKAGE) == []


def test_the_check_can_fail(tmp_path):
    pkg = tmp_path / "graphmatch"
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text("from graphmatch.a import y\n")
    (pkg / "a" / "y.py").write_text("import graphmatch.a.x\n")
    (pkg / "z.py").write_text("def f():\n    from graphmatch.a import x\n")  # inside a function: not counted
    (pkg / "w.py").write_text("from graphmatch.z import f\n")
    assert cycles(pkg) == [["graphmatch.a.x", "graphmatch.a.y"]]
