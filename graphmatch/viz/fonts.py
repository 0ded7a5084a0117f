"""Find a font that draws Chinese, so that labels in pictures are not rows of empty boxes.

Matplotlib's default font (DejaVu Sans) has no CJK glyphs, and its font cache does not see fonts
installed after the cache was built. :func:`cjk_font` looks, in order, at

1. ``$GRAPHMATCH_CJK_FONT``: a font file (``.ttf``/``.otf``/``.ttc``) or an installed family name;
2. the fonts matplotlib already knows, for a family in :data:`KNOWN_CJK_FAMILIES`;
3. ``fc-list :lang=zh`` (fontconfig), whose files are added to matplotlib's font manager.

When none is found it warns once, naming the Debian package :data:`DEBIAN_PACKAGE`.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import warnings
from pathlib import Path

from matplotlib import font_manager

ENV_VAR = "GRAPHMATCH_CJK_FONT"
DEBIAN_PACKAGE = "fonts-wqy-microhei"

#: families with CJK glyphs, most preferred first (sans-serif faces read best at small sizes)
KNOWN_CJK_FAMILIES: tuple[str, ...] = (
    "WenQuanYi Micro Hei",
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "Source Han Sans CN",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK JP",
    "Noto Sans CJK TC",
    "Microsoft YaHei",
    "PingFang SC",
    "Hiragino Sans GB",
    "Heiti SC",
    "STHeiti",
    "SimHei",
    "Droid Sans Fallback",
    "AR PL UMing CN",
    "AR PL UKai CN",
    "Noto Serif CJK SC",
)

#: the Latin fallback listed after the CJK family
LATIN_FAMILY = "DejaVu Sans"


class CJKFontWarning(UserWarning):
    """No installed font can draw Chinese characters."""


def _known_families() -> set[str]:
    return {entry.name for entry in font_manager.fontManager.ttflist}


def _add_font_file(path: str | os.PathLike) -> list[str]:
    """Register a font file (all faces of a collection) with matplotlib; return the new families."""
    before = _known_families()
    font_manager.fontManager.addfont(str(path))
    added = _known_families() - before
    if not added:  # already registered: report the families that file provides
        added = {e.name for e in font_manager.fontManager.ttflist if Path(e.fname) == Path(path)}
    return sorted(added)


def _fc_list_files() -> list[str]:
    """Font files fontconfig lists as covering Chinese (empty when fontconfig is absent)."""
    exe = shutil.which("fc-list")
    if exe is None:
        return []
    try:
        out = subprocess.run([exe, ":lang=zh", "file"], capture_output=True, text=True, timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    files = {line.strip().rstrip(":").strip() for line in out.splitlines() if line.strip()}
    return sorted(f for f in files if Path(f).suffix.lower() in {".ttf", ".otf", ".ttc"})


def _pick(families: set[str], preferred: tuple[str, ...]) -> str | None:
    for name in preferred:
        if name in families:
            return name
    return None


def find_cjk_font(preferred: tuple[str, ...] = KNOWN_CJK_FAMILIES, use_fontconfig: bool = True) -> str | None:
    """Return the family name of an installed CJK font (registered with matplotlib), or ``None``.

    Args:
        preferred: family names to accept, most preferred first.
        use_fontconfig: also ask ``fc-list :lang=zh`` for font files matplotlib has not seen.
    """
    override = os.environ.get(ENV_VAR, "").strip()
    if override:
        if Path(override).is_file():
            added = _add_font_file(override)
            if added:
                return added[0]
            raise ValueError(f"${ENV_VAR}={override!r}: matplotlib found no font family in that file")
        if override in _known_families():
            return override
        raise ValueError(f"${ENV_VAR}={override!r} is neither a font file nor a font family matplotlib knows")
    found = _pick(_known_families(), preferred)
    if found is not None or not use_fontconfig:
        return found
    zh_families: list[str] = []
    for path in _fc_list_files():
        try:
            zh_families.extend(_add_font_file(path))
        except (OSError, RuntimeError, ValueError):  # unreadable or unsupported font file
            continue
    # fontconfig says every file it listed covers Chinese, so any of them will do
    return _pick(set(zh_families), preferred) or (sorted(zh_families)[0] if zh_families else None)


@functools.lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The CJK family pictures use (found once per process); warns and returns ``None`` if none."""
    family = find_cjk_font()
    if family is None:
        warnings.warn(
            "no font with Chinese glyphs found: Chinese labels will be drawn as empty boxes. "
            f"Install one, e.g. `apt-get install {DEBIAN_PACKAGE}` (Debian/Ubuntu), or set "
            f"${ENV_VAR} to a .ttf/.otf/.ttc file.",
            CJKFontWarning,
            stacklevel=2,
        )
    return family


def font_families() -> list[str]:
    """Family list for matplotlib text: the CJK font first (if any), then the Latin fallback."""
    family = cjk_font()
    return [family, LATIN_FAMILY] if family else [LATIN_FAMILY]


def font_properties(size: float | None = None) -> font_manager.FontProperties:
    """:class:`~matplotlib.font_manager.FontProperties` that draw Chinese and Latin text."""
    return font_manager.FontProperties(family=font_families(), size=size)


def has_bold() -> bool:
    """Whether the first family of :func:`font_families` has a bold face (WenQuanYi Micro Hei has
    none: asking it for bold text makes matplotlib log a ``findfont`` warning)."""
    family = font_families()[0]
    return any(e.name == family and _weight(e.weight) >= 600 for e in font_manager.fontManager.ttflist)


def _weight(weight: int | str) -> int:
    return weight if isinstance(weight, int) else font_manager.weight_dict.get(weight, 400)
