"""The base of every dataset with a processed cache: one key, one folder layout, no stale reads.

A :class:`CachedDataset` is given the graph builder its graphs are made with and the data files
they are made from. Its arguments mean the same in every family: ``root`` is the data root
(where source files are looked up, as ``$GRAPHMATCH_DATA``), ``cache`` the folder of processed
files (default ``$GRAPHMATCH_CACHE/processed/<family>``).

The cache key (:meth:`CachedDataset.cache_key`, hashed into :attr:`CachedDataset.cache_digest`)
holds the builder's options and its module's ``FORMAT_VERSION``, the sha256 of every input file
(memoised per path, size and mtime: :func:`~graphmatch.io.datafiles.file_digest`), the dataset's
own options and format version, and :data:`CACHE_FORMAT`. Processed files go to
``<cache>/<stem>-<digest[:16]>/`` with a ``manifest.json`` written last, which records the key
and the size, mtime and sha256 of each file. A folder whose manifest is missing or records
another key (another builder or cache format), whose files are truncated, altered (a file with
another mtime is hashed again and compared) or unreadable, is rebuilt with one line on stderr
saying why; it is never used. (A file changed in place with its size and mtime kept is hashed
only when it cannot be loaded: a full hash of every processed file at every start would cost
about 0.4 s per 100 MB.)

A cache folder can come from anyone (a shared cache, a run folder whose ``data.cache_dir`` points
into it), so nothing in it runs code: the manifest covers every file of the folder, and a folder
holding any other file (PyG's ``pre_transform.pt`` and ``pre_filter.pt`` included) is stale and
rebuilt empty first. PyG's own processing (``Dataset._process``, which unpickles those two files)
is never used: this class defines no ``process``, builds its files itself, and reads ``data.pt``
with ``torch.load(weights_only=True)`` alone, never retried without it (as PyG's ``fs.torch_load``
would be).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import torch
from torch_geometric.data import Data, InMemoryDataset

from graphmatch.io.atomic import write_atomically
from graphmatch.io.datafiles import CACHE_DIR, file_digest

#: layout of a cache folder (the manifest and how the key is made); bump when it changes
CACHE_FORMAT = 1
MANIFEST = "manifest.json"


def builder_format(builder: object) -> dict[str, Any]:
    """``{"name", "format"}`` of a graph builder: its class and its module's ``FORMAT_VERSION``."""
    cls = type(builder)
    module = sys.modules[cls.__module__]
    return {"name": f"{cls.__module__}.{cls.__qualname__}", "format": module.FORMAT_VERSION}


class CachedDataset(InMemoryDataset):
    r"""An :class:`~torch_geometric.data.InMemoryDataset` whose processed files are keyed by
    everything they depend on (see the module documentation).

    Subclasses set :attr:`family` and :attr:`format_version`, and implement :meth:`builder_key`
    (the builder and its options), :meth:`input_files`, :meth:`options`, :meth:`stored_files`,
    :meth:`write` (which writes every file of :meth:`stored_files` into :attr:`processed_dir`)
    and :meth:`load_cache` (which reads them). They set what the key needs, then call
    ``super().__init__``, which leaves the cache loaded.

    Args:
        root: the data root (source files are looked up there, then under ``$GRAPHMATCH_DATA``).
        cache: the folder of processed files (default ``$GRAPHMATCH_CACHE/processed/<family>``).
    """

    #: the cache subfolder of this family
    family: ClassVar[str]
    #: bump when what this dataset stores beside the builder's graphs changes
    format_version: ClassVar[int] = 1

    def __init__(self, root: str | os.PathLike | None = None, cache: str | os.PathLike | None = None,
                 transform=None, force_reload: bool = False, log: bool = False) -> None:
        self.data_root = Path(root) if root is not None else None
        self.cache = Path(cache) if cache is not None else CACHE_DIR / "processed" / self.family
        if force_reload:
            self._clear()
        else:
            self._drop_if_stale()
        # PyG's ``root`` is the folder its processed files live under: here the cache folder. It
        # processes nothing (this class defines no ``process``): the cache is built here.
        super().__init__(str(self.cache), transform=transform, force_reload=force_reload, log=log)
        if not all(os.path.isfile(path) for path in self.processed_paths):
            self.build_cache()
        self._load_or_rebuild(self.load_cache)

    # ------------------------------------------------------------- the key
    def builder_key(self) -> dict[str, Any]:
        """The builder (:func:`builder_format`) and the options that change its graphs."""
        raise NotImplementedError

    def input_files(self) -> Mapping[str, str | os.PathLike | None]:
        """Name → path of every file the graphs are made from (``None``: not used)."""
        raise NotImplementedError

    def options(self) -> dict[str, Any]:
        """The dataset's own options that change what it stores (split, limit, format ...)."""
        raise NotImplementedError

    def stem(self) -> str:
        """A readable prefix of the cache folder's name."""
        return self.family

    def cache_key(self) -> dict[str, Any]:
        """Everything the stored files depend on (computed once per dataset object)."""
        return json.loads(self._key_text)

    @functools.cached_property
    def _key_text(self) -> str:
        key = {
            "cache_format": CACHE_FORMAT,
            "dataset": {"name": f"{type(self).__module__}.{type(self).__qualname__}",
                        "format": self.format_version},
            "builder": self.builder_key(),
            "inputs": {name: None if path is None else file_digest(path)
                       for name, path in sorted(self.input_files().items())},
            "options": self.options(),
        }
        return json.dumps(key, sort_keys=True, ensure_ascii=False, default=str)

    @functools.cached_property
    def cache_digest(self) -> str:
        """The sha256 (hex) of :meth:`cache_key`: what a run records of the data it read."""
        return hashlib.sha256(self._key_text.encode("utf-8")).hexdigest()

    # ------------------------------------------------------------ the files
    @property
    def processed_dir(self) -> str:
        return os.path.join(self.cache, f"{self.stem()}-{self.cache_digest[:16]}")

    @property
    def raw_dir(self) -> str:  # sources are located by the subclass; no raw/ folder is made
        return self.processed_dir

    @property
    def raw_file_names(self) -> list[str]:
        return []

    def stored_files(self) -> list[str]:
        """The names of the files :meth:`write` writes."""
        raise NotImplementedError

    @property
    def processed_file_names(self) -> list[str]:
        return [*self.stored_files(), MANIFEST]  # the manifest last: written when the rest is

    def download(self) -> None:  # sources are read where they are
        pass

    def write(self) -> None:
        """Build the graphs and write every file of :meth:`stored_files` (atomically)."""
        raise NotImplementedError

    def load_cache(self) -> None:
        """Read the processed files into this dataset."""
        raise NotImplementedError

    def load(self, path: str, data_cls: type = Data) -> None:
        """Read the graphs of ``path`` (as :meth:`InMemoryDataset.save` wrote them) into this dataset,
        with ``torch.load(weights_only=True)`` and no retry (PyG's ``load`` retries unsafely)."""
        out = torch.load(path, map_location="cpu", weights_only=True)
        if not (isinstance(out, tuple) and len(out) == 3 and isinstance(out[0], dict)):
            raise ValueError(f"{path} does not hold graphs as graphmatch writes them")
        data, self.slices, _ = out
        self.data = data_cls.from_dict(data)

    def build_cache(self) -> None:
        """Write the cache folder: :meth:`write`'s files, then the manifest."""
        os.makedirs(self.processed_dir, exist_ok=True)
        self.write()
        files = {}
        for name in self.stored_files():
            path = os.path.join(self.processed_dir, name)
            st = os.stat(path)
            files[name] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": file_digest(path)}
        manifest = {"key": self.cache_key(), "digest": self.cache_digest, "files": files}
        text = json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False, default=str)
        write_atomically(os.path.join(self.processed_dir, MANIFEST),
                         lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))

    # -------------------------------------------------------- stale caches
    def stale_reason(self) -> str | None:
        """Why the cache folder cannot be read (``None``: it can, or there is none to read)."""
        folder = Path(self.processed_dir)
        if not folder.is_dir() or not any(folder.iterdir()):
            return None
        manifest_path = folder / MANIFEST
        if not manifest_path.is_file():
            return "it has no manifest (an interrupted build, or an older graphmatch)"
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            recorded, files = manifest["key"], manifest["files"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            return f"its manifest is unreadable ({type(err).__name__})"
        key = self.cache_key()
        if recorded != key:
            return _key_difference(recorded, key)
        unknown = sorted(p.name for p in folder.iterdir() if p.name not in self.processed_file_names)
        if unknown:
            return f"it holds {unknown[0]}, a file its manifest does not list"
        for name in self.stored_files():
            path, want = folder / name, files.get(name)
            if want is None:
                return f"its manifest does not list {name}"
            if not path.is_file():
                return f"{name} is missing"
            st = path.stat()
            if st.st_size != want["size"]:
                return f"{name} is truncated ({st.st_size} of {want['size']} bytes)" if st.st_size < want["size"] \
                    else f"{name} has {st.st_size} bytes, {want['size']} recorded"
            if st.st_mtime_ns != want.get("mtime_ns") and file_digest(path) != want["sha256"]:
                return f"{name} is corrupt (its sha256 differs from the one recorded)"
        return None

    def _drop_if_stale(self) -> None:
        reason = self.stale_reason()
        if reason is not None:
            self._drop(reason)

    def _drop(self, reason: str) -> None:
        print(f"graphmatch: rebuilding the cache {self.processed_dir}: {reason}", file=sys.stderr)
        self._clear()

    def _clear(self) -> None:
        """Empty the cache folder: the manifest first (the folder is unfinished), then everything."""
        folder = Path(self.processed_dir)
        if not folder.is_dir():
            return
        (folder / MANIFEST).unlink(missing_ok=True)
        for path in folder.iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()

    def _load_or_rebuild(self, load: Callable[[], None]) -> None:
        """``load()``; a cache that fails to load (altered in place) is rebuilt, then loaded."""
        try:
            load()
        except Exception as err:  # noqa: BLE001 - whatever a damaged file raises
            self._drop(f"it cannot be read ({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''})")
            self.build_cache()
            load()


def _key_difference(recorded: Any, key: dict[str, Any]) -> str:
    """Which part of a recorded cache key differs from this one, in words."""
    if not isinstance(recorded, dict):
        return "its manifest records no key"
    if recorded.get("cache_format") != key["cache_format"]:
        return (f"it was written in cache format {recorded.get('cache_format')}, "
                f"this version writes {key['cache_format']}")
    for part in ("builder", "dataset"):
        old, new = recorded.get(part) or {}, key[part]
        if old.get("name") == new["name"] and old.get("format") != new["format"]:
            return (f"it was written by {new['name']} format {old.get('format')}, "
                    f"this version writes format {new['format']}")
    parts = [part for part in key if recorded.get(part) != key[part]]
    return f"its recorded key differs in {', '.join(parts)}"
