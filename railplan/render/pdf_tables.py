"""Tables on PDF pages: the common grid style, long tables that fill pages, key-value tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from reportlab.lib.units import mm
from reportlab.platypus import (
    Flowable,
    Paragraph,
    Table,
    TableStyle,
)

from railplan.render.pdf_common import BOLD, FONT, INK, RULE, SHADE, STYLES, esc


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
        t = Table([self.header, *body], colWidths=self.widths, rowHeights=self.row_h)
        t.setStyle(grid_style(1, self.extra))
        return t

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
            canvas.drawString(x, y + height - CAPTION_H + 2 * mm, f"{self.caption} (continued)")
            canvas.restoreState()
        if self.continues:
            canvas.saveState()
            canvas.setFont(FONT, 7.5)
            canvas.setFillColor(INK)
            canvas.drawRightString(x + sum(self.widths), y + 1.2 * mm,
                                   f"{self.caption} continued on next page")  # fmt: skip
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
