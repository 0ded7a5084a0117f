"""The wheel carries its recipes and sample data, and works installed outside the checkout."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from wheel_install import outside_env

REPO = Path(__file__).resolve().parents[1]
#: checkout folder → the package its files are installed as
DATA_PACKAGES = {"recipes": "graphmatch.recipes", "datasets/samples": "graphmatch.samples"}


def _config() -> dict:
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]


def test_packages_list_every_folder():
    """pyproject.toml lists its packages by hand: every code folder and data folder is in it."""
    expected = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "graphmatch").rglob("__init__.py")}
    for folder, package in DATA_PACKAGES.items():
        root = REPO / folder
        expected |= {package} | {f"{package}." + ".".join(d.relative_to(root).parts)
                                 for d in root.rglob("*") if d.is_dir() and d.name != "__pycache__"}
    config = _config()
    assert set(config["packages"]) == expected
    assert config["package-dir"] == {package: folder for folder, package in DATA_PACKAGES.items()}
    data = config["package-data"]
    for folder, package in DATA_PACKAGES.items():
        for f in (REPO / folder).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                owner = ".".join([package, *f.parent.relative_to(REPO / folder).parts])
                assert any(f.match(pattern) for pattern in data.get(owner, [])), f"{f} is not package data"



def test_the_package_data_inside_the_code_folders_is_listed():
    """A file of the code folders that is not Python (the data-file registry ``datafiles.json``,
    the packaged WordNet) is package data, so the wheel carries it."""
    data = _config()["package-data"]
    for f in (REPO / "graphmatch").rglob("*"):
        if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".py", ".pyc"):
            package = next(d for d in f.parents if (d / "__init__.py").is_file())
            owner = ".".join(package.relative_to(REPO).parts)
            assert any(f.match(pattern) for pattern in data.get(owner, [])), f"{f} is not package data"

@pytest.mark.slow
def test_installed_wheel_runs_the_demo_outside_the_checkout(tmp_path, installed_wheel):
    wheel, venv, site = installed_wheel
    names = zipfile.ZipFile(wheel).namelist()
    assert "graphmatch/recipes/kbert/chnsenticorp_hownet_quick.yaml" in names and "graphmatch/datafiles.json" in names
    assert "graphmatch/samples/sentiment/train.tsv" in names and "graphmatch/samples/kg/sample.spo" in names
    assert {f"graphmatch/knowledge/data/{f}" for f in ("wordnet.spo.gz", "noun.exc", "WORDNET_LICENSE.txt")} \
        <= set(names)

    python = venv / "bin" / "python"

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = outside_env(tmp_path / "cache")
    check = ("import graphmatch, sys\n"
             "from graphmatch.tasks.recipes.resolve import find_recipe, resolve\n"
             "from graphmatch.io.datafiles import samples_dir\n"
             "print(graphmatch.__file__); print(find_recipe('kbert/chnsenticorp_hownet_quick')); print(samples_dir())\n"
             "print(resolve('let/lcqmc_quick')['task'])\n"
             "from graphmatch.knowledge import KnowledgeGraph\n"
             "print(KnowledgeGraph.load('wordnet').subjects['ice cream'])\n")
    out = subprocess.run([python, "-c", check], cwd=work, env=env, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    installed = Path(site) / "graphmatch"
    recipe = installed / "recipes" / "kbert" / "chnsenticorp_hownet_quick.yaml"
    assert out == [str(installed / "__init__.py"), str(recipe), str(installed / "samples"), "let",
                   "[('type', 'food'), ('is a', 'frozen dessert')]"]  # kg: wordnet, packaged
    demo = subprocess.run([venv / "bin" / "graphmatch", "demo", "--epochs", "1", "--out", "demo", "--no-progress"],
                          cwd=work, env=env, capture_output=True, text=True)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "test accuracy" in demo.stdout and (work / "demo" / "run" / "COMPLETE").is_file()
    assert (work / "demo" / "kbert_graph.png").is_file() and not (REPO / "build").exists()
    # a sample recipe names its data as datasets/samples/...: found inside the installed package
    zh = subprocess.run([venv / "bin" / "graphmatch", "train", "relation/sample_zh_att_blstm", "--out", "zh",
                         "--set", "train.epochs=1"], cwd=work, env=env, capture_output=True, text=True)
    assert zh.returncode == 0, zh.stderr[-3000:]
    assert (work / "zh" / "COMPLETE").is_file()


def test_the_wheel_carries_its_license_type_hints_version_and_urls(installed_wheel):
    import graphmatch

    wheel = installed_wheel[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    info = f"graphmatch-{graphmatch.__version__}.dist-info"
    assert wheel.name.startswith(f"graphmatch-{graphmatch.__version__}-")  # one version, written once
    assert "graphmatch/py.typed" in names and f"{info}/licenses/LICENSE" in names
    meta = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    fields = [line.split(": ", 1) for line in meta.split("\n\n", 1)[0].splitlines() if ": " in line]
    urls = dict(value.split(", ", 1) for key, value in fields if key == "Project-URL")
    assert set(urls) >= {"Homepage", "Documentation", "Source", "Issues", "Changelog"}
    assert all(url.startswith("https://github.com/graphmatch/graphmatch") for url in urls.values())
    assert ["License-File", "LICENSE"] in fields and ["Version", graphmatch.__version__] in fields
    license_text = zipfile.ZipFile(wheel).read(f"{info}/licenses/LICENSE").decode()
    assert license_text == (REPO / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "Copyright (c) 2026 the graphmatch developers" in license_text


def test_version_and_changelog(capsys):
    import graphmatch
    from graphmatch.cli.main import main

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"graphmatch {graphmatch.__version__}\n"
    out = subprocess.run([sys.executable, "-m", "graphmatch.cli.main", "--version"], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(REPO)}).stdout
    assert out == f"graphmatch {graphmatch.__version__}\n"
    changelog = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    assert changelog.startswith("# Changelog") and f"\n## {graphmatch.__version__}\n" in changelog
    assert (REPO / "graphmatch" / "py.typed").is_file()
