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
    from graphmatch.tasks.recipes.resolve import key_reference

    assert (REPO / "docs" / "recipes.md").read_text(encoding="utf-8") == key_reference(), \
        "docs/recipes.md is stale: run graphmatch recipe --keys > docs/recipes.md"


#: the pages a user reads (CONTRIBUTING.md is for those who change the code)
USER_PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
#: a command that runs only in a checkout: its scripts, its Makefile, its venv, its git history
CHECKOUT_COMMAND = re.compile(r"(^|[\s(=])(benchmarks/\w|make \w|\.venv/|PYTHONPATH=\.|git (show|worktree|clone)\b)",
                              re.M)
NEEDS_CHECKOUT = re.compile(r"needs? a checkout", re.I)


def test_user_pages_name_no_issues():
    """Which issue asked for what is history: it goes to CHANGELOG.md, not to the user pages."""
    found = [f"{p.relative_to(REPO)}:{n}: {line.strip()}" for p in USER_PAGES
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\bissues? #?\d+", line, re.I)]
    assert found == []


def test_commands_that_need_a_checkout_say_so_where_they_render():
    """A block that runs the checkout's scripts, Makefile or history is marked in visible text:
    a "needs a checkout" note in the few lines before it, or in the page's opening section (an
    HTML comment such as a doc-test marker does not render)."""
    unmarked = []
    for page in USER_PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        opening = "\n".join(lines[:next((i for i, line in enumerate(lines) if line.startswith("## ")), len(lines))])
        i = 0
        while i < len(lines):
            if lines[i].startswith("```"):
                end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
                before = [line for line in lines[max(0, i - 6):i] if not line.lstrip().startswith("<!--")][-4:]
                if CHECKOUT_COMMAND.search("\n".join(lines[i + 1:end])) and not NEEDS_CHECKOUT.search(opening) \
                        and not NEEDS_CHECKOUT.search("\n".join(before)):
                    unmarked.append(f"{page.relative_to(REPO)}:{i + 1}")
                i = end
            i += 1
    assert unmarked == []
