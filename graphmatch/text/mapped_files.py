"""Read-only memory maps of numbers stored in files: pages are read as they are first used and
shared by every process that maps the same file."""

from __future__ import annotations

import mmap
import struct
import zipfile

import numpy as np


def mapped_int32(path: str, offset: int, count: int) -> memoryview:
    """``count`` little-endian int32 numbers at byte ``offset`` of a file, memory-mapped read-only:
    indexed like a tuple of ints, but the pages are read from the file as they are first used and
    shared by every process that maps it."""
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return memoryview(mapped)[offset : offset + 4 * count].cast("i")


def mapped_npz_array(path: str, name: str) -> np.ndarray | None:
    """Array ``name`` of an uncompressed ``.npz`` file, memory-mapped copy-on-write (pages are
    read as they are first used, and shared between processes); ``None`` when it is stored
    compressed (it cannot be mapped then)."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(f"{name}.npy")
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        with archive.open(info) as member:
            version = np.lib.format.read_magic(member)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
                np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(member)
            header = member.tell()
    with open(path, "rb") as f:  # the member's data start: after its local file header
        f.seek(info.header_offset)
        local = f.read(30)
        name_len, extra_len = struct.unpack("<HH", local[26:30])
    start = info.header_offset + 30 + name_len + extra_len + header
    return np.memmap(path, dtype=dtype, mode="c", offset=start, shape=shape, order="F" if fortran else "C")
