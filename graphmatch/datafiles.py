"""Deprecated path (goes in the next release) of what is now four modules: where data files come
from (:mod:`graphmatch.io.datafiles`), how a user's text files are read
(:mod:`graphmatch.io.text_files`), atomic writes (:mod:`graphmatch.io.atomic`) and packaged
checkpoints' short names (:mod:`graphmatch.pretrained.packaged`)."""

from graphmatch.utils.deprecated import split

split(__name__, "graphmatch.io.datafiles, graphmatch.io.text_files, graphmatch.io.atomic and "
      "graphmatch.pretrained.packaged")

from graphmatch.io.atomic import write_atomically  # noqa: E402
from graphmatch.io.datafiles import (  # noqa: E402
      CACHE_DIR,
      ENV_VAR,
      LCQMC_NOTE,
      REGISTRY,
      REGISTRY_FILE,
      DataFileMissing,
      data_root,
      data_roots,
      file_digest,
      locate,
      package_folder,
      resolve_path,
      samples_dir,
      sha256,
)
from graphmatch.io.text_files import BOM, decode_lines, decode_utf8, iter_lines, read_text  # noqa: E402
from graphmatch.pretrained.packaged import SHORT_NAMES, packaged_pretrained  # noqa: E402
from graphmatch.pretrained.packaged import packaged_pretrained as packaged_checkpoint  # noqa: E402, F401 (its old name)

__all__ = ["BOM", "CACHE_DIR", "ENV_VAR", "LCQMC_NOTE", "REGISTRY", "REGISTRY_FILE", "SHORT_NAMES", "DataFileMissing",
           "data_root", "data_roots", "decode_lines", "decode_utf8", "file_digest", "iter_lines", "locate",
           "package_folder", "packaged_pretrained", "read_text", "resolve_path", "samples_dir", "sha256",
           "write_atomically"]
