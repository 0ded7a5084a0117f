"""Run folders say what made them: versions, the git commit (and whether the checkout differed
from it) and the cache keys of the processed data, in metrics.json and summary.md."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from engine_helpers import TOY_QUICK

import graphmatch
from graphmatch.engine import train
from graphmatch.engine.runs import seeds_provenance
from graphmatch.engine.runs.provenance import (
    LIBRARIES,
    MACHINE_FIELDS,
    git_state,
    machine,
    machine_difference,
    provenance,
)

CHECKOUT = Path(graphmatch.__file__).resolve().parents[1]


def git(*args: str, cwd: Path = CHECKOUT) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True).stdout.strip()


def in_checkout() -> bool:
    try:
        return git("rev-parse", "--show-toplevel") != ""
    except (OSError, subprocess.CalledProcessError):
        return False


def test_a_run_records_what_made_it(trained_run) -> None:
    run_dir, _ = trained_run
    record = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))["provenance"]
    assert {"graphmatch", "commit", "dirty", "python", "caches", *LIBRARIES} <= set(record)
    assert record["graphmatch"] == graphmatch.__version__ and record["torch"]
    assert record["caches"] == {"train": "toy-0-train-128", "dev": "toy-0-dev-64", "test": "toy-0-test-64"}
    if in_checkout():  # the tests run from a checkout here; from an installed wheel both are None
        assert record["commit"] == git("rev-parse", "HEAD")
        # a tracked change counts, Markdown aside (a table written into docs/ changes no figure)
        assert record["dirty"] == bool(git("status", "--porcelain", "--untracked-files=no", "--", ".",
                                           ":(exclude,glob)**/*.md"))
    else:
        assert record["commit"] is None and record["dirty"] is None
    summary = (run_dir / "summary.md").read_text(encoding="utf-8")
    made_by = next(line for line in summary.splitlines() if line.startswith("Made by graphmatch "))
    assert f"torch {record['torch']}" in made_by
    assert (record["commit"] or "no git commit")[:12] in made_by
    assert "train `toy-0-train-128`, dev `toy-0-dev-64`, test `toy-0-test-64`" in summary


def test_seeds_record_whether_one_commit_made_them(tmp_path: Path) -> None:
    run = train(TOY_QUICK, ["train.epochs=1"], tmp_path / "seeds", seeds=2)
    agg = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["provenance"]
    seeds = [json.loads((run / f"seed-{s}" / "metrics.json").read_text())["provenance"] for s in (7, 8)]
    assert agg["one_commit"] is True and agg["commits"] == [seeds[0]["commit"]] * 2
    assert agg["commit"] == seeds[0]["commit"] and agg["caches"] == seeds[0]["caches"]
    assert "Made by graphmatch" in (run / "summary.md").read_text(encoding="utf-8")
    # seeds of different commits (one resumed after a change, say) name no single commit
    other = {**seeds[1], "commit": "0" * 40}
    mixed = seeds_provenance([{"provenance": seeds[0]}, {"provenance": other}])
    assert mixed["one_commit"] is False and mixed["commit"] is None and mixed["dirty"] is None
    assert mixed["commits"] == [seeds[0]["commit"], "0" * 40]
    assert seeds_provenance([{"provenance": seeds[0]}, {}])["one_commit"] is False  # a seed of older code
    # one commit, one seed trained with uncommitted changes: that commit, dirty
    partly = seeds_provenance([{"provenance": {**seeds[0], "dirty": False}},
                               {"provenance": {**seeds[1], "dirty": True}}])
    assert partly["one_commit"] is False and partly["commit"] == seeds[0]["commit"] and partly["dirty"] is True


def test_git_state_of_a_checkout_clean_and_dirty(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / "code.py").write_text("x = 1\n")
    git("add", "code.py", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "one", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    assert git_state(repo) == {"commit": head, "dirty": False}
    (repo / "notes.txt").write_text("untracked files do not change the code\n")
    assert git_state(repo) == {"commit": head, "dirty": False}
    (repo / "docs").mkdir()
    (repo / "docs" / "results.md").write_text("a table\n")
    git("add", "docs/results.md", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "two", cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    (repo / "docs" / "results.md").write_text("a table written while other runs train\n")
    assert git_state(repo) == {"commit": head, "dirty": False}  # Markdown changes no figure
    (repo / "code.py").write_text("x = 2\n")
    assert git_state(repo) == {"commit": head, "dirty": True}
    assert provenance({"train": "k"}, where=repo)["commit"] == head


def test_git_state_outside_a_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # never look above tmp_path
    assert git_state(tmp_path) == {"commit": None, "dirty": None}
    record = provenance(None, where=tmp_path)
    assert record["commit"] is None and record["caches"] == {} and record["graphmatch"] == graphmatch.__version__


def test_the_provenance_records_the_machine() -> None:
    """The CPU, the cores and torch's BLAS and oneDNN builds: what a difference between machines
    comes from (issue 31), and the task's environment (LET: its segmenters)."""
    import torch

    record = provenance({"train": "k"}, environment={"segmenters": {"jieba": "0.42.1"}})
    found = record["machine"]
    assert set(MACHINE_FIELDS) <= set(found) and found == machine()
    assert found["cpu"] and found["cores"] >= 1 and found["blas"] in torch.__config__.show()
    assert (found["onednn"] is not None) == torch.backends.mkldnn.is_available()
    assert record["segmenters"] == {"jieba": "0.42.1"} and record["caches"] == {"train": "k"}
    assert machine_difference(found, found) == []
    other = {**found, "cpu": "Another CPU", "cores": 64}
    assert machine_difference(other, found) == [f"cpu: Another CPU → {found['cpu']}",
                                                f"cores: 64 → {found['cores']}"]
    assert machine_difference(None, found) == ["not recorded"]


def test_verify_says_whether_a_difference_comes_with_another_machine() -> None:
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("results", CHECKOUT / "benchmarks" / "results.py")
    results = sys.modules["results"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results)
    here = machine()
    two, three = {"jieba": "0.42.1", "thulac": "0.2.2"}, {"jieba": "0.42.1", "thulac": "0.2.2", "pkuseg": "0.0.25"}
    note = results.environment_note({"machine": {**here, "cpu": "Another CPU"}, "segmenters": two},
                                    {"machine": here, "segmenters": three}, here)
    assert note == (f"another machine (cpu: Another CPU → {here['cpu']}); segmenters reported: jieba 0.42.1, "
                    "thulac 0.2.2; retrained: jieba 0.42.1, thulac 0.2.2, pkuseg 0.0.25")
    assert results.environment_note({"machine": here}, {}, here).startswith("same machine; segmenters reported: "
                                                                           "not recorded")
    assert results.environment_note({}, {}, here).startswith("another machine (not recorded)")


def test_the_summary_line_names_the_machine_and_segmenters() -> None:
    from graphmatch.engine.runs.provenance import describe

    record = provenance(environment={"segmenters": {"jieba": "0.42.1"}})
    line = describe(record)
    box = record["machine"]
    assert "segmenters jieba 0.42.1" in line and f"on {box['cpu']} ({box['cores']} cores, BLAS {box['blas']}" in line
