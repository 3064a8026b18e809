"""Shared PDF pieces: styles, page templates with header and footer, page x of y, swatches.

Every document is byte-stable (reportlab ``invariant=1``, built-in fonts, no dates), uses
portrait pages for prose and landscape pages for wide tables, and prints a colour's name beside
its swatch (with a hatch pattern per colour), so nothing depends on a colour printer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4, letter
from reportlab.lib.rl_accel import escapePDF, fp_str, unicode2T1
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import getFont, stringWidth
from reportlab.platypus import (
    Flowable,
    Paragraph,
)

Progress = Callable[[str, int, int], None]

PAGE_SIZES = {"a4": A4, "letter": letter}
MARGIN = 12 * mm
HEADER_H = 9 * mm
FOOTER_H = 8 * mm
INK = colors.HexColor("#1a1a1a")
GREY = colors.HexColor("#6b6b6b")
RULE = colors.HexColor("#9a9a9a")
SHADE = colors.HexColor("#ececec")
FONT = "Helvetica"
BOLD = "Helvetica-Bold"
MONO = "Courier"

#: TIA-598 fibre colours (the names railplan's cable schedule uses)
TIA_RGB = {
    "blue": "#1f5fbf",
    "orange": "#f28c1b",
    "green": "#2e9e44",
    "brown": "#8b5a2b",
    "slate": "#708090",
    "white": "#ffffff",
    "red": "#d62728",
    "black": "#111111",
    "yellow": "#f2d21b",
    "violet": "#7f3fbf",
    "rose": "#f4a6b8",
    "aqua": "#35c4c4",
}
#: hatch of each colour, so that swatches still differ on a black-and-white print
PATTERNS = ("solid", "slash", "hlines", "vlines", "cross", "dots", "backslash", "grid")


def _style(name: str, **kw: Any) -> ParagraphStyle:
    base = {
        "fontName": FONT,
        "fontSize": 9,
        "leading": 11.5,
        "textColor": INK,
        "alignment": TA_LEFT,
    }
    base.update(kw)
    return ParagraphStyle(name, **base)


STYLES = {
    "title": _style("title", fontName=BOLD, fontSize=22, leading=27, spaceAfter=4 * mm),
    "subtitle": _style("subtitle", fontSize=12, leading=15, textColor=GREY, spaceAfter=6 * mm),
    "h1": _style("h1", fontName=BOLD, fontSize=15, leading=19, spaceBefore=2 * mm, spaceAfter=3 * mm),
    "h2": _style("h2", fontName=BOLD, fontSize=11, leading=14, spaceBefore=3 * mm, spaceAfter=2 * mm),
    "body": _style("body", spaceAfter=2 * mm),
    "small": _style("small", fontSize=7.5, leading=9.5, textColor=GREY),
    "cell": _style("cell", fontSize=7.5, leading=9),
    "cellb": _style("cellb", fontName=BOLD, fontSize=7.5, leading=9),
    "mono": _style("mono", fontName=MONO, fontSize=7.5, leading=9),
}  # fmt: skip


def esc(text: object) -> str:
    """Text safe inside a reportlab Paragraph."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def colour_of(name: str) -> colors.Color:
    return colors.HexColor(TIA_RGB.get(name, "#bbbbbb"))


def pattern_of(name: str) -> str:
    names = list(TIA_RGB)
    return PATTERNS[names.index(name) % len(PATTERNS)] if name in TIA_RGB else "solid"


def draw_swatch(c: Any, x: float, y: float, w: float, h: float, name: str) -> None:
    """A colour square with its hatch; white shows as an outline, unknown names as grey."""
    fill = colour_of(name)
    c.saveState()
    c.setFillColor(fill)
    c.setStrokeColor(INK)
    c.setLineWidth(0.4)
    c.rect(x, y, w, h, stroke=1, fill=1)
    pat = pattern_of(name)
    ink = colors.white if name in ("black", "blue", "brown", "violet") else INK
    c.setStrokeColor(ink)
    c.setFillColor(ink)
    c.setLineWidth(0.35)
    p = c.beginPath()
    step = w / 4
    if pat in ("slash", "cross"):
        for k in range(1, 4):
            p.moveTo(x, y + k * step * h / w)
            p.lineTo(x + k * step, y)
            p.moveTo(x + k * step, y + h)
            p.lineTo(x + w, y + k * step * h / w)
    if pat in ("backslash", "cross"):
        for k in range(1, 4):
            p.moveTo(x, y + h - k * step * h / w)
            p.lineTo(x + k * step, y + h)
            p.moveTo(x + k * step, y)
            p.lineTo(x + w, y + h - k * step * h / w)
    if pat in ("hlines", "grid"):
        for k in range(1, 4):
            p.moveTo(x, y + k * h / 4)
            p.lineTo(x + w, y + k * h / 4)
    if pat in ("vlines", "grid"):
        for k in range(1, 4):
            p.moveTo(x + k * step, y)
            p.lineTo(x + k * step, y + h)
    c.drawPath(p, stroke=1, fill=0)
    if pat == "dots":
        for i in range(1, 4):
            for j in range(1, 4):
                c.circle(x + i * w / 4, y + j * h / 4, 0.35, stroke=0, fill=1)
    c.restoreState()


class Swatch(Flowable):
    """A table cell: the colour's swatch and its name (one instance per colour is reused)."""

    def __init__(self, name: str, size: float = 2.6 * mm, font_size: float = 7) -> None:
        super().__init__()
        self.name = name
        self.size = size
        self.font_size = font_size
        self.width = size + 1.2 * mm + len(name) * font_size * 0.5
        self.height = size
        self.form = f"railplanSwatch_{name}"

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        # drawn once per document as a form, then placed by reference: 50k swatches stay cheap
        c = self.canv
        form = self.form
        if not c.hasForm(form):
            c.beginForm(form, -1, -1, self.width + 2, self.size + 2)
            draw_swatch(c, 0, 0, self.size, self.size, self.name)
            c.setFont(FONT, self.font_size)
            c.setFillColor(INK)
            c.drawString(self.size + 1.2 * mm, 0.6, self.name)
            c.endForm()
        c.doForm(form)


class CheckBox(Flowable):
    """An empty box a technician ticks."""

    form = "railplanCheckBox"

    def __init__(self, size: float = 3 * mm) -> None:
        super().__init__()
        self.size = size
        self.width = self.height = size

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.size, self.size

    def draw(self) -> None:
        c = self.canv
        if not c.hasForm(self.form):
            c.beginForm(self.form, -1, -1, self.size + 1, self.size + 1)
            c.setLineWidth(0.6)
            c.setStrokeColor(INK)
            c.rect(0, 0, self.size, self.size, stroke=1, fill=0)
            c.endForm()
        c.doForm(self.form)


CHECKBOX = CheckBox()
_SWATCHES: dict[str, Swatch] = {}


def swatch(name: str) -> Swatch:
    if name not in _SWATCHES:
        _SWATCHES[name] = Swatch(name)
    return _SWATCHES[name]


class SectionMark(Flowable):
    """Zero-size marker: starts a section (page header text and a PDF outline entry)."""

    def __init__(self, title: str, key: str, level: int = 0) -> None:
        super().__init__()
        self.title = title
        self.key = key
        self.level = level

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return 0, 0

    def draw(self) -> None:
        c = self.canv
        c.bookmarkPage(self.key)
        c.addOutlineEntry(self.title, self.key, level=self.level, closed=self.level > 0)


def clip(text: str, width: float, font: str = FONT, size: float = 7) -> str:
    """``text`` cut (with an ellipsis) to fit ``width`` points in a table cell."""
    room = width - 4  # cell padding
    if len(text) * size * 0.62 <= room or stringWidth(text, font, size) <= room:
        return text
    while text and stringWidth(text + "\u2026", font, size) > room:
        text = text[:-1]
    return text + "\u2026"


def clip_rows(
    rows: Sequence[list[Any]], widths: Sequence[float], size: float = 7
) -> list[list[Any]]:
    """Every text cell of ``rows`` clipped to its column (other cells pass unchanged).

    A column whose widest text fits is passed whole (``clip`` would return each of its cells
    unchanged); only the cells of a column with a text too wide are clipped one by one."""
    columns = list(zip(*rows, strict=True)) if rows else []
    cut = [j for j, (w, column) in enumerate(zip(widths, columns, strict=False))
           if max_width([v for v in column if isinstance(v, str)], FONT, size) > w - 4]  # fmt: skip
    if not cut:
        return [r if type(r) is list else list(r) for r in rows]
    out = []
    for row in rows:
        row = list(row)
        for j in cut:
            if isinstance(row[j], str):
                row[j] = clip(row[j], widths[j], FONT, size)
        out.append(row)
    return out


#: font name -> its glyph widths by byte (thousandths of an em), as a numpy array
_WIDTHS: dict[str, Any] = {}


def max_width(texts: Sequence[str], font: str = FONT, size: float = 7) -> float:
    """``max(stringWidth(t, font, size) for t in texts)`` (0 for none), exactly.

    reportlab's width of a text in a built-in font is the sum of its glyphs' integer widths
    times ``0.001 * size``, so the widest text is the one with the largest sum: the sums of
    the printable-ASCII texts are taken all at once (numpy), and reportlab measures only the
    one with the largest sum and each text outside printable ASCII."""
    if not texts:
        return 0.0
    import numpy as np

    joined = "".join(texts)
    if _plain_ascii(font) and joined.isascii() and joined.isprintable():
        plain, rest = list(texts), []
    else:
        ok = _plain_ascii(font)
        plain = [t for t in texts if ok and t.isascii() and t.isprintable()]
        rest = [t for t in texts if not (ok and t.isascii() and t.isprintable())]
        joined = "".join(plain)
    best = max((stringWidth(t, font, size) for t in rest), default=0.0)
    if plain:
        table = _WIDTHS.get(font)
        if table is None:
            table = _WIDTHS[font] = np.asarray(getFont(font).widths, dtype=np.int64)
        glyphs = table[np.frombuffer(joined.encode("ascii"), dtype=np.uint8)]
        sums = np.concatenate(([0], np.cumsum(glyphs)))
        ends = np.cumsum(np.fromiter(map(len, plain), dtype=np.int64, count=len(plain)))
        per_text = sums[ends] - sums[ends - np.diff(ends, prepend=0)]
        best = max(best, stringWidth(plain[int(np.argmax(per_text))], font, size))
    return best


#: (font, text) -> the operators that show it, or "" where reportlab's own method must draw it
_CODED: dict[str, dict[str, str]] = {}
#: font name -> whether reportlab writes printable ASCII in it as the ASCII bytes themselves
_ASCII_FONTS: dict[str, bool] = {}
_PRINTABLE = "".join(map(chr, range(32, 127)))
#: font name -> its glyph widths by character (thousandths of an em), printable ASCII only
_GLYPHS: dict[str, dict[str, int]] = {}


def _plain_ascii(fontname: str) -> bool:
    """Whether ``unicode2T1`` turns printable ASCII text in this font into one piece of the
    font itself holding the same bytes (the built-in Type 1 fonts in their WinAnsi encoding)."""
    known = _ASCII_FONTS.get(fontname)
    if known is None:
        font = getFont(fontname)
        pieces = unicode2T1(_PRINTABLE, [font, *font.substitutionFonts])
        known = _ASCII_FONTS[fontname] = (
            not font._dynamicFont and len(pieces) == 1 and pieces[0][0] is font
            and pieces[0][1] == _PRINTABLE.encode("ascii")
        )  # fmt: skip
        if known:
            _GLYPHS[fontname] = {ch: font.widths[ord(ch)] for ch in _PRINTABLE}
    return known


def text_width(text: str, fontname: str, size: float) -> float:
    """``stringWidth(text, fontname, size)``, exactly: for printable ASCII in a built-in font
    reportlab's width is the sum of the glyphs' integer widths ``* 0.001 * size`` (its own
    pure-Python ``instanceStringWidthT1``), summed here without a codec call per text."""
    if text.isascii() and text.isprintable() and _plain_ascii(fontname):
        return sum(map(_GLYPHS[fontname].__getitem__, text)) * 0.001 * size
    return stringWidth(text, fontname, size)


def show_ops(fontname: str, text: str) -> str:
    """The operators after ``Tm`` that show ``text`` in ``fontname`` as reportlab's text object
    writes them (``(..) Tj T* ET``), or "" where reportlab's own method must draw it (a font
    with substitutes, a character outside the encoding, empty text)."""
    if text and text.isascii() and text.isprintable() and _plain_ascii(fontname):
        return f"({escapePDF(text)}) Tj T* ET"
    font = getFont(fontname)
    pieces = unicode2T1(text, [font, *font.substitutionFonts]) if text else []
    simple = len(pieces) == 1 and pieces[0][0] is font and not font._dynamicFont
    return f"({escapePDF(pieces[0][1])}) Tj T* ET" if simple else ""


def ops_cache(fontname: str) -> dict[str, str]:
    """The texts ``text_ops`` has coded in this font, and their operators."""
    cache = _CODED.get(fontname)
    if cache is None:
        cache = _CODED[fontname] = {}
    return cache


def text_ops(fontname: str, text: str) -> str:
    """``show_ops``, remembered per font (a table column repeats its texts)."""
    cache = ops_cache(fontname)
    coded = cache.get(text)
    if coded is None:
        if len(cache) > 200_000:
            cache.clear()
        coded = cache[text] = show_ops(fontname, text)
    return coded


def draw_string(c: Any, x: float, y: float, text: str, align: str = "left") -> None:
    """``c.drawString`` (``align`` "right": ``drawRightString``) for the built-in fonts.

    Appends the very operators reportlab's own text object would (``BT 1 0 0 1 x y Tm (..) Tj
    T* ET``, text in the font's single-byte encoding, escaped by reportlab's ``escapePDF``), so
    the PDF is byte-identical, without building a text object per string: the sheets draw
    two million strings. Anything else (a font with substitutes, a character outside the
    encoding, empty text, a top-down canvas) goes through reportlab's method unchanged.
    """
    coded = text_ops(c._fontname, text)
    if not coded or not c.bottomup:
        (c.drawRightString if align == "right" else c.drawString)(x, y, text)
        return
    if align == "right":
        x -= stringWidth(text, c._fontname, c._fontsize)
    c._code.append(f"BT 1 0 0 1 {fp_str(x, y)} Tm {coded}")


def para(text: str, style: str = "body") -> Paragraph:
    return Paragraph(text, STYLES[style])


#: the smallest text on an A4 or Letter page a technician reads (label stock has its own floor)
MIN_PAGE_PT = 6.0


def fit_size(
    c: Any, text: str, font: str, size: float, width: float, floor: float = MIN_PAGE_PT
) -> float:
    """The largest font size (down to ``floor``, in 0.25 pt steps) at which ``text`` fits
    ``width``; at the floor it may still not fit (clip it with ``clip``)."""
    return fitted_size(c, text, font, size, width, floor)[0]


def fitted_size(
    c: Any, text: str, font: str, size: float, width: float, floor: float = MIN_PAGE_PT
) -> tuple[float, bool]:
    """``fit_size`` and whether ``text`` fits ``width`` at that size.

    The size is the first of ``size``, ``size - 0.25``, ... (stopping at the first at or below
    ``floor``) at which ``c.stringWidth`` fits, as a step-by-step search finds it; a text's
    width grows with the size, so the steps are searched by bisection, starting where the
    width measured at ``size`` says the answer lies (two or three measurements, not one per
    step)."""
    if len(text) * size <= width:  # no glyph of these fonts is wider than 1 em: it fits
        return size, True
    if size <= floor:
        return size, text_width(text, font, size) <= width
    measured: dict[int, bool] = {}
    measure = c.stringWidth
    if text.isascii() and text.isprintable() and _plain_ascii(font):
        glyphs = sum(map(_GLYPHS[font].__getitem__, text))

        def measure(_text: str, _font: str, at: float) -> float:  # as text_width
            return glyphs * 0.001 * at

    sizes = [size]
    while sizes[-1] > floor:
        sizes.append(sizes[-1] - 0.25)

    def fits(i: int) -> bool:
        if i not in measured:
            measured[i] = measure(text, font, sizes[i]) <= width
        return measured[i]

    def stop(i: int) -> bool:  # where the step-by-step search stops
        return sizes[i] <= floor or fits(i)

    if fits(0):
        return size, True
    full = measure(text, font, size)
    guess = math.ceil((size - size * width / full) / 0.25) if full > 0 else 0
    lo, hi = 0, len(sizes) - 1  # the search does not stop at lo, it stops at hi
    for probe in (guess, guess - 1, guess + 1):
        if lo < probe < hi:
            if stop(probe):
                hi = probe
            else:
                lo = probe
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if stop(mid):
            hi = mid
        else:
            lo = mid
    return sizes[hi], fits(hi)
