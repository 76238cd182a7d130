"""Find a CJK font on disk and register it with matplotlib, so Chinese labels render.

Install one from Debian: ``apt-get install -y fonts-wqy-microhei`` (4 MB; also found:
``fonts-noto-cjk``, ``fonts-wqy-zenhei``). ``LECODE_CJK_FONT=/path/to/font.ttc`` overrides the
search. The font is registered by file path with ``font_manager.fontManager.addfont`` and used
as a fallback after DejaVu Sans, so Latin text keeps matplotlib's default look.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import matplotlib as mpl
from matplotlib import font_manager

log = logging.getLogger(__name__)

CJK_FONT_ENV = "LECODE_CJK_FONT"
INSTALL_HINT = "apt-get install -y fonts-wqy-microhei (or fonts-noto-cjk)"

#: Where Debian's CJK font packages put their files, preferred first.
KNOWN_FILES: tuple[str, ...] = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
)
_NAME_HINTS = (
    "wqy",
    "wenquanyi",
    "notosanscjk",
    "notoserifcjk",
    "sourcehansans",
    "droidsansfallback",
)

BASE_FAMILY = "DejaVu Sans"


def find_cjk_font() -> Path | None:
    """The CJK font file to use: ``$LECODE_CJK_FONT``, a known path, or a system font by name."""
    env = os.environ.get(CJK_FONT_ENV)
    if env:
        path = Path(env)
        if not path.is_file():
            raise FileNotFoundError(f"{CJK_FONT_ENV}={env} is not a file")
        return path
    for candidate in KNOWN_FILES:
        if Path(candidate).is_file():
            return Path(candidate)
    for found in sorted(font_manager.findSystemFonts()):
        name = Path(found).name.casefold().replace("-", "").replace("_", "")
        if any(h in name for h in _NAME_HINTS):
            return Path(found)
    return None


@lru_cache(maxsize=4)
def _register(path: str) -> str:
    font_manager.fontManager.addfont(path)
    return font_manager.FontProperties(fname=path).get_name()


def cjk_family(*, required: bool = False) -> str | None:
    """Register the CJK font (once) and return its family name; ``None`` if there is none."""
    path = find_cjk_font()
    if path is None:
        if required:
            raise RuntimeError(f"no CJK font found; install one: {INSTALL_HINT}")
        log.warning("no CJK font found: Chinese labels will not render (%s)", INSTALL_HINT)
        return None
    return _register(str(path))


@contextmanager
def cjk_fonts(*, required: bool = False) -> Iterator[str | None]:
    """A matplotlib rc context in which Chinese text renders; yields the CJK family or None.

    DejaVu Sans comes first and the CJK font is the fallback for glyphs DejaVu lacks; PDF
    output embeds TrueType (``pdf.fonttype`` 42) so text stays selectable.
    """
    family = cjk_family(required=required)
    with mpl.rc_context():
        # Fallback works across the entries of font.family (not inside a generic alias).
        mpl.rcParams["font.family"] = [BASE_FAMILY] + ([family] if family else [])
        mpl.rcParams["axes.unicode_minus"] = True
        mpl.rcParams["pdf.fonttype"] = 42
        yield family
