"""The modules of ``graphmatch.text`` import each other without a cycle (imports inside
functions included)."""

import ast
from pathlib import Path

TEXT = Path(__file__).resolve().parents[2] / "graphmatch" / "text"


def imported(path: Path, package: str) -> set[str]:
    """The modules of ``package`` that ``path`` imports, by their last name."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == package:
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(f"{package}."):
            names.add(node.module.split(".")[len(package.split("."))])
        elif isinstance(node, ast.Import):
            names.update(a.name.split(".")[len(package.split("."))] for a in node.names
                         if a.name.startswith(f"{package}."))
    return names


def cycles(folder: Path, package: str) -> list[list[str]]:
    """Every import cycle among the modules of ``folder`` (one path per cycle found)."""
    modules = {p.stem: p for p in folder.glob("*.py") if p.stem != "__init__"}
    edges = {m: sorted(imported(p, package) & (modules.keys() - {m})) for m, p in modules.items()}
    found, done = [], set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            found.append(path[path.index(module):] + [module])
            return
        if module in done:
            return
        for target in edges[module]:
            visit(target, path + [module])
        done.add(module)

    for module in sorted(modules):
        visit(module, [])
    return found


def test_the_text_layer_has_no_import_cycle():
    assert cycles(TEXT, "graphmatch.text") == []


def test_the_check_finds_a_cycle(tmp_path):
    (tmp_path / "a.py").write_text("from graphmatch.text.b import x\n")
    (tmp_path / "b.py").write_text("def f():\n    from graphmatch.text import a\n")
    assert cycles(tmp_path, "graphmatch.text") == [["a", "b", "a"]]
