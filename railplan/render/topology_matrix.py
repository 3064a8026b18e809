"""The Matrix topology figure: A leaves and B leaves as two columns, the nodes between them.

A Matrix has no spine: its two orthogonal leaf groups are drawn as a column each, A (single
rail) on the left and B (multi rail) on the right, with the nodes in the middle column, so
each node line runs across the free gap to the facing edge of its leaf and cannot pass
through any box. The complete bipartite A-B bundle is one labelled bus: a collector along
the outer side of each leaf column, joined over the top of the figure. Nodes, A leaves and B
leaves are grouped alike (``fabric_graph`` with ``per_role``), so a row holds one SU's A
leaves, nodes and B leaves. ``matrix_figure`` is the geometry (what the tests measure);
``matrix_drawing`` draws it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from reportlab.graphics.shapes import Drawing, Group, Line, PolyLine, Rect, String
from reportlab.lib.units import mm
from reportlab.pdfbase import pdfmetrics

from railplan.design import Design
from railplan.render import pdf_common as pc
from railplan.render.fabric_graph import Box, FabricGraph

Point = tuple[float, float]
#: x, y (bottom left), width, height
Frame = tuple[float, float, float, float]

LEAF_BLUE = pc.colors.HexColor("#dfe5ef")
B_LINE = pc.colors.HexColor("#1f4f8f")
BUS = pc.colors.HexColor("#8fa6c8")
COLUMNS = ("A", "node", "B")
#: the most height one row of boxes takes
ROW_MOST = 30 * mm
HEADERS = {"A": "A leaves (single-rail)", "node": "nodes", "B": "B leaves (multi-rail)"}
#: the line styles: (column side, colour, dash, width, legend text)
KEYS = {
    "A": (pc.INK, None, 0.8, "node to A leaf: each NIC's A-side port (one rail per A leaf)"),
    "B": (B_LINE, [3, 1.5], 0.8, "node to B leaf: each NIC's B-side port (the node's SU)"),
    "bus": (BUS, None, 3.0, "A-B bundle: every A leaf to every B leaf (complete bipartite)"),
}


@dataclass(frozen=True)
class NodeLine:
    """One bundle between a node box and a leaf box: a straight segment across the gap."""

    node: str
    leaf: str
    side: str  # "A" or "B"
    links: int
    start: Point  # on the node box's facing edge
    end: Point  # on the leaf box's facing edge


@dataclass(frozen=True)
class MatrixFigure:
    """Where everything of the Matrix figure sits, in points (origin bottom left)."""

    width: float
    height: float
    graph: FabricGraph
    frames: dict[str, Frame]
    column: dict[str, str]  # box key -> "A", "node" or "B"
    lines: tuple[NodeLine, ...]
    #: (x, y, text) of a number on a line (gaps whose lines share no box) ...
    line_labels: tuple[tuple[float, float, str], ...]
    #: ... or one caption per gap whose lines fan out (their numbers would sit on each other)
    captions: tuple[tuple[float, float, str], ...]
    #: the A-B bus: collector up the A column's outer side, over the top, down the B side
    bus: tuple[Point, ...]
    stubs: tuple[tuple[Point, Point], ...]  # leaf box outer edge -> collector
    bus_label: tuple[float, float, str]
    headers: tuple[tuple[float, float, str, str], ...]  # x centre, y, title, count
    legend: tuple[str, ...]
    keys: tuple[str, ...]  # which of KEYS the figure uses, in legend order
    keys_y: float


def _bipartite(design: Design, plane: int) -> str:
    """The A-B bundle's label, from the wiring: complete and even, or what it is instead."""
    role = {sw.id: sw.role for sw in design.switches if sw.plane == plane}
    a = sum(1 for r in role.values() if r == "leaf-a")
    b = sum(1 for r in role.values() if r == "leaf-b")
    pairs: Counter[tuple[str, str]] = Counter()
    for lk in design.links:
        ends = {role.get(lk.a_device): lk.a_device, role.get(lk.b_device): lk.b_device}
        if lk.plane == plane and set(ends) == {"leaf-a", "leaf-b"}:
            pairs[(ends["leaf-a"], ends["leaf-b"])] += 1
    total = sum(pairs.values())
    counts = set(pairs.values())
    if len(pairs) == a * b and len(counts) == 1:
        m = counts.pop()
        each_a = f"each of the {a:,} A leaves" if a > 1 else "the A leaf"
        each_b = f"each of the {b:,} B leaves" if b > 1 else "the B leaf"
        return (
            f"A-B bundle, complete bipartite: {each_a} to {each_b}, "
            f"{m:,} link{'s' if m > 1 else ''} a pair ({total:,} links)"
        )
    lo, hi = min(counts, default=0), max(counts, default=0)
    each = f"{lo}" if lo == hi else f"{lo}-{hi}"
    return (
        f"A-B bundle: {total:,} links over {len(pairs):,} of the {a * b:,} A-B leaf pairs, "
        f"{each} a pair"
    )


def _how_many(column: str, n: int) -> str:
    one, many = ("node", "nodes") if column == "node" else ("switch", "switches")
    return f"{n:,} {one if n == 1 else many}"


def _column_of(box: Box) -> str:
    return {"leaf-a": "A", "leaf-b": "B"}.get(box.role, "node")


def _spread(frame: Frame, k: int, j: int) -> float:
    """The height on a box's edge of its ``j``-th of ``k`` lines (spread over its middle)."""
    _, y, _, h = frame
    return y + h * (0.82 - 0.64 * (j + 0.5) / k)


def _attach(
    graph: FabricGraph, frames: dict[str, Frame], column: dict[str, str]
) -> tuple[NodeLine, ...]:
    """Node-leaf bundles as segments between facing edges, each box's lines spread along its
    edge in the order of their other ends (so lines leave a box without crossing there)."""
    bundles = []
    for a, b, n in graph.bundles:
        node, leaf = (a, b) if column[a] == "node" else (b, a)
        if column[node] == "node" and column[leaf] in ("A", "B"):
            bundles.append((node, leaf, column[leaf], n))
    centre = {k: f[1] + f[3] / 2 for k, f in frames.items()}
    ends: dict[tuple[str, str], list[tuple[float, str, str]]] = defaultdict(list)
    for node, leaf, side, _ in bundles:
        ends[(node, side)].append((-centre[leaf], leaf, node))
        ends[(leaf, side)].append((-centre[node], node, leaf))
    at: dict[tuple[str, str, str], float] = {}  # (box, other, side) -> y on the box's edge
    for (key, side), others in ends.items():
        for j, (_, other, _) in enumerate(sorted(others)):
            at[(key, other, side)] = _spread(frames[key], len(others), j)
    out = []
    for node, leaf, side, n in bundles:
        nx, _, nw, _ = frames[node]
        lx, _, lw, _ = frames[leaf]
        start_x, end_x = (nx, lx + lw) if side == "A" else (nx + nw, lx)
        start = (start_x, at[(node, leaf, side)])
        end = (end_x, at[(leaf, node, side)])
        out.append(NodeLine(node, leaf, side, n, start, end))
    return tuple(out)


def _numbers(
    lines: tuple[NodeLine, ...], gap_x: dict[str, float], caption_y: float
) -> tuple[list[tuple[float, float, str]], list[tuple[float, float, str]]]:
    """A number on each line of a gap whose lines share no box; one caption for a gap whose
    lines fan out of shared boxes."""
    labels, captions = [], []
    for side in ("A", "B"):
        gap = [ln for ln in lines if ln.side == side]
        if not gap:
            continue
        shared = len({ln.node for ln in gap}) < len(gap) or len({ln.leaf for ln in gap}) < len(gap)
        if not shared:
            for ln in gap:
                mx, my = (ln.start[0] + ln.end[0]) / 2, (ln.start[1] + ln.end[1]) / 2
                labels.append((mx, my, f"{ln.links:,}"))
            continue
        counts = [ln.links for ln in gap]
        lo, hi = min(counts), max(counts)
        each = (
            f"{lo:,} link{'s' if lo > 1 else ''} each" if lo == hi else f"{lo:,}-{hi:,} links each"
        )
        text = f"{len(gap):,} lines of {each} ({sum(counts):,} links)"
        captions.append((gap_x[side], caption_y, text))
    return labels, captions


def _su_of(title: str) -> str:
    """The SU span a group's title ends with ("SU3", "SU1-2"), or "" for a device's box."""
    word, _, span = title.rpartition(" ")
    return span if word and span.startswith("SU") else ""


def _one_su_row(graph: FabricGraph, column: dict[str, str]) -> bool:
    """Whether every node-leaf bundle joins boxes of the same SU span (each row one SU)."""
    title = {b.key: b.title for b in graph.boxes}
    spans = [
        (_su_of(title[a]), _su_of(title[b]))
        for a, b, _ in graph.bundles
        if "node" in (column[a], column[b]) and column[a] != column[b]
    ]
    return bool(spans) and all(x != "" and x == y for x, y in spans)


def _legend(design: Design, plane: int, one_su: bool) -> tuple[str, ...]:
    s = design.sizing
    first = (
        f"{design.topology}, {s.tiers} tier(s), no spine, plane {plane} of {design.planes}"
        + ("; the other planes are wired the same" if design.planes > 1 else "")
        + ". Boxes are switches or nodes (or groups of them, with their count); "
        "a line's number is how many links run between its two boxes."
    )
    out = [first]
    if one_su:
        out.append(
            "Groups follow the nodes' scalable units: the A and B leaves of SU k are the "
            "leaves the nodes of SU k attach to, so each row is one SU."
        )
    return tuple(out)


def matrix_figure(design: Design, graph: FabricGraph, width: float, height: float,
                  plane: int = 0) -> MatrixFigure:  # fmt: skip
    """The geometry of the Matrix figure, ``width`` x ``height`` points, for one plane."""
    column = {b.key: _column_of(b) for b in graph.boxes}
    members = {c: [b for b in graph.boxes if column[b.key] == c] for c in COLUMNS}
    legend = _legend(design, plane, _one_su_row(graph, column))
    keys_y = height - 4 * mm - len(legend) * 9
    bus_y = keys_y - 7 * mm
    header_y = bus_y - 13 * mm
    top, bottom = header_y - 7 * mm, 2 * mm
    margin, collector = 2 * mm, 5 * mm
    bw = min(34 * mm, width * 0.16)
    xs = {
        "A": margin + collector,
        "node": width / 2 - bw / 2,
        "B": width - margin - collector - bw,
    }
    most = max(max(len(v) for v in members.values()), 1)
    used = min(top - bottom, most * ROW_MOST)  # few rows sit under the headers, not spread
    box_h = min(11 * mm, used / most * 0.7)
    frames: dict[str, Frame] = {}
    for c, boxes in members.items():
        slot = used / max(len(boxes), 1)
        for i, box in enumerate(boxes):
            y = top - (i + 0.5) * slot - box_h / 2
            frames[box.key] = (xs[c], y, bw, box_h)
    lines = _attach(graph, frames, column)
    gap_x = {"A": (xs["A"] + bw + xs["node"]) / 2, "B": (xs["node"] + bw + xs["B"]) / 2}
    labels, captions = _numbers(lines, gap_x, header_y)
    xa, xb = margin, width - margin
    mid = {k: f[1] + f[3] / 2 for k, f in frames.items()}
    stubs = [((frames[b.key][0], mid[b.key]), (xa, mid[b.key])) for b in members["A"]]
    stubs += [((frames[b.key][0] + bw, mid[b.key]), (xb, mid[b.key])) for b in members["B"]]
    has_bus = any({column[a], column[b]} == {"A", "B"} for a, b, _ in graph.bundles)
    bus: tuple[Point, ...] = ()
    if has_bus:
        low_a = min(mid[b.key] for b in members["A"])
        low_b = min(mid[b.key] for b in members["B"])
        bus = ((xa, low_a), (xa, bus_y), (xb, bus_y), (xb, low_b))
    else:
        stubs = []
    headers = tuple(
        (xs[c] + bw / 2, header_y, HEADERS[c], _how_many(c, sum(b.count for b in members[c])))
        for c in COLUMNS
        if members[c]
    )
    keys = tuple(k for k in ("A", "B") if any(ln.side == k for ln in lines))
    return MatrixFigure(
        width=width,
        height=height,
        graph=graph,
        frames=frames,
        column=column,
        lines=lines,
        line_labels=tuple(labels),
        captions=tuple(captions),
        bus=bus,
        stubs=tuple(stubs),
        bus_label=(width / 2, bus_y - 4.5 * mm, _bipartite(design, plane) if has_bus else ""),
        headers=headers,
        legend=legend,
        keys=keys + (("bus",) if has_bus else ()),
        keys_y=keys_y,
    )


def _text(x: float, y: float, text: str, size: float, bold: bool = False, **kw: object) -> String:
    font = pc.BOLD if bold else pc.FONT
    return String(x, y, text, fontName=font, fontSize=size, fillColor=pc.INK, **kw)


def _label(group: Group, x: float, y: float, text: str, size: float, bold: bool = False) -> None:
    """Centred text on a white patch (it sits on lines)."""
    tw = pdfmetrics.stringWidth(text, pc.BOLD if bold else pc.FONT, size) + 3
    group.add(Rect(x - tw / 2, y - 2.2, tw, size + 1.5, fillColor=pc.colors.white,
                   strokeColor=None))  # fmt: skip
    group.add(_text(x, y - 0.3, text, size, bold, textAnchor="middle"))


def _detail(design: Design, box: Box, models: dict[str, str]) -> str:
    if box.count > 1:
        return f"{box.count:,} {'nodes' if box.role == 'node' else 'switches'}"
    if box.role == "node":
        return f"{design.shape.ports} ports"
    return models.get(box.key, box.role)


def _boxes(design: Design, fig: MatrixFigure) -> Group:
    group = Group()
    models = {sw.id: sw.model for sw in design.switches}
    for box in fig.graph.boxes:
        x, y, bw, h = fig.frames[box.key]
        fill = pc.SHADE if box.role == "node" else LEAF_BLUE
        group.add(Rect(x, y, bw, h, 1.2 * mm, 1.2 * mm, fillColor=fill, strokeWidth=0.6))
        size = pc.fit_size(pdfmetrics, box.title, pc.BOLD, 6.5, bw - 2)
        title = pc.clip(box.title, bw + 2, pc.BOLD, size)
        group.add(_text(x + bw / 2, y + h / 2 + 0.8, title, size, True, textAnchor="middle"))
        detail = pc.clip(_detail(design, box, models), bw + 2, pc.FONT, pc.MIN_PAGE_PT)
        group.add(_text(x + bw / 2, y + h / 2 - 6.2, detail, pc.MIN_PAGE_PT, textAnchor="middle"))
    for x, y, title, count in fig.headers:
        group.add(_text(x, y, title, 7.5, True, textAnchor="middle"))
        note = String(x, y - 8, count, fontName=pc.FONT, fontSize=6, fillColor=pc.GREY,
                      textAnchor="middle")  # fmt: skip
        group.add(note)
    return group


def _key_row(fig: MatrixFigure) -> Group:
    group, x, y = Group(), 0.0, fig.keys_y
    for key in fig.keys:
        colour, dash, width, text = KEYS[key]
        need = 9.5 * mm + pdfmetrics.stringWidth(text, pc.FONT, 7)
        if x > 0 and x + need > fig.width:
            x, y = 0.0, y - 9
        group.add(Line(x, y + 2.2, x + 8 * mm, y + 2.2, strokeColor=colour, strokeWidth=width,
                       strokeDashArray=dash))  # fmt: skip
        group.add(_text(x + 9.5 * mm, y, text, 7))
        x += need + 6 * mm
    return group


def matrix_drawing(design: Design, fig: MatrixFigure) -> Drawing:
    """The figure as a reportlab Drawing: bus, lines, boxes, numbers, legend."""
    drawing = Drawing(fig.width, fig.height)
    if fig.bus:
        colour, _, width, _ = KEYS["bus"]
        drawing.add(PolyLine([c for p in fig.bus for c in p], strokeColor=colour,
                             strokeWidth=width, strokeLineJoin=1))  # fmt: skip
        for (x0, y0), (x1, y1) in fig.stubs:
            drawing.add(Line(x0, y0, x1, y1, strokeColor=colour, strokeWidth=width * 0.6))
    for ln in fig.lines:
        colour, dash, _, _ = KEYS[ln.side]
        line = Line(*ln.start, *ln.end, strokeColor=colour, strokeDashArray=dash)
        line.strokeWidth = 0.3 + 0.45 * math.log10(max(ln.links, 1))
        drawing.add(line)
    drawing.add(_boxes(design, fig))
    texts = Group()
    for x, y, text in fig.line_labels:
        _label(texts, x, y, text, 6)
    for x, y, text in fig.captions:
        _label(texts, x, y, text, 6.5)
    if fig.bus:
        x, y, text = fig.bus_label
        _label(texts, x, y, text, 7.5, True)
    drawing.add(texts)
    for k, text in enumerate(fig.legend):
        drawing.add(_text(0, fig.height - 4 * mm - k * 9, text, 7))
    drawing.add(_key_row(fig))
    return drawing
