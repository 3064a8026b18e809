"""The topology figure (sheets page, ``railplan sheets --figure``): tiers as rows of boxes.

A Matrix is drawn by ``topology_matrix`` instead: its leaf groups as two columns.

The boxes and bundles are ``fabric_graph``'s, the grouping the DOT export uses, for one
plane; the figure is a reportlab ``Drawing``, so the same code draws the sheets' page and a
stand-alone SVG or PDF (``figure_bytes``).
"""

from __future__ import annotations

import math
from collections import defaultdict

from reportlab.graphics.shapes import Drawing, Group, Line, Polygon, PolyLine, Rect, String
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics
from reportlab.platypus import Flowable

from railplan.design import Design
from railplan.render import pdf_common as pc
from railplan.render.fabric_graph import Box, FabricGraph, fabric_graph
from railplan.render.topology_matrix import matrix_drawing, matrix_figure

#: boxes per tier row; Matrix draws nodes, A leaves and B leaves as columns of at most 8
MAX_BOXES = 12
MATRIX_BOXES = 8
#: box pairs between two rows up to which each line is labelled with its bundle size
MAX_LABELLED = 16
LEAF_BLUE = pc.colors.HexColor("#dfe5ef")


def row_name(box: Box) -> str:
    """The row's name at the left: nodes, leaf, leaf B, spine, core."""
    if box.role == "leaf-b":
        return "leaf B"
    return {0: "nodes", 1: "leaf", 2: "spine"}.get(box.tier, "core")


def figure_graph(design: Design, plane: int = 0) -> FabricGraph:
    """The figure's boxes: ``fabric_graph`` of one plane, at most ``MAX_BOXES`` per tier (a
    Matrix: ``MATRIX_BOXES`` per role, nodes and both leaf groups grouped alike)."""
    if design.topology == "matrix":
        return fabric_graph(design, MATRIX_BOXES, plane, per_role=True)
    return fabric_graph(design, MAX_BOXES, plane)


def _detail(design: Design, box: Box, models: dict[str, str]) -> str:
    if box.count > 1:
        word = "nodes" if box.role == "node" else "devices" if box.role == "device" else "switches"
        return f"{box.count:,} {word}"
    if box.role == "node":
        return f"{design.shape.ports} ports"
    return models.get(box.key, box.role)


def _text(x: float, y: float, text: str, size: float, bold: bool = False, **kw: object) -> String:
    font = pc.BOLD if bold else pc.FONT
    return String(x, y, text, fontName=font, fontSize=size, fillColor=pc.INK, **kw)


class _Layout:
    """Where every box sits: rows top (cores) to bottom (nodes), boxes spread across."""

    def __init__(self, graph: FabricGraph, width: float, height: float, legend_h: float) -> None:
        rows: dict[int, list[Box]] = defaultdict(list)
        for box in graph.boxes:
            rows[box.rank].append(box)
        self.rows = [rows[r] for r in sorted(rows, reverse=True)]
        gap = (height - legend_h) / max(len(self.rows), 1)
        self.box_h = min(11 * mm, gap * 0.42)
        self.left = 22 * mm
        span = width - self.left
        self.pos: dict[str, tuple[float, float, float]] = {}
        self.row_of: dict[str, int] = {}
        for r, boxes in enumerate(self.rows):
            slot = span / max(len(boxes), 1)
            bw = min(34 * mm, slot * 0.86)
            y = height - legend_h - (r + 0.5) * gap - self.box_h / 2
            for i, box in enumerate(boxes):
                self.pos[box.key] = (self.left + i * slot + (slot - bw) / 2, y, bw)
                self.row_of[box.key] = r


def _ordered(graph: FabricGraph, lay: _Layout) -> list[tuple[str, str, int]]:
    """Bundles with the upper box (nearer the cores) first."""
    out = []
    for a, b, n in graph.bundles:
        if lay.row_of[a] > lay.row_of[b]:
            a, b = b, a
        out.append((a, b, n))
    return out


def _meshes(lay: _Layout, bundles: list[tuple[str, str, int]]) -> dict[tuple[int, int], list[int]]:
    """Adjacent rows whose boxes are all linked to all, with one count, many times over."""
    per: dict[tuple[int, int], list[int]] = defaultdict(list)
    for a, b, n in bundles:
        per[(lay.row_of[a], lay.row_of[b])].append(n)
    out = {}
    for (ra, rb), counts in per.items():
        full = len(lay.rows[ra]) * len(lay.rows[rb])
        if rb == ra + 1 and len(counts) == full > MAX_LABELLED and len(set(counts)) == 1:
            out[(ra, rb)] = counts
    return out


def _mesh_band(lay: _Layout, ra: int, rb: int, counts: list[int], mid_x: float) -> Group:
    top, bottom = lay.rows[ra], lay.rows[rb]
    xs, xt = [lay.pos[b.key] for b in top], [lay.pos[b.key] for b in bottom]
    y_top, y_bot = xs[0][1], xt[0][1] + lay.box_h
    points = [xs[0][0], y_top, xs[-1][0] + xs[-1][2], y_top]
    points += [xt[-1][0] + xt[-1][2], y_bot, xt[0][0], y_bot]
    band = Group(Polygon(points, fillColor=pc.SHADE, strokeColor=pc.GREY, strokeWidth=0.5))
    text = f"full mesh: every box to every box, {counts[0]:,} links each ({sum(counts):,} links)"
    band.add(_text(mid_x, (y_top + y_bot) / 2 - 2.5, text, 7.5, True, textAnchor="middle"))
    return band


def _detour(
    lay: _Layout, ra: int, rb: int, start: tuple[float, float], end: tuple[float, float]
) -> list[float]:
    """The points of a line from row ``ra`` down to row ``rb``: straight, except that where it
    would cross a box of a row in between it passes just right of that box instead."""
    points = [*start]
    (x0, y0), (x1, y1) = start, end
    for r in range(ra + 1, rb):
        for box in lay.rows[r]:
            bx, by, bw = lay.pos[box.key]
            top, bottom = by + lay.box_h, by
            t_top, t_bottom = (y0 - top) / (y0 - y1), (y0 - bottom) / (y0 - y1)
            xs = (x0 + (x1 - x0) * t_top, x0 + (x1 - x0) * t_bottom)
            if max(xs) >= bx - 1 and min(xs) <= bx + bw + 1:
                side = bx + bw + 1.5 * mm
                points += [side, top + 1.5 * mm, side, bottom - 1.5 * mm]
    return [*points, *end]


def _lines(
    lay: _Layout, bundles: list[tuple[str, str, int]], meshes: set[tuple[int, int]]
) -> Group:
    group = Group()
    per: dict[tuple[int, int], int] = defaultdict(int)
    for a, b, _ in bundles:
        per[(lay.row_of[a], lay.row_of[b])] += 1
    labels = Group()
    drawn: dict[tuple[int, int], int] = defaultdict(int)
    for a, b, n in bundles:
        ra, rb = lay.row_of[a], lay.row_of[b]
        if (ra, rb) in meshes:
            continue
        xa, ya, wa = lay.pos[a]
        xb, yb, wb = lay.pos[b]
        near = rb - ra == 1
        # a line past a row runs right of centre and bends round that row's boxes (a dashed
        # grey line, as the legend says), so it never crosses a box it does not end on
        at = 0.5 if near else 0.82
        points = _detour(lay, ra, rb, (xa + wa * at, ya), (xb + wb * at, yb + lay.box_h))
        line = PolyLine(points, strokeColor=pc.INK if near else pc.GREY)
        line.strokeWidth = 0.3 + 0.45 * math.log10(max(n, 1))
        line.strokeDashArray = None if near else [2, 1.5]
        group.add(line)
        if per[(ra, rb)] > MAX_LABELLED:
            continue
        # neighbouring labels of one row pair alternate heights, so crossing lines' numbers
        # do not sit on each other
        drawn[(ra, rb)] += 1
        t = (0.62 if drawn[(ra, rb)] % 2 else 0.4) if near else 0.8
        mx = xa + wa * at + (xb + wb * at - xa - wa * at) * t
        my = ya + (yb + lay.box_h - ya) * t
        tw = pdfmetrics.stringWidth(f"{n}", pc.FONT, 6) + 2
        labels.add(Rect(mx - tw / 2, my - 2.2, tw, 7, fillColor=pc.colors.white, strokeColor=None))
        labels.add(_text(mx, my - 0.3, f"{n}", 6, textAnchor="middle"))
    group.add(labels)
    return group


def _boxes(design: Design, lay: _Layout) -> Group:
    group = Group()
    models = {sw.id: sw.model for sw in design.switches}
    for boxes in lay.rows:
        _, y, _ = lay.pos[boxes[0].key]
        name = String(0, y + lay.box_h / 2 + 2, row_name(boxes[0]), fontName=pc.BOLD, fontSize=7)
        name.fillColor = pc.GREY
        total = String(0, y + lay.box_h / 2 - 6, f"{sum(b.count for b in boxes):,}", fontSize=6)
        total.fillColor = pc.GREY
        group.add(name)
        group.add(total)
        for box in boxes:
            x, y, bw = lay.pos[box.key]
            fill = pc.SHADE if box.tier == 0 else LEAF_BLUE
            group.add(
                Rect(x, y, bw, lay.box_h, 1.2 * mm, 1.2 * mm, fillColor=fill, strokeWidth=0.6)
            )
            size = pc.fit_size(pdfmetrics, box.title, pc.BOLD, 6.5, bw - 2)
            title = pc.clip(box.title, bw + 2, pc.BOLD, size)
            group.add(
                _text(x + bw / 2, y + lay.box_h / 2 + 0.8, title, size, True, textAnchor="middle")
            )
            detail = pc.clip(_detail(design, box, models), bw + 2, pc.FONT, pc.MIN_PAGE_PT)
            group.add(
                _text(
                    x + bw / 2, y + lay.box_h / 2 - 6.2, detail, pc.MIN_PAGE_PT, textAnchor="middle"
                )
            )
    return group


def _legend(
    design: Design,
    lay: _Layout,
    plane: int,
    height: float,
    bundles: list[tuple[str, str, int]],
    meshes: set[tuple[int, int]],
) -> Group:
    s = design.sizing
    lines = [
        f"{design.topology}, {s.tiers} tier(s), plane {plane} of {design.planes}"
        + ("; the other planes are wired the same" if design.planes > 1 else "")
        + ". Boxes are switches (or groups of them, with their count); a line's number "
        "is how many links run between the two boxes.",
    ]
    per: dict[tuple[int, int], list[int]] = defaultdict(list)
    for a, b, n in bundles:
        per[(lay.row_of[a], lay.row_of[b])].append(n)
    for (ra, rb), counts in sorted(per.items()):
        if len(counts) > MAX_LABELLED and (ra, rb) not in meshes:
            lo, hi = min(counts), max(counts)
            each = f"{lo}" if lo == hi else f"{lo}-{hi}"
            lines.append(
                f"{row_name(lay.rows[ra][0])} - {row_name(lay.rows[rb][0])}: {sum(counts):,} "
                f"links over {len(counts)} box pairs, {each} each (not labelled)"
            )
    group = Group()
    for k, text in enumerate(lines[:3]):
        group.add(_text(0, height - 4 * mm - k * 9, text, 7))
    skips = any(lay.row_of[b] - lay.row_of[a] > 1 for a, b, _ in bundles)
    group.add(_line_key(height - 4 * mm - min(len(lines), 3) * 9, skips))
    return group


def _line_key(y: float, skips: bool) -> Group:
    """The key to the line styles: solid between adjacent rows, dashed grey past a row (when
    a line does; the Matrix, whose lines did, has its own figure: ``topology_matrix``)."""
    past = "links that skip a row, drawn beside that row's boxes"
    keys: list[tuple[list[float] | None, object, str]] = [
        (None, pc.INK, "links between adjacent rows")
    ]
    if skips:
        keys.append(([2, 1.5], pc.GREY, past))
    group, x = Group(), 0.0
    for dash, colour, text in keys:
        group.add(
            Line(x, y + 2.2, x + 8 * mm, y + 2.2, strokeColor=colour, strokeWidth=0.8,
                 strokeDashArray=dash)
        )  # fmt: skip
        group.add(_text(x + 9.5 * mm, y, text, 7))
        x += 9.5 * mm + pdfmetrics.stringWidth(text, pc.FONT, 7) + 6 * mm
    return group


def topology_drawing(design: Design, width: float, height: float, plane: int = 0) -> Drawing:
    """The figure, ``width`` x ``height`` points: legend on top, tiers below, cores first (a
    Matrix: its two leaf groups as columns either side of the nodes, see ``topology_matrix``)."""
    graph = figure_graph(design, plane)
    if design.topology == "matrix":
        return matrix_drawing(design, matrix_figure(design, graph, width, height, plane))
    lay = _Layout(graph, width, height, 16 * mm)
    bundles = _ordered(graph, lay)
    meshes = _meshes(lay, bundles)
    drawing = Drawing(width, height)
    for (ra, rb), counts in sorted(meshes.items()):
        drawing.add(_mesh_band(lay, ra, rb, counts, width / 2 + lay.left / 2))
    drawing.add(_lines(lay, bundles, set(meshes)))
    drawing.add(_boxes(design, lay))
    drawing.add(_legend(design, lay, plane, height, bundles, set(meshes)))
    return drawing


def framed(drawing: Drawing, margin: float = 8 * mm) -> Drawing:
    """The drawing on a white page with a margin all round (the stand-alone file)."""
    page = Drawing(drawing.width + 2 * margin, drawing.height + 2 * margin)
    page.add(Rect(0, 0, page.width, page.height, fillColor=pc.colors.white, strokeColor=None))
    inner = Group(*drawing.contents)
    inner.translate(margin, margin)
    page.add(inner)
    return page


#: the stand-alone figure: an A4 landscape page's drawing area
FIGURE_SIZE = (277 * mm, 180 * mm)


def figure_drawing(design: Design, plane: int = 0) -> Drawing:
    """The sheets' topology figure alone (``railplan sheets --figure``)."""
    return framed(topology_drawing(design, *FIGURE_SIZE, plane=plane))


class TopologyDiagram(Flowable):
    """The figure as a flowable of the sheets (the same drawing the stand-alone files hold)."""

    def __init__(self, design: Design, width: float, height: float, plane: int = 0) -> None:
        super().__init__()
        self.drawing = topology_drawing(design, width, height, plane)
        self.width = width
        self.height = height

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        self.drawing.drawOn(self.canv, 0, 0)
