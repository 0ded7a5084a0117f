"""The engine and the tasks read a recipe's sections as typed objects
(:class:`~graphmatch.tasks.recipes.sections.Recipe`: ``recipe.train.batch_size``, ``self.data.root``), never
by string (``config["train"]["batch_size"]``, ``cfg.get("model")``). The plain form lives only at
the edges: reading and resolving a recipe (``tasks/recipes/resolve.py``, ``tasks/recipes/shorten.py``) and typing
it (``tasks/recipes/sections.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import toy_task  # noqa: F401 - registers the "toy" task

from graphmatch.tasks.recipes.resolve import resolve, resolve_recipe
from graphmatch.tasks.recipes.sections import Optim, Recipe, Train

PACKAGE = Path(__file__).resolve().parents[2] / "graphmatch"
SECTIONS = ("data", "model", "optim", "train")
#: where the plain form may be indexed (relative to the package)
EDGES = ("tasks/recipes/resolve.py", "tasks/recipes/shorten.py", "tasks/recipes/sections.py")
#: an expression that holds a recipe's plain form (``config``, ``self.config``, ``cfg``, ``saved``, ...)
RECIPE_LIKE = re.compile(r"(^|[._])(config|cfg|conf|recipe|saved|stored|given|plain)$", re.IGNORECASE)
#: a section's plain form under a name of its own (``self.data_cfg["root"]``)
PLAIN_SECTION = re.compile(r"^(data|model|optim|train)_(cfg|config|conf)$")
TOY = Path(__file__).parent / "toy.yaml"


def _section(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and node.value in SECTIONS else None


def _recipe_like(node: ast.AST) -> bool:
    """A name or attribute that holds a recipe, or a section of one indexed again (``x["model"]``)."""
    if isinstance(node, ast.Subscript) and _section(node.slice):
        return True
    return isinstance(node, (ast.Name, ast.Attribute)) and bool(RECIPE_LIKE.search(ast.unparse(node)))


def _plain_section(node: ast.AST) -> bool:
    named = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else \
        node.arg if isinstance(node, ast.arg) else ""
    return bool(PLAIN_SECTION.match(named))


def _indexed(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        return bool(_section(node.slice)) and _recipe_like(node.value)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and bool(node.args)
            and node.func.attr in ("get", "pop", "setdefault") and bool(_section(node.args[0]))
            and _recipe_like(node.func.value))


def string_sections(source: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every place ``source`` reads a recipe section by its name: a subscript
    (``config["train"]``) or ``get``/``pop``/``setdefault`` (``cfg.get("model")``) on a recipe, or
    a section's plain form kept under a name (``self.data_cfg``, ``train_cfg``)."""
    return sorted((node.lineno, ast.unparse(node)) for node in ast.walk(ast.parse(source))
                  if _plain_section(node) or _indexed(node))


def violations(root: Path) -> list[str]:
    out = []
    for layer in ("engine", "tasks"):
        for path in sorted((root / layer).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if name not in EDGES:
                out += [f"{name}:{line}: {code}" for line, code in string_sections(path.read_text(encoding="utf-8"))]
    return out


def test_engine_and_tasks_read_sections_as_attributes():
    assert violations(PACKAGE) == []


def test_the_check_can_fail(tmp_path):
    (tmp_path / "engine").mkdir()
    (tmp_path / "tasks").mkdir()
    (tmp_path / "engine" / "fitting.py").write_text(
        't = config["train"]\nn = self.config["optim"]["lr"]\nx = cfg["model"]["hidden"]\n'
        'y = saved.get("data")\nsplits["train"], datasets.get("train"), row["model"]\n')
    (tmp_path / "tasks" / "kbert.py").write_text('d = self.config["data"]\np = config["train"]["progress"]\n'
                                                 'r = self.data_cfg["root"]\ndef f(train_cfg): pass\n')
    (tmp_path / "tasks" / "recipes").mkdir()
    (tmp_path / "tasks" / "recipes" / "resolve.py").write_text('t = config["train"]\n')  # an edge
    found = violations(tmp_path)
    assert [f.split(": ", 1)[1] for f in found] == [
        "config['train']", "self.config['optim']", "cfg['model']", "saved.get('data')",
        "self.config['data']", "config['train']", "self.data_cfg", "train_cfg"], found


def test_resolve_gives_the_typed_sections():
    recipe = resolve_recipe(TOY, ["train.epochs=2", "optim.lr=0.01", "train.precision=32"])
    assert isinstance(recipe.train, Train) and isinstance(recipe.optim, Optim)
    assert (recipe.train.epochs, recipe.optim.lr, recipe.train.precision) == (2, 0.01, "32-true")
    assert recipe.config == resolve(TOY, ["train.epochs=2", "optim.lr=0.01", "train.precision=32"])
    assert Recipe.of(recipe) is recipe and Recipe.of(recipe.config) == recipe
    seeded = recipe.with_train(seed=8)
    assert (seeded.train.seed, seeded.config["train"]["seed"], recipe.train.seed) == (8, 8, 7)
    assert seeded.config["optim"] is recipe.config["optim"] and seeded.train.epochs == 2
