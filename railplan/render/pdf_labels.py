"""Cable end labels on label stock (Avery grids): two labels per cable, its id and far end."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from reportlab.lib.rl_accel import fp_str
from reportlab.lib.units import mm
from reportlab.pdfgen import canvas as rl_canvas

from railplan.design import Design
from railplan.render import pdf_common as pc
from railplan.render.pdf_canvas import CompressingCanvas
from railplan.render.pdf_common import Progress
from railplan.render.sheet_rows import CableRow, cable_rows

#: the smallest text on a label, as on the sheets; a label's own text that cannot fit at it
#: (a long device name) goes down to LABEL_LAST_PT rather than being cut off the label
LABEL_MIN_PT = 6.0
LABEL_LAST_PT = 4.0


def _fit(c: Any, text: str, font: str, size: float, width: float) -> float:
    if len(text) * size <= width:  # no glyph of the built-in fonts is wider than 1 em
        return size
    fitted, fits = pc.fitted_size(c, text, font, size, width, floor=LABEL_MIN_PT)
    if fits:
        return fitted
    return pc.fit_size(c, text, font, fitted, width, floor=LABEL_LAST_PT)


@dataclass(frozen=True)
class LabelGrid:
    """A sheet of label stock: columns x rows labels of width x height, with the margins."""

    name: str
    page: str
    columns: int
    rows: int
    width_mm: float
    height_mm: float
    left_mm: float
    top_mm: float
    pitch_x_mm: float
    pitch_y_mm: float

    @property
    def per_page(self) -> int:
        return self.columns * self.rows


LABEL_GRIDS = {
    "avery-l7654": LabelGrid("avery-l7654", "a4", 4, 10, 45.7, 25.4, 9.7, 21.5, 48.3, 25.4),
    "avery-l7159": LabelGrid("avery-l7159", "a4", 3, 8, 63.5, 33.9, 6.5, 12.9, 66.0, 33.9),
    "avery-5160": LabelGrid("avery-5160", "letter", 3, 10, 66.7, 25.4, 4.8, 12.7, 69.85, 25.4),
}


def render_labels(
    design: Design, grid: LabelGrid | str = "avery-l7654", revision: str = "draft",
    design_hash: str = "", progress: Progress | None = None,
) -> tuple[bytes, int]:  # fmt: skip
    """A and B end labels of every cable on label stock; returns the PDF and its page count."""
    import io

    from railplan.testplan import design_hash as hash_of

    g = LABEL_GRIDS[grid] if isinstance(grid, str) else grid
    size = pc.PAGE_SIZES[g.page]
    buf = io.BytesIO()
    c = CompressingCanvas(buf, pagesize=size, invariant=1)
    c.setTitle(f"Cable labels: {design.name}")
    c.setAuthor("railplan")
    c.setCreator("railplan")
    rows = cable_rows(design)
    labels = [x for r in rows for x in ((r, "A"), (r, "B"))]
    pages = max(1, math.ceil(len(labels) / g.per_page))
    digest = design_hash or hash_of(design)
    pw, ph = size
    slots = []
    for i in range(g.per_page):
        col, line = i % g.columns, i // g.columns
        x = (g.left_mm + col * g.pitch_x_mm) * mm
        y = ph - (g.top_mm + line * g.pitch_y_mm + g.height_mm) * mm
        slots.append(_Slot(x, y, g.width_mm * mm, g.height_mm * mm))
    writer = _LabelWriter(c)
    for page in range(pages):
        chunk = labels[page * g.per_page : (page + 1) * g.per_page]
        for slot, (row, end) in zip(slots, chunk, strict=False):  # the last page may be part full
            if not writer.write(slot, row, end):
                _label(c, slot.x, slot.y, slot.w, slot.h, row, end)
        c.setFont(pc.FONT, 6)
        c.setFillColor(pc.GREY)
        c.drawCentredString(pw / 2, 4 * mm, f"{design.name}  |  cable labels ({g.name})  |  "
                            f"revision {revision}  |  design {digest}  |  page {page + 1} of {pages}")  # fmt: skip
        c.showPage()
        if progress is not None:
            progress("labels", page + 1, pages)
    c.save()
    return buf.getvalue(), pages


#: space between a label's edge and its text
PAD = 1.5 * mm


@dataclass(frozen=True)
class _Slot:
    """A label's place on the sheet, with the operators and coordinates that follow from it
    alone, computed by the very expressions ``_label`` uses (so each prints the same)."""

    x: float
    y: float
    w: float
    h: float

    @cached_property
    def rect(self) -> str:
        return f"n {fp_str(self.x, self.y, self.w, self.h)} re S"

    @cached_property
    def text_x(self) -> str:
        return fp_str(self.x + PAD)

    @cached_property
    def top(self) -> float:
        return self.y + self.h - PAD

    @cached_property
    def swatch_at(self) -> str:
        return f"1 0 0 1 {fp_str(self.x + PAD, self.y + PAD)} cm"

    @cached_property
    def last_at(self) -> str:
        return fp_str(self.x + PAD + 3.6 * mm, self.y + PAD + 0.6)


class _LabelWriter:
    """Writes a label's operators straight onto the page, byte for byte what ``_label`` draws
    through the canvas, once the canvas has drawn one label (fonts registered) and the
    label's colour swatch form; ``write`` returns False where ``_label`` must draw it."""

    def __init__(self, c: Any) -> None:
        self.c = c
        self.fonts: dict[tuple[str, float], str] = {}
        self.forms: dict[str, str] = {}
        self.ready = False
        self.stroke = self._ops(lambda k: k.setStrokeColor(pc.RULE))
        self.width = self._ops(lambda k: k.setLineWidth(0.3))
        self.fill = self._ops(lambda k: k.setFillColor(pc.INK))

    @staticmethod
    def _ops(draw: Any) -> str:
        """The operator a canvas method writes (drawn on a scratch canvas)."""
        import io

        scratch = rl_canvas.Canvas(io.BytesIO(), invariant=1)
        before = len(scratch._code)
        draw(scratch)
        return "\n".join(scratch._code[before:])

    def _font(self, font: str, size: float) -> str:
        op = self.fonts.get((font, size))
        if op is None:  # as Canvas.setFont, leading 1.2 x size
            name = self.c._doc.getInternalFontName(font)
            op = self.fonts[(font, size)] = (
                f"BT {name} {fp_str(size)} Tf {fp_str(size * 1.2)} TL ET"
            )
        return op

    def write(self, slot: _Slot, row: CableRow, end: str) -> bool:
        c = self.c
        if not self.ready:
            self.ready = c.bottomup  # the first label goes through the canvas (fonts named)
            return False
        here = row.a if end == "A" else row.b
        text = row.label_a if end == "A" else row.label_b
        other = row.label_b if end == "A" else row.label_a
        form = f"railplanLabelSwatch_{row.colour}" if row.colour else ""
        if form and form not in self.forms:
            if c.hasForm(form):
                self.forms[form] = c._doc.getXObjectName(form)
            return False
        inner = slot.w - 2 * PAD
        size = _fit(c, text, pc.BOLD, 8.5, inner)
        second = f"{end} end of {row.item}  {here.device} {here.port}"
        to = f"to {other}"
        to_size = _fit(c, to, pc.FONT, 6, inner)
        coded = (pc.show_ops(pc.BOLD, text), pc.show_ops(pc.FONT, second),
                 pc.show_ops(pc.FONT, to), pc.show_ops(pc.FONT, f"{row.colour}  {row.length} m"))  # fmt: skip
        if not all(coded):
            return False
        y1 = slot.top - size
        x = slot.text_x
        font = self._font
        ops = [self.stroke, self.width, slot.rect, self.fill, font(pc.BOLD, size),
               f"BT 1 0 0 1 {x} {fp_str(y1)} Tm {coded[0]}", font(pc.FONT, 6),
               f"BT 1 0 0 1 {x} {fp_str(y1 - 7.5)} Tm {coded[1]}", font(pc.FONT, to_size),
               f"BT 1 0 0 1 {x} {fp_str(y1 - 14.5)} Tm {coded[2]}"]  # fmt: skip
        if form:
            ops += ("q", slot.swatch_at, f"/{self.forms[form]} Do", "Q")
            c._formsinuse.append(form)
        ops += (font(pc.FONT, LABEL_MIN_PT), self.fill, f"BT 1 0 0 1 {slot.last_at} Tm {coded[3]}")
        c._code += ops
        return True


def _label(c: Any, x: float, y: float, w: float, h: float, row: CableRow, end: str) -> None:
    """One label drawn through the canvas (``_LabelWriter`` writes the same operators)."""
    here = row.a if end == "A" else row.b
    text = row.label_a if end == "A" else row.label_b
    other = row.label_b if end == "A" else row.label_a
    pad = PAD
    c.setStrokeColor(pc.RULE)
    c.setLineWidth(0.3)
    c.rect(x, y, w, h, stroke=1, fill=0)
    inner = w - 2 * pad
    size = _fit(c, text, pc.BOLD, 8.5, inner)
    c.setFillColor(pc.INK)
    c.setFont(pc.BOLD, size)
    pc.draw_string(c, x + pad, y + h - pad - size, text)
    c.setFont(pc.FONT, 6)
    pc.draw_string(
        c, x + pad, y + h - pad - size - 7.5, f"{end} end of {row.item}  {here.device} {here.port}"
    )
    to = f"to {other}"
    c.setFont(pc.FONT, _fit(c, to, pc.FONT, 6, inner))
    pc.draw_string(c, x + pad, y + h - pad - size - 14.5, to)
    if row.colour:
        form = f"railplanLabelSwatch_{row.colour}"
        if not c.hasForm(form):  # drawn once per document, placed by reference
            sw = 2.4 * mm
            c.beginForm(form, -1, -1, sw + 1, sw + 1)
            pc.draw_swatch(c, 0, 0, sw, sw, row.colour)
            c.endForm()
        c.saveState()
        c.translate(x + pad, y + pad)
        c.doForm(form)
        c.restoreState()
    c.setFont(pc.FONT, LABEL_MIN_PT)
    c.setFillColor(pc.INK)
    pc.draw_string(c, x + pad + 3.6 * mm, y + pad + 0.6, f"{row.colour}  {row.length} m")
