"""Tables on PDF pages: the common grid style, long tables that fill pages, key-value tables."""

from __future__ import annotations

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
