"""Where data files come from.

Public files: an explicit ``root`` → ``$GRAPHMATCH_DATA`` → a checked download. Every public
file the project reads is registered in ``graphmatch/datafiles.json`` by its path relative
to a data root (the same layout as the project's shared data folder), with the public URL it can
be fetched from and the sha256 of the released file. ``locate("kbert/kgs/HowNet.spo")`` returns
a local path or raises :class:`DataFileMissing`, whose message names the file, the URL and the
variable.

A user's own data path (``data.train=bq/train.csv``, a dataset folder) goes through
:func:`resolve_path`: an absolute path is taken as it is; a relative one is looked up in the
working folder first, then under the data roots (``root``, then ``$GRAPHMATCH_DATA``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import urllib.request
from pathlib import Path

from graphmatch.io.atomic import write_atomically

ENV_VAR = "GRAPHMATCH_DATA"
#: where the package's own files live: a checkout (recipes/, datasets/samples/ beside the
#: package) or an installed wheel (graphmatch/recipes, graphmatch/samples)
_PACKAGE = Path(__file__).resolve().parents[1]
CACHE_DIR = Path(os.environ.get("GRAPHMATCH_CACHE", Path.home() / ".cache" / "graphmatch"))

#: the registered files (relative path → ``{"url": public URL or null, "sha256": of the released file}``)
REGISTRY_FILE = _PACKAGE / "datafiles.json"


def _read_registry(path: Path) -> dict[str, tuple[str | None, str]]:
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    return {relpath: (entry["url"], entry["sha256"]) for relpath, entry in entries.items()}


#: relative path → (public URL or None, sha256 of the released file), read from :data:`REGISTRY_FILE`
REGISTRY: dict[str, tuple[str | None, str]] = _read_registry(REGISTRY_FILE)

LCQMC_NOTE = (
    "LCQMC is distributed by its authors under research terms (http://icrc.hitsz.edu.cn/info/1037/1146.htm); "
    "save train/dev/test as text_a\\ttext_b\\tlabel TSV files under <root>/lcqmc/"
)


class DataFileMissing(FileNotFoundError):
    """A data file is not present locally and could not be downloaded."""


def sha256(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str | os.PathLike) -> str:
    """The sha256 of a file's content, computed once per process for each (path, size, mtime)."""
    st = os.stat(path)
    return _file_digest(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=256)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    return sha256(path)


def data_root(root: str | os.PathLike | None = None) -> Path | None:
    """The first data root in force: ``root`` if given, else ``$GRAPHMATCH_DATA``, else ``None``."""
    roots = data_roots(root)
    return roots[0] if roots else None


def data_roots(root: str | os.PathLike | None = None) -> list[Path]:
    """Every data root searched, in order: ``root`` (if given), then ``$GRAPHMATCH_DATA`` (if set).
    A ``root`` given that is not a folder is a one-line :class:`FileNotFoundError`, never a silent
    fall-back to ``$GRAPHMATCH_DATA``."""
    if root is not None and str(root) != "" and not Path(root).is_dir():
        raise FileNotFoundError(f"data root {root} (data.root, --data-dir) is not a folder")
    env = os.environ.get(ENV_VAR)
    found = [Path(r) for r in (root, env) if r is not None and str(r) != ""]
    return list(dict.fromkeys(found))


def locate(relpath: str, root: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Return a local path for ``relpath`` (e.g. ``"kbert/kgs/HowNet.spo"``).

    Looks in ``root``, then in ``$GRAPHMATCH_DATA`` (also when ``root`` is given but lacks the
    file), then in the download cache; a registered file missing from all of them is downloaded
    from its public URL and checked against its sha256. Raises :class:`DataFileMissing` naming
    the file, the URL and the variable.
    """
    roots = data_roots(root)
    for base in roots:
        if (base / relpath).is_file():
            return base / relpath
    cached = CACHE_DIR / relpath
    if cached.is_file():
        return cached
    url, digest = REGISTRY.get(relpath, (None, None))
    looked = " and ".join(str(b / relpath) for b in roots) or f"(no root given and ${ENV_VAR} unset)"
    if url is None or not download:
        how = f"download it from {url}" if url else (LCQMC_NOTE if relpath.startswith("lcqmc/") else "")
        raise DataFileMissing(
            f"data file {relpath!r} not found: looked at {looked} and {cached}. "
            f"Set ${ENV_VAR} (or pass root=) to a folder that holds it, or {how or 'provide it yourself'}."
        )
    try:
        _download(url, cached, digest)
    except OSError as err:
        raise DataFileMissing(
            f"data file {relpath!r} not found at {looked}, and downloading {url} failed ({err}). "
            f"Download it by hand into ${ENV_VAR}/{relpath}, or set ${ENV_VAR} to a folder that holds it."
        ) from err
    return cached


def _download(url: str, dest: Path, digest: str | None) -> None:
    def fetch(tmp: str) -> None:
        with urllib.request.urlopen(url, timeout=30) as resp, open(tmp, "wb") as f:
            shutil.copyfileobj(resp, f)
        got = sha256(tmp)
        if digest is not None and got != digest:
            raise OSError(f"sha256 mismatch for {url}: expected {digest}, got {got}")

    write_atomically(dest, fetch)


def package_folder(checkout: str, installed: str) -> Path:
    """A folder of the project's own files: ``checkout`` (relative to a checkout's root) when
    graphmatch runs from a checkout, else ``installed`` inside the installed package."""
    here = _PACKAGE.parent / checkout
    return here if here.is_dir() else _PACKAGE / installed




def samples_dir() -> Path:
    """The project's small sample data (``datasets/samples`` in a checkout)."""
    return package_folder("datasets/samples", "samples")


def resolve_path(path: str | os.PathLike, root: str | os.PathLike | None = None, what: str = "file") -> Path:
    """A user's data path: absolute → as it is; relative → the working folder if it exists
    there, else the first data root (``root``, then ``$GRAPHMATCH_DATA``) that holds it; a
    ``datasets/samples/...`` path (what the sample recipes name) also finds the installed samples.

    A path found nowhere is a :class:`FileNotFoundError` naming every place looked at.
    """
    path = Path(path)
    if path.is_absolute() or path.exists():
        if not path.exists():
            raise FileNotFoundError(f"{what} {path} does not exist")
        return path
    roots = data_roots(root)
    for base in roots:
        if (base / path).exists():
            return base / path
    if path.parts[:2] == ("datasets", "samples") and samples_dir().joinpath(*path.parts[2:]).exists():
        return samples_dir().joinpath(*path.parts[2:])
    looked = ", ".join([str(Path.cwd() / path)] + [str(b / path) for b in roots])
    hint = "" if roots else f" (a relative path is also looked up under data.root and ${ENV_VAR}, neither set)"
    raise FileNotFoundError(f"{what} {path} not found: looked at {looked}{hint}")
