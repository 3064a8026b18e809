"""Sheet table cells: no text overflows or is cut in its cell (header included), and the fast
table drawing writes the very bytes reportlab's own Table and drawString would."""

from __future__ import annotations

from typing import Any

import pytest
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen import canvas as rl_canvas
from reportlab.platypus import Table

from railplan.catalog import load_catalog
from railplan.physical.bom import bom
from railplan.render import pdf_canvas, pdf_labels
from railplan.render import pdf_common as pc
from railplan.render import pdf_tables as ptab
from railplan.render.pdf_document import DocInfo
from railplan.render.pdf_labels import render_labels
from railplan.render.pdf_sheets import render_sheets, sheets_story
from railplan.render.pdf_tables import RowsTable
from railplan.render.pdf_testplan import render_testplan
from tests.test_testplan import cabled, example_plan


def _font_size(table: RowsTable) -> float:
    sizes = [cmd[4] for cmd in table.extra if cmd[0] == "FONT"]
    return sizes[-1] if sizes else 7.0


def overflowing(table: RowsTable) -> list[tuple[str, float, float]]:
    """(text, its width, the room in its cell) of every text cell wider than its cell or cut."""
    size = _font_size(table)
    out = []
    for font, row in [(pc.BOLD, table.header), *[(pc.FONT, r) for r in table.all_rows()]]:
        for text, width in zip(row, table.widths, strict=True):
            if not isinstance(text, str):
                continue
            used = stringWidth(text, font, size)
            if used > width - ptab.PAD + 1e-6 or text.endswith("\u2026"):
                out.append((text, used, width - ptab.PAD))
    return out


@pytest.mark.parametrize("name", ["h100-1k", "superpod-h100-4su"])
def test_sheet_tables_text_fits_its_cells(name: str) -> None:
    """Cable tables and port maps: every cell's text (A/B optics that differ, part numbers,
    labels) and every header ("Link cable" beside "A rack / U") fits its column at the size
    it is set in, never below 6 pt, and nothing is cut with an ellipsis."""
    design = cabled(name)
    story = sheets_story(
        design, DocInfo("Cabling sheets", design.name, "r", "h"), bom(design, load_catalog())
    )
    tables = [f for f in story if isinstance(f, RowsTable)]
    assert len(tables) > 10
    optics = [r[10] for t in tables if t.header[10] == "Optics A / B" for r in t.all_rows()]
    assert any(" / " in o for o in optics)  # the two ends' parts differ somewhere
    for table in tables:
        assert _font_size(table) >= pc.MIN_PAGE_PT
        assert overflowing(table) == []


def test_fit_widths_gives_each_column_its_widest_cell() -> None:
    header = ["Link cable", "A rack / U"]
    rows = [["C00001", "R0101 U26"], ["C00002", "R0101 U2"]]
    widths, small = ptab.fit_widths(header, rows, 200.0, [1, 1])
    assert small == []
    assert widths[0] >= stringWidth("Link cable", pc.BOLD, 7) + ptab.PAD
    assert sum(widths) == pytest.approx(200.0)
    # too narrow at 7 pt: set smaller, never below the 6 pt floor
    widths, small = ptab.fit_widths(header, [["x" * 40, "y" * 40]], 200.0, [1, 1])
    assert small and small[-1][-1] >= pc.MIN_PAGE_PT
    assert sum(widths) == pytest.approx(200.0)


def _reference_string(c: Any, x: float, y: float, text: str, align: str = "left") -> None:
    (c.drawRightString if align == "right" else c.drawString)(x, y, text)


def _reference_table(rows: list[list[Any]], widths: Any, row_h: float, style: Any) -> Table:
    t = Table(rows, colWidths=list(widths), rowHeights=row_h)
    t.setStyle(style)
    return t


def _reference_clip_rows(rows: Any, widths: Any, size: float = 7) -> list[list[Any]]:
    return [[pc.clip(v, w, pc.FONT, size) if isinstance(v, str) else v
             for v, w in zip(row, widths, strict=True)] for row in rows]  # fmt: skip


def _reference_max_width(texts: Any, font: str = pc.FONT, size: float = 7) -> float:
    return max((stringWidth(t, font, size) for t in texts), default=0.0)


def test_fast_drawing_is_byte_identical_to_reportlab(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sheets, labels and test plan drawn with FastTable (rows in one pass), shared cell
    styles, draw_string, labels written straight onto the page, widths measured in bulk and
    columns clipped only where a cell is too wide, pages deflated by a worker thread equal,
    byte for byte, the same documents drawn by reportlab's Table and drawString, label by
    label through the canvas, every width and every cell measured one by one, every page
    deflated by reportlab as it saves."""
    design = cabled("seed003-roft")
    b = bom(design, load_catalog())
    tp = example_plan("seed003-roft")

    def docs() -> tuple[bytes, bytes, bytes]:
        return render_sheets(design, b)[0], render_labels(design)[0], render_testplan(tp)[0]

    fast = docs()
    monkeypatch.setattr(ptab, "styled_table", _reference_table)
    monkeypatch.setattr(pc, "draw_string", _reference_string)
    monkeypatch.setattr(pc, "clip_rows", _reference_clip_rows)
    monkeypatch.setattr(ptab, "max_width", _reference_max_width)
    monkeypatch.setattr(pdf_labels._LabelWriter, "write", lambda *_: False)
    monkeypatch.setattr(pdf_canvas.CompressingCanvas, "showPage", rl_canvas.Canvas.showPage)
    assert docs() == fast
