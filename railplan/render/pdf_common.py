"""Shared PDF pieces: styles, page templates with header and footer, page x of y, swatches.

Every document is byte-stable (reportlab ``invariant=1``, built-in fonts, no dates), uses
portrait pages for prose and landscape pages for wide tables, and prints a colour's name beside
its swatch (with a hatch pattern per colour), so nothing depends on a colour printer.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4, landscape, letter
from reportlab.lib.styles import ParagraphStyle
from reportlab.lib.units import mm
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas as rl_canvas
from reportlab.platypus import (
    BaseDocTemplate,
    Flowable,
    Frame,
    NextPageTemplate,
    PageBreak,
    PageTemplate,
    Paragraph,
    Table,
    TableStyle,
)

from railplan.version import __version__

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

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        # drawn once per document as a form, then placed by reference: 50k swatches stay cheap
        c = self.canv
        form = f"railplanSwatch_{self.name}"
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

    def __init__(self, size: float = 3 * mm) -> None:
        super().__init__()
        self.size = size

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.size, self.size

    def draw(self) -> None:
        c = self.canv
        if not c.hasForm("railplanCheckBox"):
            c.beginForm("railplanCheckBox", -1, -1, self.size + 1, self.size + 1)
            c.setLineWidth(0.6)
            c.setStrokeColor(INK)
            c.rect(0, 0, self.size, self.size, stroke=1, fill=0)
            c.endForm()
        c.doForm("railplanCheckBox")


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


@dataclass(frozen=True)
class DocInfo:
    """What every page says about the document."""

    title: str
    design: str
    revision: str
    design_hash: str
    page_size: str = "a4"


TOTAL_FORM = "railplanPageTotal"


class _NumberedCanvas(rl_canvas.Canvas):
    """Writes the page total once, at the end, as a form every footer refers to."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["invariant"] = 1
        super().__init__(*args, **kwargs)
        self.pages = 0

    def showPage(self) -> None:
        self.pages += 1
        super().showPage()

    def save(self) -> None:
        self.beginForm(TOTAL_FORM)
        self.setFont(FONT, 7.5)
        self.setFillColor(GREY)
        self.drawString(0, 0, str(self.pages))
        self.endForm()
        super().save()


class Document(BaseDocTemplate):
    """Portrait and landscape page templates sharing one header and footer."""

    def __init__(self, out: Any, info: DocInfo, progress: Progress | None = None) -> None:
        size = PAGE_SIZES[info.page_size]
        super().__init__(
            out,
            pagesize=size,
            leftMargin=MARGIN,
            rightMargin=MARGIN,
            topMargin=MARGIN + HEADER_H,
            bottomMargin=MARGIN + FOOTER_H,
            title=f"{info.title}: {info.design}",
            author="railplan",
            creator=f"railplan {__version__}",
            producer="railplan (reportlab)",
            invariant=1,
        )
        self.info = info
        self.section = ""
        self.subsection = ""
        self._page_first_sub = ""
        self.progress = progress
        self.pages_done = 0
        templates = []
        for name, page in (("portrait", size), ("landscape", landscape(size))):
            w, h = page
            frame = Frame(
                MARGIN,
                MARGIN + FOOTER_H,
                w - 2 * MARGIN,
                h - 2 * MARGIN - HEADER_H - FOOTER_H,
                id=name,
                leftPadding=0,
                rightPadding=0,
                topPadding=0,
                bottomPadding=0,
            )
            templates.append(
                PageTemplate(
                    id=name,
                    frames=[frame],
                    pagesize=page,
                    onPage=self._page_start,
                    onPageEnd=self._decorate,
                )
            )
        self.addPageTemplates(templates)

    def frame_size(self, orientation: str) -> tuple[float, float]:
        """Width and height of the text frame of a portrait or landscape page."""
        size = PAGE_SIZES[self.info.page_size]
        w, h = landscape(size) if orientation == "landscape" else size
        return w - 2 * MARGIN, h - 2 * MARGIN - HEADER_H - FOOTER_H

    def afterFlowable(self, flowable: Flowable) -> None:
        if isinstance(flowable, SectionMark):
            if flowable.level == 0:
                self.section, self.subsection = flowable.title, ""
            else:
                self.subsection = flowable.title

    def _page_start(self, c: Any, doc: Any) -> None:
        self._page_first_sub = self.subsection

    def _running_title(self) -> str:
        """Section, and the subsections this page holds (``Rack R0101 to Rack R0102``)."""
        first, last = self._page_first_sub, self.subsection
        if not last:
            return self.section
        sub = last if not first or first == last else f"{first} to {last}"
        return f"{self.section}: {sub}"

    def _decorate(self, c: Any, doc: Any) -> None:
        w, h = c._pagesize
        info = self.info
        c.saveState()
        c.setStrokeColor(RULE)
        c.setLineWidth(0.5)
        top = h - MARGIN - HEADER_H + 2.5 * mm
        c.line(MARGIN, top, w - MARGIN, top)
        c.setFillColor(INK)
        c.setFont(BOLD, 9)
        c.drawString(MARGIN, top + 2 * mm, f"{info.design}  |  {info.title}")
        c.setFont(FONT, 8)
        c.drawRightString(w - MARGIN, top + 2 * mm, self._running_title())
        base = MARGIN + FOOTER_H - 3 * mm
        c.line(MARGIN, base, w - MARGIN, base)
        c.setFillColor(GREY)
        c.setFont(FONT, 7.5)
        c.drawString(
            MARGIN,
            MARGIN * 0.55,
            f"revision {info.revision}  |  design {info.design_hash}  |  railplan {__version__}",
        )
        label = f"page {c.getPageNumber()} of "
        x = w - MARGIN - 12 * mm - stringWidth(label, FONT, 7.5)
        c.drawString(x, MARGIN * 0.55, label)
        c.translate(w - MARGIN - 12 * mm, MARGIN * 0.55)
        c.doForm(TOTAL_FORM)
        c.restoreState()
        self.pages_done += 1
        if self.progress is not None:
            self.progress(info.title, self.pages_done, 0)


def render(
    story: Sequence[Flowable], info: DocInfo, progress: Progress | None = None
) -> tuple[bytes, int]:
    """The PDF bytes of ``story`` and its page count."""
    buf = io.BytesIO()
    doc = Document(buf, info, progress)
    made: list[_NumberedCanvas] = []

    def maker(*args: Any, **kwargs: Any) -> _NumberedCanvas:
        c = _NumberedCanvas(*args, **kwargs)
        made.append(c)
        return c

    doc.build(list(story), canvasmaker=maker)
    return buf.getvalue(), made[0].pages if made else 0


def landscape_next() -> list[Flowable]:
    return [NextPageTemplate("landscape"), PageBreak()]


def portrait_next() -> list[Flowable]:
    return [NextPageTemplate("portrait"), PageBreak()]


def grid_style(header_rows: int = 1, extra: Sequence[tuple[Any, ...]] = ()) -> TableStyle:
    """The look of every table: bold shaded header, thin rules, compact padding."""
    cmds: list[tuple[Any, ...]] = [
        ("FONT", (0, 0), (-1, -1), FONT, 7),
        ("FONT", (0, 0), (-1, header_rows - 1), BOLD, 7),
        ("BACKGROUND", (0, 0), (-1, header_rows - 1), SHADE),
        ("LINEBELOW", (0, 0), (-1, header_rows - 1), 0.8, INK),
        ("LINEBELOW", (0, header_rows), (-1, -1), 0.25, RULE),
        ("VALIGN", (0, 0), (-1, -1), "MIDDLE"),
        ("LEFTPADDING", (0, 0), (-1, -1), 2),
        ("RIGHTPADDING", (0, 0), (-1, -1), 2),
        ("TOPPADDING", (0, 0), (-1, -1), 1),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 1),
    ]
    cmds += list(extra)
    return TableStyle(cmds)


class RowsTable(Flowable):
    """A long table that fills each page exactly and repeats its header on every page.

    Cheaper than one reportlab Table split page by page (each piece is built once), and
    unlike fixed chunks it starts right below whatever is already on the page.
    """

    def __init__(
        self,
        header: Sequence[Any],
        rows: Sequence[Sequence[Any]],
        widths: Sequence[float],
        row_h: float = 4.6 * mm,
        extra: Sequence[tuple[Any, ...]] = (),
        start: int = 0,
    ) -> None:
        super().__init__()
        self.header = list(header)
        self.rows = rows
        self.widths = list(widths)
        self.row_h = row_h
        self.extra = list(extra)
        self.start = start

    def __len__(self) -> int:
        return len(self.rows) - self.start

    def _table(self, stop: int) -> Table:
        body = [list(r) for r in self.rows[self.start : stop]]
        t = Table([self.header, *body], colWidths=self.widths, rowHeights=self.row_h)
        t.setStyle(grid_style(1, self.extra))
        return t

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return sum(self.widths), (len(self) + 1) * self.row_h

    def split(self, aw: float, ah: float) -> list[Flowable]:
        fit = int(ah // self.row_h) - 1
        if fit < min(3, len(self)):
            return []  # too little room: the frame moves on to the next page
        stop = self.start + fit
        rest = RowsTable(self.header, self.rows, self.widths, self.row_h, self.extra, stop)
        return [self._table(stop), rest]

    def drawOn(self, canvas: Any, x: float, y: float, _sW: float = 0) -> None:
        t = self._table(len(self.rows))
        t.wrapOn(canvas, sum(self.widths), (len(self) + 1) * self.row_h)
        t.drawOn(canvas, x, y, _sW)

    def all_rows(self) -> Sequence[Sequence[Any]]:
        return self.rows[self.start :]


def paged_tables(
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float],
    height: float = 0,
    row_h: float = 4.6 * mm,
    extra: Sequence[tuple[Any, ...]] = (),
) -> list[Flowable]:
    """``rows`` under a header that repeats on every page (``height`` is unused, kept for
    callers that size tables by the frame)."""
    del height
    return [RowsTable(header, rows, widths, row_h, extra)]


def clip(text: str, width: float, font: str = FONT, size: float = 7) -> str:
    """``text`` cut (with an ellipsis) to fit ``width`` points in a table cell."""
    room = width - 4  # cell padding
    if len(text) * size * 0.62 <= room or stringWidth(text, font, size) <= room:
        return text
    while text and stringWidth(text + "\u2026", font, size) > room:
        text = text[:-1]
    return text + "\u2026"


def clip_rows(rows: Sequence[list[Any]], widths: Sequence[float]) -> list[list[Any]]:
    """Every text cell of ``rows`` clipped to its column (other cells pass unchanged)."""
    return [
        [clip(v, w) if isinstance(v, str) else v for v, w in zip(row, widths, strict=True)]
        for row in rows
    ]


def para(text: str, style: str = "body") -> Paragraph:
    return Paragraph(text, STYLES[style])


def kv_table(rows: Sequence[tuple[str, str]], widths: tuple[float, float]) -> Table:
    """A two-column label/value table (cover pages, summaries)."""
    data = [
        [Paragraph(esc(k), STYLES["cellb"]), Paragraph(esc(v), STYLES["cell"])] for k, v in rows
    ]
    t = Table(data, colWidths=list(widths))
    t.setStyle(
        TableStyle(
            [
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("LINEBELOW", (0, 0), (-1, -1), 0.25, RULE),
                ("LEFTPADDING", (0, 0), (-1, -1), 2),
                ("TOPPADDING", (0, 0), (-1, -1), 1.5),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 1.5),
            ]
        )
    )
    return t


def fit_size(c: Any, text: str, font: str, size: float, width: float) -> float:
    """The largest font size (down to 4 pt, in 0.25 pt steps) at which ``text`` fits ``width``."""
    if len(text) * size <= width:  # no glyph of these fonts is wider than 1 em: it fits
        return size
    while size > 4 and c.stringWidth(text, font, size) > width:
        size -= 0.25
    return size
