"""The documentation runs from a fresh clone: no paths of a developer's machine in it."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md")),
        *sorted((REPO / "datasets").glob("*.md")), *sorted((REPO / "recipes").rglob("*.yaml"))]
#: an absolute path into a checkout or a scratch folder of this machine
MACHINE_PATH = re.compile(r"(?<![\w.])/(work|tmp|root|home)/")


def test_no_machine_paths_in_the_docs():
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in DOCS
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if MACHINE_PATH.search(line)]
    assert found == []


def test_the_readme_picture_is_what_show_draws():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    picture = re.search(r"!\[A K-BERT sentence tree and its visible matrix\]\((\S+)\)", readme).group(1)
    assert (REPO / picture).is_file() and "graphmatch show" in readme.split(picture, 1)[1][:600]


def test_the_key_reference_is_generated_from_the_declarations():
    """``docs/recipes.md`` is ``graphmatch recipe --keys``: regenerate it after changing a key."""
    from graphmatch.engine.config import key_reference

    assert (REPO / "docs" / "recipes.md").read_text(encoding="utf-8") == key_reference(), \
        "docs/recipes.md is stale: run graphmatch recipe --keys > docs/recipes.md"
