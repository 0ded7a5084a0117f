"""The wheel of the checkout, installed into a fresh venv outside it (``tests/test_packaging.py``,
``tests/test_doc_commands.py``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def build_wheel(dest: Path) -> Path:
    """``pip wheel`` of a copy of the checkout's package files (the checkout gets no build/)."""
    src = dest / "src"
    src.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md", "LICENSE", "graphmatch", "recipes"):
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy)(REPO / name, src / name)
    shutil.copytree(REPO / "datasets" / "samples", src / "datasets" / "samples")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dest),
                    str(src)], check=True, capture_output=True)
    return next(dest.glob("graphmatch-*.whl"))


def install_wheel(wheel: Path, venv: Path) -> Path:
    """A fresh venv at ``venv`` with ``wheel`` installed, which sees this environment's installed
    dependencies (not its graphmatch: the editable install's .pth hook is not run for a directory
    added by path); returns its site-packages folder."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a checkout on it reads as installed
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q", str(wheel)],
                   check=True, capture_output=True, env=env)
    return Path(site)


def outside_env(cache: Path) -> dict[str, str]:
    """This process's environment without the checkout on the path or a data folder, with ``cache``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GRAPHMATCH_DATA")}
    env["GRAPHMATCH_CACHE"] = str(cache)
    return env
