"""The fast PDF writers against reportlab's own drawing: table rows written in one pass, labels
written straight onto the page, widths measured in bulk and fitted sizes found by bisection
give the very bytes (and numbers) the step-by-step, cell-by-cell reportlab code gives."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reportlab.lib.rl_accel import escapePDF, unicode2T1
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.pdfmetrics import getFont, stringWidth
from reportlab.pdfgen import canvas as rl_canvas
from reportlab.platypus import Paragraph, Table

from railplan.render import pdf_common as pc
from railplan.render import pdf_labels as plab
from railplan.render import pdf_tables as ptab
from railplan.render.pdf_canvas import CompressingCanvas, _Deflated
from railplan.render.sheet_rows import CableRow, End

FONTS = (pc.FONT, pc.BOLD, pc.MONO)
#: printable ASCII, the characters PDF strings escape, and some outside the ASCII range
#: (in WinAnsi, in a substitute font, in no font)
TEXT = st.text(
    alphabet=st.sampled_from([*pc._PRINTABLE, "(", ")", "\\", "\u2026", "\u00e9", "\u00b5",
                              "\u03b1", "\u2192", "\u4e2d", "\t"]),
    max_size=30,
)  # fmt: skip
SAFE_TEXT = st.text(alphabet=st.sampled_from([*pc._PRINTABLE, "\u2026", "\u00e9"]), max_size=30)


def _reference_ops(fontname: str, text: str) -> str:
    font = getFont(fontname)
    pieces = unicode2T1(text, [font, *font.substitutionFonts]) if text else []
    simple = len(pieces) == 1 and pieces[0][0] is font and not font._dynamicFont
    return f"({escapePDF(pieces[0][1])}) Tj T* ET" if simple else ""


@settings(deadline=None)
@given(st.sampled_from(FONTS), TEXT)
def test_text_ops_are_reportlabs_encoding(font: str, text: str) -> None:
    assert pc.text_ops(font, text) == _reference_ops(font, text)


@settings(deadline=None)
@given(st.sampled_from(FONTS), TEXT, st.sampled_from([8.5, 7, 6.25, 6, 4.75]))
def test_text_width_is_stringwidth(font: str, text: str, size: float) -> None:
    assert pc.text_width(text, font, size) == stringWidth(text, font, size)
    assert pc.show_ops(font, text) == _reference_ops(font, text)


@settings(deadline=None)
@given(st.lists(TEXT, max_size=40), st.sampled_from(FONTS), st.sampled_from([7, 6.25, 6, 8.5]))
def test_max_width_is_the_widest_stringwidth(texts: list[str], font: str, size: float) -> None:
    want = max((stringWidth(t, font, size) for t in texts), default=0.0)
    assert pc.max_width(texts, font, size) == want


def _step_fit(text: str, font: str, size: float, width: float, floor: float) -> float:
    if len(text) * size <= width:
        return size
    while size > floor and stringWidth(text, font, size) > width:
        size -= 0.25
    return size


@settings(deadline=None)
@given(SAFE_TEXT, st.sampled_from(FONTS), st.sampled_from([8.5, 7, 6, 5.75, 4]),
       st.floats(0, 250), st.sampled_from([6.0, 4.0, 5.5]))  # fmt: skip
def test_fit_size_is_the_step_by_step_search(
    text: str, font: str, size: float, width: float, floor: float
) -> None:
    got, fits = pc.fitted_size(pdfmetrics, text, font, size, width, floor)
    assert got == _step_fit(text, font, size, width, floor)
    assert fits == (stringWidth(text, font, got) <= width)


def _cells() -> st.SearchStrategy[Any]:
    return st.one_of(
        TEXT,
        st.just(pc.CHECKBOX),
        st.sampled_from(["blue", "white", "rose", "nosuch"]).map(pc.swatch),
        st.just("two\nlines"),
        st.just(Paragraph("para <b>bold</b>", pc.STYLES["cell"])),
    )


def _draw(table: Table, rows_h: float) -> bytes:
    buf = io.BytesIO()
    c = rl_canvas.Canvas(buf, invariant=1)
    for _ in range(2):  # the second page finds the box and swatch forms already drawn
        table.wrapOn(c, 500, rows_h)
        table.drawOn(c, 30, 40)
        c.showPage()
    c.save()
    return buf.getvalue()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.lists(st.lists(_cells(), min_size=n, max_size=n), min_size=1, max_size=8)
    ),
    st.sampled_from([(), "small", "right", "top"]),
    st.sampled_from([ptab.ROW_H, ptab.MIN_ROW_H, 11.3]),
)
def test_fast_table_writes_reportlabs_bytes(
    rows: list[list[Any]], extra: Any, row_h: float
) -> None:
    """Rows of text (escaped characters, characters outside the font, empty, two lines),
    boxes, swatches and paragraphs, in the sheets' grid style with smaller text, a right-
    aligned column or top-aligned cells: FastTable's bytes are reportlab Table's."""
    n = len(rows[0])
    widths = [480 / n] * n
    cmds: dict[Any, list[tuple[Any, ...]]] = {
        (): [],
        "small": [
            ("FONT", (0, 0), (-1, 0), pc.BOLD, 6.25),
            ("FONT", (0, 1), (-1, -1), pc.FONT, 6.25),
        ],
        "right": [("ALIGN", (n - 1, 0), (-1, -1), "RIGHT")],
        "top": [("VALIGN", (0, 1), (-1, -1), "TOP")],
    }
    header = [f"H{j}" for j in range(n)]
    style = ptab.grid_style(1, cmds[extra])
    fast = ptab.styled_table([header, *rows], widths, row_h, style)
    reference = Table([header, *rows], colWidths=widths, rowHeights=row_h)
    reference.setStyle(style)
    height = (len(rows) + 1) * row_h
    assert _draw(fast, height) == _draw(reference, height)


def _row(texts: list[str], colour: str, length: str, physical: str) -> CableRow:
    a = End(texts[0], texts[1], "R0101", 3)
    b = End(texts[2], texts[3], "R0102", None)
    return CableRow("C00001", "L1", "leaf-spine", a, b, "m", "-", "-", length, texts[4],
                    texts[5], colour, 400, physical, "A1-B1" if physical else "")  # fmt: skip


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.builds(
            _row,
            st.lists(TEXT, min_size=6, max_size=6),
            st.sampled_from(["", "blue", "white", "aqua", "nosuch"]),
            st.sampled_from(["3", "12.5", "-"]),
            st.sampled_from(["", "P00012"]),
        ),
        min_size=1,
        max_size=12,
    ),
    st.sampled_from(sorted(plab.LABEL_GRIDS)),
)
def test_label_writer_writes_what_the_canvas_draws(rows: list[CableRow], grid: str) -> None:
    """Labels of long, short, escaped and non-ASCII texts, with and without a colour: the
    operators written straight onto the page are the ones ``_label`` draws through the
    canvas, byte for byte, the PDF included."""
    g = plab.LABEL_GRIDS[grid]
    size = pc.PAGE_SIZES[g.page]

    def document(fast: bool) -> bytes:
        buf = io.BytesIO()
        c = rl_canvas.Canvas(buf, pagesize=size, invariant=1)
        writer = plab._LabelWriter(c)
        for i, (row, end) in enumerate((r, e) for r in rows for e in "AB"):
            slot = plab._Slot(20.0 + 150 * (i % 3), size[1] - 100 - 80 * (i // 3 % 8), 129.5, 72.0)
            if not (fast and writer.write(slot, row, end)):
                plab._label(c, slot.x, slot.y, slot.w, slot.h, row, end)
        c.showPage()
        c.save()
        return buf.getvalue()

    assert document(True) == document(False)


def test_label_writer_draws_most_labels_itself() -> None:
    """The fast path is taken: after the first label, labels of a known colour in plain text
    are written by the writer (the test above would pass were it never used)."""
    c = rl_canvas.Canvas(io.BytesIO(), invariant=1)
    writer = plab._LabelWriter(c)
    row = _row(["node0001", "nic0.p1", "leaf01", "P1/1", "R1-U3-N1", "R2-U40-L1-P1"], "blue",
               "3", "")  # fmt: skip
    slot = plab._Slot(20.0, 700.0, 129.5, 72.0)
    taken = []
    for _ in range(4):
        done = writer.write(slot, row, "A")
        if not done:
            plab._label(c, slot.x, slot.y, slot.w, slot.h, row, "A")
        taken.append(done)
    assert taken == [False, False, True, True]  # fonts named, then the swatch form drawn


def test_pages_deflated_ahead_are_reportlabs_bytes() -> None:
    """Pages deflated by the worker thread (each page's stream has the filter holding the
    worker's result) save to the bytes reportlab's own deflate at save time gives."""

    def document(kind: type[rl_canvas.Canvas]) -> tuple[bytes, list[Any]]:
        buf = io.BytesIO()
        c = kind(buf, invariant=1)
        for page in range(3):
            c.setFont(pc.FONT, 7)
            for k in range(200):
                c.drawString(20, 20 + 3 * k, f"page {page} line {k} (x\\y)")
            c.showPage()
        filters = [p.Contents.filters[-1] if p.Contents else None for p in c._doc.Pages.pages]
        c.save()
        return buf.getvalue(), filters

    fast, filters = document(CompressingCanvas)
    assert len(filters) == 3 and all(isinstance(f, _Deflated) for f in filters)
    assert fast == document(rl_canvas.Canvas)[0]


def test_a_split_fast_table_draws_as_reportlab_splits_it() -> None:
    """A FastTable split by reportlab (header repeated, the last row bold): each piece draws
    the bytes the split reportlab Table draws, though its rows' styles moved."""
    rows = [[f"r{i}", f"cell {i}", "-"] for i in range(12)]
    style = ptab.grid_style(1, [("FONT", (0, -1), (-1, -1), pc.BOLD, 7)])
    widths = [60.0, 80.0, 40.0]

    def pieces(table: Table) -> bytes:
        table.repeatRows = 1
        buf = io.BytesIO()
        c = rl_canvas.Canvas(buf, invariant=1)
        table.wrapOn(c, 200, 1000)
        for piece in table.split(200, 12.5 * ptab.ROW_H):
            piece.wrapOn(c, 200, 1000)
            piece.drawOn(c, 30, 40)
            c.showPage()
        c.save()
        return buf.getvalue()

    reference = Table([["A", "B", "C"], *rows], colWidths=widths, rowHeights=ptab.ROW_H)
    reference.setStyle(style)
    fast = ptab.styled_table([["A", "B", "C"], *rows], widths, ptab.ROW_H, style)
    assert pieces(fast) == pieces(reference)
