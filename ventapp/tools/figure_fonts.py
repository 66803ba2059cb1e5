"""A font that draws Chinese in matplotlib figures, found on this machine (never downloaded).

matplotlib's own fonts (DejaVu) have no CJK glyphs: Chinese labels come out as boxes. The
project's set-up installs Debian's ``fonts-noto-cjk`` (``make setup``/``make run``); other
machines may have Source Han Sans, WenQuanYi or the desktop fonts users have. matplotlib's
font cache is written once and does not see fonts installed after it, so the font files are
looked for on disk (``findSystemFonts``) and added when the cache lacks them. The family found
is added to ``font.family`` after the default sans-serif (once per process): matplotlib falls
back glyph by glyph along that list, so Latin text keeps its usual font and Chinese comes from
the CJK one. Without one, figures stay in English.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import matplotlib
from matplotlib import font_manager

logger = logging.getLogger(__name__)

CJK_FAMILIES = (
    "Noto Sans CJK SC",
    "Source Han Sans SC",
    "Noto Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Microsoft YaHei",
    "PingFang SC",
    "SimHei",
    "Droid Sans Fallback",
)
"""Families that draw Simplified Chinese, in order of preference (Debian's Noto CJK first)."""
_CJK_FILE = re.compile(
    r"(cjk|sourcehan|wqy|wenquanyi|droidsansfallback|msyh|simhei|pingfang|notosanssc)", re.I
)

_lock = threading.Lock()
_found: list[str | None] = []
"""The family :func:`cjk_family` settled on (one entry once it looked)."""


def _known(families: tuple[str, ...]) -> str | None:
    names = {entry.name for entry in font_manager.fontManager.ttflist}
    return next((family for family in families if family in names), None)


def _add_cjk_files() -> None:
    for path in font_manager.findSystemFonts():
        if _CJK_FILE.search(Path(path).name.replace("-", "").replace("_", "")):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # an unreadable file is skipped, not fatal
                logger.debug("font file %s could not be read", path)


def cjk_family() -> str | None:
    """The installed family that draws Chinese (first of :data:`CJK_FAMILIES`), or None.

    Looked for once per process (later calls return the answer at once); when found it joins
    matplotlib's ``font.family`` as the fallback for glyphs the default font lacks (text drawn
    with an explicit family, such as networkx labels, passes :func:`families`). Without one a
    warning names the package to install.
    """
    with _lock:
        if not _found:
            family = _known(CJK_FAMILIES)
            if family is None:
                _add_cjk_files()
                family = _known(CJK_FAMILIES)
            if family is None:
                logger.warning(
                    "no CJK font found (install Debian's fonts-noto-cjk: make setup does): "
                    "figures get English labels"
                )
            else:
                current = [name for name in matplotlib.rcParams["font.family"] if name != family]
                matplotlib.rcParams["font.family"] = [*current, family]
            _found.append(family)
        return _found[0]


def families() -> list[str]:
    """The font families figure text is drawn with (the default, then the CJK fallback if any)."""
    cjk_family()
    return list(matplotlib.rcParams["font.family"])
