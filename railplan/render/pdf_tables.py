"""Tables on PDF pages: the common grid style, long tables that fill pages, key-value tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from reportlab.lib.rl_accel import fp_str
from reportlab.lib.units import mm
from reportlab.platypus import (
    Flowable,
    Paragraph,
    Table,
    TableStyle,
)

from railplan.render.pdf_common import (
    BOLD,
    FONT,
    INK,
    MIN_PAGE_PT,
    RULE,
    SHADE,
    STYLES,
    CheckBox,
    Swatch,
    draw_string,
    esc,
    max_width,
    ops_cache,
    text_ops,
)

#: cells drawn by FastTable itself: fixed-size flowables with no space before or after
_FORM_CELLS = (CheckBox, Swatch)


class FastTable(Table):
    """reportlab's Table, drawing its one-line text cells with ``draw_string``.

    Same layout, same PDF bytes (``Table.draw`` and ``Table._drawCell``'s placement of a left-
    or right-aligned string, reproduced for the one-line, unlinked, left-to-right cells these
    tables hold); every other cell goes through reportlab's own ``_drawCell``. A row whose
    cells share one style is written in one pass: its font set once, each column's x and the
    row's y formatted once, each text as the operators ``draw_string`` would write.
    """

    #: per row, the style its cells share (``row_styles``), set by ``styled_table``
    row_styles: list[Any] | None = None

    def draw(self) -> None:
        """``Table.draw`` (reportlab 4.x) for tables without spans, shadows or render
        callbacks, the rows of one cell style written by ``_draw_row``."""
        plain = hasattr(self, "_makeRoundedCornersClip") and hasattr(self, "_drawBkgrnd")
        if (
            not plain
            or self._spanCmds
            or getattr(self, "_renderCB", None)
            or getattr(self, "_shadow", None)
        ):
            super().draw()
            return
        c = self.canv
        c.saveState()
        self._curweight = self._curcolor = self._curcellstyle = None
        self._makeRoundedCornersClip()
        self._drawBkgrnd()
        styles = self.row_styles
        if styles is None or len(styles) != len(self._cellStyles):  # not from styled_table
            styles = row_styles(self._cellStyles)
        columns: dict[float, tuple[list[str], list[float]]] = {}
        rows = zip(self._cellvalues, self._cellStyles, styles, self._rowpositions[1:],
                   self._rowHeights, strict=True)  # fmt: skip
        for row, rowstyle, st, rowpos, rowheight in rows:
            if st is not None and st is not rowstyle[0]:  # rows changed since styled_table
                st = row_styles([rowstyle])[0]
            if st is None or not c.bottomup:
                cells = zip(row, rowstyle, self._colpositions, self._colWidths, strict=False)
                for cellval, cellstyle, colpos, colwidth in cells:
                    self._drawCell(cellval, cellstyle, (colpos, rowpos), (colwidth, rowheight))
                continue
            pad = st.leftPadding
            xs = columns.get(pad)
            if xs is None:
                lefts = [x + pad for x in self._colpositions[:-1]]
                xs = columns[pad] = ([fp_str(x) for x in lefts], lefts)
            self._draw_row(st, xs, row, rowstyle, rowpos, rowheight)
        self._drawLines()
        c.restoreState()
        if getattr(self, "_roundingRectDef", None):
            self._restoreRoundingObscuredLines()

    def _draw_row(self, st: Any, xs: tuple[list[str], list[float]], row: Sequence[Any],
                  rowstyle: Sequence[Any], rowpos: float, rowheight: float) -> None:  # fmt: skip
        """A row whose cells all draw alike (style ``st``, left-aligned, middle): the font set
        once, the row's y formatted once, each text as ``draw_string``'s operators, each box
        or swatch as the form reference ``Flowable.drawOn`` writes."""
        self._style_cell(st)
        canv = self.canv
        code = canv._code
        font = canv._fontname
        known = ops_cache(font)
        forms = _known_forms(canv)
        lefts, x_at = xs
        y = (rowpos + (st.bottomPadding + rowheight - st.topPadding
                       + st.leading) / 2.0 - st.fontsize)  # fmt: skip
        ys = fp_str(y)
        for j, cellval in enumerate(row):
            kind = type(cellval)
            if kind is str:
                coded = known.get(cellval) or text_ops(font, cellval)
                if coded and "\n" not in cellval:
                    code.append(f"BT 1 0 0 1 {lefts[j]} {ys} Tm {coded}")
                    continue
            elif kind in _FORM_CELLS and cellval.form in forms:
                h = cellval.height
                fy = rowpos + (rowheight + st.bottomPadding - st.topPadding + h) / 2.0
                code += ("q", f"1 0 0 1 {fp_str(x_at[j], fy - h)} cm",
                         f"/{forms[cellval.form]} Do", "Q")  # fmt: skip
                canv._formsinuse.append(cellval.form)
                continue
            self._drawCell(cellval, rowstyle[j], (self._colpositions[j], rowpos),
                           (self._colWidths[j], rowheight))  # fmt: skip
            if kind in _FORM_CELLS and canv.hasForm(cellval.form):
                forms[cellval.form] = canv._doc.getXObjectName(cellval.form)

    def _drawCell(self, cellval: Any, cellstyle: Any, pos: Any, size: Any) -> None:
        just = cellstyle.alignment
        if type(cellval) in _FORM_CELLS and just == "LEFT" and cellstyle.valign == "MIDDLE":
            self._style_cell(cellstyle)  # a box or swatch: placed as reportlab places it
            colpos, rowpos = pos
            h = cellval.wrapOn(self.canv, size[0], size[1])[1]
            y = rowpos + (size[1] + cellstyle.bottomPadding - cellstyle.topPadding + h) / 2.0
            cellval.drawOn(self.canv, colpos + cellstyle.leftPadding, y - h)
            return
        if (
            type(cellval) is not str
            or "\n" in cellval
            or just not in ("LEFT", "RIGHT")
            or cellstyle.valign != "MIDDLE"
            or cellstyle.href
            or cellstyle.destination
            or cellstyle.direction
            or cellstyle.shaping
        ):
            super()._drawCell(cellval, cellstyle, pos, size)
            return
        canv = self.canv
        self._style_cell(cellstyle)
        colpos, rowpos = pos
        colwidth, rowheight = size
        y = (rowpos + (cellstyle.bottomPadding + rowheight - cellstyle.topPadding
                       + cellstyle.leading) / 2.0 - cellstyle.fontsize)  # fmt: skip
        if just == "LEFT":
            draw_string(canv, colpos + cellstyle.leftPadding, y, cellval)
        else:
            draw_string(canv, colpos + colwidth - cellstyle.rightPadding, y, cellval, "right")

    def _style_cell(self, cellstyle: Any) -> None:
        """As reportlab: set the fill colour and font when the cell's style differs."""
        cur: Any = self._curcellstyle  # set by draw
        if cur is not cellstyle:
            if cur is None or cellstyle.color != cur.color:
                self.canv.setFillColor(cellstyle.color)
            if (
                cur is None
                or cellstyle.leading != cur.leading
                or cellstyle.fontname != cur.fontname
                or cellstyle.fontsize != cur.fontsize
            ):
                self.canv.setFont(cellstyle.fontname, cellstyle.fontsize, cellstyle.leading)
            self._curcellstyle = cellstyle


def _look(s: Any) -> tuple[Any, ...]:
    """What of a cell style decides how its cell is drawn (two cells alike draw alike)."""
    return (s.color, s.fontname, s.fontsize, s.leading, s.alignment, s.valign, s.leftPadding,
            s.rightPadding, s.topPadding, s.bottomPadding, s.href, s.destination, s.direction,
            s.shaping)  # fmt: skip


def row_styles(cell_styles: Sequence[Sequence[Any]]) -> list[Any]:
    """Per row, its first cell's style where every cell of the row draws alike with it, left-
    aligned and centred in height, with no link or text direction (``FastTable._draw_row``
    writes such a row in one pass); None where the row must be drawn cell by cell."""
    out: list[Any] = []
    for styles in cell_styles:
        first = styles[0] if styles else None
        ok = (first is not None and first.alignment == "LEFT" and first.valign == "MIDDLE"
              and not (first.href or first.destination or first.direction or first.shaping))  # fmt: skip
        if ok:
            look = _look(first)
            ok = all(s is first or _look(s) == look for s in styles)
        out.append(first if ok else None)
    return out


def _known_forms(canv: Any) -> dict[str, str]:
    """The forms this canvas has drawn (name -> its XObject name), kept on the canvas."""
    forms: dict[str, str] | None = getattr(canv, "_railplan_forms", None)
    if forms is None:
        forms = canv._railplan_forms = {}
    return forms


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


#: the height of a table row, and the least a table's rows are squeezed to so that its last
#: rows stay on the page instead of opening a near-empty one (7 pt text plus 1 pt padding)
ROW_H = 4.6 * mm
MIN_ROW_H = 3.8 * mm
#: fewest rows a table leaves on a page, or carries over to the next one
MIN_PIECE = 3
CAPTION_H = 6 * mm
NOTE_H = 4.5 * mm


#: style commands kept per table (backgrounds, rules, spans); every other command sets cell styles
_TABLE_OPS = frozenset({"BACKGROUND", "ROWBACKGROUNDS", "COLBACKGROUNDS", "SPAN", "NOSPLIT",
                        "ROUNDEDCORNERS", "GRID", "BOX", "OUTLINE", "INNERGRID", "LINEBELOW",
                        "LINEABOVE", "LINEBEFORE", "LINEAFTER"})  # fmt: skip
_CELL_STYLES: dict[tuple[str, int, int], tuple[list[list[Any]], list[Any]]] = {}


def styled_table(
    rows: list[list[Any]], widths: Sequence[float], row_h: float, style: TableStyle
) -> FastTable:
    """A FastTable of ``rows`` in ``style``, its cell styles shared with earlier tables of the
    same shape and style (reportlab's ``cellStyles`` argument): applying a style cell by cell
    cost as much as drawing the table, and these cell styles are only read once set."""
    cmds = style.getCommands()
    cell = [c for c in cmds if c[0] not in _TABLE_OPS]
    key = (repr(cell), len(rows), len(widths))
    if any(isinstance(c[1][1], str) or isinstance(c[2][1], str) for c in cell):
        t = FastTable(rows, colWidths=list(widths), rowHeights=row_h)  # "splitfirst" rows
        t.setStyle(style)
        return t
    shared = _CELL_STYLES.get(key)
    if shared is None:
        if len(_CELL_STYLES) > 512:
            _CELL_STYLES.clear()
        template = Table(rows, colWidths=list(widths), rowHeights=row_h)
        template.setStyle(TableStyle(cell))
        shared = _CELL_STYLES[key] = (template._cellStyles, row_styles(template._cellStyles))
    # the rows hold text and flowables only (no None for reportlab to blank): no copy of them
    normalized = all(v is not None for r in rows for v in r)
    t = FastTable(rows, colWidths=list(widths), rowHeights=row_h, normalizedData=normalized,
                  cellStyles=[list(r) for r in shared[0]])  # fmt: skip
    t.row_styles = shared[1]
    t.setStyle(TableStyle([c for c in cmds if c[0] in _TABLE_OPS]))
    return t


class RowsTable(Flowable):
    """A long table that fills each page and repeats its header on every page.

    Cheaper than one reportlab Table split page by page (each piece is built once), and
    unlike fixed chunks it starts right below whatever is already on the page. Where a table
    with a ``caption`` breaks, the piece before the break ends with "<caption> continued on
    next page" and the piece after it opens with "<caption> (continued)". A remainder that fits
    the page with rows squeezed to ``MIN_ROW_H`` is drawn on it rather than opening a new page,
    and a break never leaves fewer than ``MIN_PIECE`` rows on either side.
    """

    def __init__(
        self,
        header: Sequence[Any],
        rows: Sequence[Sequence[Any]],
        widths: Sequence[float],
        row_h: float = ROW_H,
        extra: Sequence[tuple[Any, ...]] = (),
        start: int = 0,
        caption: str = "",
        stop: int | None = None,
    ) -> None:
        super().__init__()
        self.header = list(header)
        self.rows = rows
        self.widths = list(widths)
        self.row_h = row_h
        self.extra = list(extra)
        self.start = start
        self.stop = len(rows) if stop is None else stop
        self.caption = caption

    def __len__(self) -> int:
        return self.stop - self.start

    @property
    def continued(self) -> bool:
        """Whether this piece carries on a table begun on an earlier page."""
        return bool(self.caption) and self.start > 0

    @property
    def continues(self) -> bool:
        """Whether the table carries on after this piece, on the next page."""
        return bool(self.caption) and self.stop < len(self.rows)

    def _top(self) -> float:
        return CAPTION_H if self.continued else 0.0

    def _table(self) -> Table:
        body = [list(r) for r in self.rows[self.start : self.stop]]
        return styled_table([self.header, *body], self.widths, self.row_h,
                            grid_style(1, self.extra))  # fmt: skip

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        bottom = NOTE_H if self.continues else 0.0
        return sum(self.widths), self._top() + (len(self) + 1) * self.row_h + bottom

    def _piece(self, start: int, stop: int, row_h: float) -> RowsTable:
        return RowsTable(self.header, self.rows, self.widths, row_h, self.extra, start,
                         self.caption, stop)  # fmt: skip

    def split(self, aw: float, ah: float) -> list[Flowable]:
        n = len(self)
        room = ah - self._top()
        squeezed = math.floor(room / (n + 1) * 100) / 100
        if squeezed >= MIN_ROW_H:  # the rest fits with rows a little tighter: no new page
            return [self._piece(self.start, self.stop, min(self.row_h, squeezed))]
        fit = int((room - (NOTE_H if self.caption else 0)) // self.row_h) - 1
        if fit < min(MIN_PIECE, n):
            return []  # too little room: the frame moves on to the next page
        fit = min(fit, n - MIN_PIECE) if n - fit < MIN_PIECE else fit
        if fit < MIN_PIECE:
            return []
        stop = self.start + fit
        return [self._piece(self.start, stop, self.row_h), self._piece(stop, self.stop, self.row_h)]

    def drawOn(self, canvas: Any, x: float, y: float, _sW: float = 0) -> None:
        _, height = self.wrap(0, 0)
        t = self._table()
        t.wrapOn(canvas, sum(self.widths), (len(self) + 1) * self.row_h)
        bottom = NOTE_H if self.continues else 0.0
        t.drawOn(canvas, x, y + bottom, _sW)
        if self.continued:
            canvas.saveState()
            canvas.setFont(BOLD, 11)
            canvas.setFillColor(INK)
            draw_string(canvas, x, y + height - CAPTION_H + 2 * mm, f"{self.caption} (continued)")
            canvas.restoreState()
        if self.continues:
            canvas.saveState()
            canvas.setFont(FONT, 7.5)
            canvas.setFillColor(INK)
            draw_string(canvas, x + sum(self.widths), y + 1.2 * mm,
                        f"{self.caption} continued on next page", "right")  # fmt: skip
            canvas.restoreState()

    def all_rows(self) -> Sequence[Sequence[Any]]:
        return self.rows[self.start : self.stop]


def paged_tables(
    header: Sequence[Any],
    rows: Sequence[Sequence[Any]],
    widths: Sequence[float],
    height: float = 0,
    row_h: float = ROW_H,
    extra: Sequence[tuple[Any, ...]] = (),
    caption: str = "",
) -> list[Flowable]:
    """``rows`` under a header that repeats on every page, marked "continued" across a page
    break when ``caption`` names the table (``height`` is unused, kept for callers that size
    tables by the frame)."""
    del height
    return [RowsTable(header, rows, widths, row_h, extra, caption=caption)]


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


#: a cell's text sits between 2 pt paddings (``grid_style``)
PAD = 4.0


def widest(texts: Sequence[str], font: str = FONT, size: float = 7) -> float:
    """The width in points of the widest of ``texts`` (reportlab's ``stringWidth``)."""
    return max_width(texts, font, size)


def fit_widths(
    header: Sequence[str], rows: Sequence[Sequence[Any]], total: float, rel: Sequence[float],
    size: float = 7, floor: float = MIN_PAGE_PT,
) -> tuple[list[float], list[tuple[Any, ...]]]:  # fmt: skip
    """Column widths for ``rows`` under ``header`` across ``total`` points: each column at least
    as wide as its widest cell (header in bold), the room left shared in proportion to ``rel``.

    Returns the widths and the style commands for columns whose text must be set smaller (down
    to ``floor`` pt) when the widest cells of all columns together exceed ``total``.
    """
    need: list[float] = []
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in header]
    for head, column in zip(header, columns, strict=True):
        texts = [v for v in column if isinstance(v, str)]
        shapes = [v.wrap(0, 0)[0] for v in column[:50] if isinstance(v, Flowable)]
        need.append(max(widest([head], BOLD, size), widest(texts, FONT, size), *shapes, 0) + PAD)
    spare = total - sum(need)
    if spare >= 0:
        return [n + spare * r / sum(rel) for n, r in zip(need, rel, strict=True)], []
    # too wide at full size: set the text smaller, in 0.25 pt steps rounded down (so every
    # widest cell still fits its column at that size), never below the floor
    scale = (total - PAD * len(need)) / (sum(need) - PAD * len(need))
    small = max(floor, math.floor(size * scale * 4) / 4)
    widths = [PAD + (n - PAD) * small / size for n in need]
    cmds = [("FONT", (0, 0), (-1, 0), BOLD, small), ("FONT", (0, 1), (-1, -1), FONT, small)]
    left = total - sum(widths)
    return [w + left * r / sum(rel) for w, r in zip(widths, rel, strict=True)], cmds
