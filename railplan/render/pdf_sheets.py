"""Cabling sheets PDF (cover, topology, rack elevations, cable tables, port maps, BOM) and labels.

The sheets list every cable exactly once, in the cable tables of the rack that holds its A end
(the end a technician starts from); the per-switch port maps then list every switch port that
is cabled, so an inter-switch cable shows in the maps of both its switches. Labels go to a
separate PDF because they print on label stock.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reportlab.lib.units import mm
from reportlab.pdfgen import canvas as rl_canvas
from reportlab.platypus import CondPageBreak, Flowable, Spacer

from railplan.analysis.bom import Bom
from railplan.model import Design, Switch
from railplan.render import cables_csv
from railplan.render import pdf_common as pc
from railplan.render.pdf_common import CHECKBOX, DocInfo, Progress, esc, para, swatch

NOT_LAID_OUT = "not laid out"


@dataclass(frozen=True, slots=True)
class End:
    device: str
    port: str
    rack: str
    u: int | None

    @property
    def where(self) -> str:
        return f"{self.rack} U{self.u}" if self.u is not None else self.rack


@dataclass(frozen=True, slots=True)
class CableRow:
    """One cable as the sheets print it."""

    id: str
    link: str
    kind: str
    a: End
    b: End
    #: the cable part, and the optics at the A and B ends ("-" where the cable has its ends)
    media: str
    optic_a: str
    optic_b: str
    length: str
    label_a: str
    label_b: str
    colour: str
    rate_gbps: int


def cable_rows(design: Design) -> list[CableRow]:
    """Every cable of the design (or every link, when no layout has cabled it yet)."""
    switches = design.switch_by_id()
    nodes = design.node_by_id()
    placed = {p.device: p for p in design.placements}

    def end(device: str, port: int) -> End:
        sw = switches.get(device)
        name = sw.port_name(port) if sw else design.shape.port_name(port)
        p = placed.get(device)
        if p is not None:
            return End(device, name, p.rack, p.u)
        if sw is not None:
            return End(device, name, "network", None)
        return End(device, name, f"rack {nodes[device].rack + 1}", None)

    rows = []
    if design.cables:  # the cable schedule's order: rack by rack, top of the rack down
        for sr in cables_csv.schedule(design):
            c, lk = sr.cable, sr.link
            rows.append(
                CableRow(c.id, lk.id, lk.kind, End(sr.a.device, sr.a.port, sr.a.rack, sr.a.u),
                         End(sr.b.device, sr.b.port, sr.b.rack, sr.b.u), c.media,
                         c.transceiver_a or "-", c.transceiver_b or "-", f"{c.length_m:g}",
                         c.label_a, c.label_b, c.colour, lk.rate_gbps)
            )  # fmt: skip
        return rows
    for lk in design.links:
        a, b = end(lk.a_device, lk.a_port), end(lk.b_device, lk.b_port)
        rows.append(
            CableRow(lk.id, lk.id, lk.kind, a, b, "-", "-", "-", NOT_LAID_OUT,
                     f"{a.device}-{a.port}", f"{b.device}-{b.port}", "", lk.rate_gbps)
        )  # fmt: skip
    return rows


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


# -- cover, diagrams, elevations -----------------------------------------------------------------


def _cover(design: Design, info: DocInfo, bom: Bom | None, rows: list[CableRow]) -> list[Flowable]:
    s = design.sizing
    shape = design.shape
    counts = design.switch_counts()
    by_model = Counter((sw.role, sw.model) for sw in design.switches)
    kinds = Counter(r.kind for r in rows)
    width = 175 * mm
    summary = [
        ("Design", design.name),
        ("Revision / design hash", f"{info.revision} / {info.design_hash}"),
        ("Cluster", f"{design.gpus:,} GPUs in {len(design.nodes):,} nodes ({shape.model}, "
                    f"{shape.gpus} GPUs, {shape.ports} x {shape.port_speed_gbps}G ports, "
                    f"NIC {shape.nic_model})"),
        ("Topology", f"{design.topology}, {s.tiers} tier(s), {design.planes} plane(s), "
                     f"oversubscription {s.oversubscription}, routing {design.routing.policy}"),
        ("Switches", f"{counts['total']} x {s.switch_model} ({s.radix} ports at "
                     f"{shape.port_speed_gbps}G): {counts['leaf']} leaf, {counts['spine']} spine, "
                     f"{counts['core']} core; closed-form lower bound {s.lower_bound_switches}"),
        ("Cables", f"{len(rows):,}: " + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))),
        ("Racks", f"{len(design.racks)} ({sum(r.kind == 'network' for r in design.racks)} network)"
                  if design.racks else "not laid out: run the layout to place racks and cables"),
    ]  # fmt: skip
    if bom is not None:
        t = bom.totals
        summary += [
            ("BOM totals", f"${t.cost_usd:,.0f}; {t.power_w / 1000:,.1f} kW typical, "
                           f"{t.power_max_w / 1000:,.1f} kW max; {t.switches} switches, "
                           f"{t.transceivers:,} transceivers, {t.cables:,} cables "
                           f"({t.fibres:,} fibre, {t.splitters:,} splitter), {t.rack_units} U"),
        ]  # fmt: skip
    roles = [(f"{role} ({model})", str(n)) for (role, model), n in sorted(by_model.items())]
    story: list[Flowable] = [
        pc.SectionMark("Cover", "cover"),
        Spacer(1, 18 * mm),
        para("Cabling sheets", "title"),
        para(esc(f"{design.name}: {design.gpus:,} GPUs, {design.topology}"), "subtitle"),
        pc.kv_table(summary, (45 * mm, width - 45 * mm)),
        Spacer(1, 6 * mm),
        para("Switches by role", "h2"),
        pc.kv_table(roles, (60 * mm, 30 * mm)),
        Spacer(1, 6 * mm),
        para(
            "How to use: cable rack by rack from the cable tables (every cable once, listed under "
            "the rack of its A end); tick the box when the cable is in, labelled at both ends and "
            "seated. Check each switch against its port map. Colours follow TIA-598 by rail; the "
            "colour name is printed beside each swatch, so a black-and-white copy loses nothing.",
            "body",
        ),
    ]
    if not design.cables:
        story.append(para(
            "<b>Note:</b> this design has no cable schedule yet (length: not laid out). The tables "
            "list its links; run the layout (railplan plan with layout) for media, lengths and "
            "labels.", "body"))  # fmt: skip
    return story


class RackRow(Flowable):
    """Elevations of a few racks side by side: every U, with the device in it."""

    def __init__(self, racks: Sequence[Any], placed: dict[str, list[Any]], width: float,
                 height: float, switches: dict[str, Switch]) -> None:  # fmt: skip
        super().__init__()
        self.racks = racks
        self.placed = placed
        self.width = width
        self.height = height
        self.switches = switches

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        n = max(len(self.racks), 1)
        slot = self.width / max(n, 6)
        col_w = slot * 0.78
        top = self.height - 8 * mm
        for i, rack in enumerate(self.racks):
            x = i * slot + (slot - col_w) / 2
            u_h = (top - 4 * mm) / rack.height_u
            c.setFont(pc.BOLD, 8)
            c.setFillColor(pc.INK)
            c.drawCentredString(x + col_w / 2, top + 3 * mm, rack.id)
            c.setFont(pc.FONT, 6)
            c.drawCentredString(x + col_w / 2, top + 0.5 * mm, f"{rack.kind}, {rack.height_u}U")
            base = 4 * mm
            c.setLineWidth(0.8)
            c.setStrokeColor(pc.INK)
            c.rect(x, base, col_w, rack.height_u * u_h, stroke=1, fill=0)
            c.setLineWidth(0.15)
            c.setStrokeColor(pc.RULE)
            c.setFont(pc.FONT, 4.5)
            for u in range(1, rack.height_u + 1):
                y = base + (u - 1) * u_h
                c.line(x, y, x + col_w, y)
                if u % 5 == 0 or u == 1:
                    c.setFillColor(pc.GREY)
                    c.drawRightString(x - 0.6 * mm, y + u_h * 0.25, str(u))
            for p in self.placed.get(rack.id, []):
                y = base + (p.u - 1) * u_h
                h = p.height_u * u_h
                sw = self.switches.get(p.device)
                c.setFillColor(pc.SHADE if sw is None else pc.colors.HexColor("#d5dbe6"))
                c.setStrokeColor(pc.INK)
                c.setLineWidth(0.5)
                c.rect(x + 0.4, y + 0.3, col_w - 0.8, h - 0.6, stroke=1, fill=1)
                c.setFillColor(pc.INK)
                size = min(6.0, max(3.8, h * 0.55))
                c.setFont(pc.BOLD if sw is None else pc.FONT, size)
                label = p.device if sw is None else f"{p.device} ({sw.model})"
                while c.stringWidth(label, c._fontname, size) > col_w - 1.5 and len(label) > 4:
                    label = label[:-2]
                c.drawCentredString(x + col_w / 2, y + h / 2 - size * 0.35, label)
                if sw is None and h > 10:
                    c.setFont(pc.FONT, 4.5)
                    c.drawCentredString(
                        x + col_w / 2,
                        y + h / 2 - size * 0.35 - 5.5,
                        f"U{p.u}-U{p.u + p.height_u - 1}",
                    )


def _elevations(design: Design, frame: tuple[float, float]) -> list[Flowable]:
    story: list[Flowable] = [pc.SectionMark("Rack elevations", "elevations"),
                             para("Rack elevations", "h1")]  # fmt: skip
    if not design.racks:
        story.append(para("Racks are not laid out for this design: run the layout first.", "body"))
        return story
    placed: dict[str, list[Any]] = defaultdict(list)
    for p in design.placements:
        placed[p.rack].append(p)
    racks = sorted(design.racks, key=lambda r: (r.row, r.position))
    per_page = 8
    w, h = frame
    height = h - 14 * mm
    switches = design.switch_by_id()
    for i in range(0, len(racks), per_page):
        if i:
            story.append(CondPageBreak(height + 1))
        story.append(RackRow(racks[i : i + per_page], placed, w, height, switches))
    return story


# -- tables --------------------------------------------------------------------------------------


def _rack_key(design: Design) -> dict[str, tuple[int, int, str]]:
    return {r.id: (r.row, r.position, r.id) for r in design.racks}


def _optics(a: str, b: str) -> str:
    return "-" if a == b == "-" else f"{a} / {b}"


def _cable_tables(
    design: Design, rows: list[CableRow], frame: tuple[float, float]
) -> list[Flowable]:
    w, h = frame
    header = ["", "Cable", "A rack / U", "A device", "A port", "B rack / U", "B device",
              "B port", "Cable part", "Optics A / B", "m", "Label A", "Label B", "Colour"]  # fmt: skip
    rel = [5, 14, 17, 22, 12, 17, 24, 12, 36, 42, 8, 34, 34, 17]
    widths = [w * r / sum(rel) for r in rel]
    order = _rack_key(design)
    by_rack: dict[str, list[CableRow]] = defaultdict(list)
    for r in rows:
        by_rack[r.a.rack].append(r)
    story: list[Flowable] = [pc.SectionMark("Cable tables", "cables"), para("Cable tables", "h1"),
                             para("Every cable once, under the rack of its A end, in the order "
                                  "to pull them: top of the rack down.", "small")]  # fmt: skip
    for rack in sorted(by_rack, key=lambda k: order.get(k, (9999, 0, k))):
        items = by_rack[rack]
        table = pc.clip_rows(
            [[CHECKBOX, r.id, r.a.where, r.a.device, r.a.port, r.b.where, r.b.device, r.b.port,
              r.media, _optics(r.optic_a, r.optic_b), r.length, r.label_a, r.label_b,
              swatch(r.colour) if r.colour else "-"] for r in items],
            widths,
        )  # fmt: skip
        title = para(f"Rack {esc(rack)}: {len(items)} cable(s)", "h2")
        tables = pc.paged_tables(header, table, widths, h - 12 * mm)
        story.append(CondPageBreak(30 * mm))
        story.append(pc.SectionMark(f"Rack {rack}", f"rack-{rack}", level=1))
        story.append(title)
        story.extend(tables)
    return story


def _port_maps(design: Design, rows: list[CableRow], frame: tuple[float, float]) -> list[Flowable]:
    w, h = frame
    header = ["Port", "Cable", "Far device", "Far port", "Far rack / U", "Cable part",
              "Optic here", "m", "Label here", "Colour", ""]  # fmt: skip
    rel = [12, 14, 28, 13, 18, 40, 28, 8, 40, 18, 5]
    widths = [w * r / sum(rel) for r in rel]
    switches = design.switch_by_id()
    ports: dict[str, list[tuple[int, list[Any]]]] = defaultdict(list)
    link_port = {lk.id: (lk.a_port, lk.b_port) for lk in design.links}
    for r in rows:
        pa, pb = link_port[r.link]
        ends = ((r.a, r.b, pa, r.label_a, r.optic_a), (r.b, r.a, pb, r.label_b, r.optic_b))
        for here, far, port, label, optic in ends:
            if here.device in switches:
                ports[here.device].append(
                    (port, [here.port, r.id, far.device, far.port, far.where, r.media, optic,
                            r.length, label, swatch(r.colour) if r.colour else "-", CHECKBOX])
                )  # fmt: skip
    story: list[Flowable] = [pc.SectionMark("Switch port maps", "ports"),
                             para("Switch port maps", "h1"),
                             para("Each cabled port of each switch, with the cable and the far "
                                  "end it must reach.", "small")]  # fmt: skip
    placed = {p.device: p for p in design.placements}
    for sw in design.switches:
        items = sorted(ports.get(sw.id, []), key=lambda t: t[0])
        p = placed.get(sw.id)
        where = f", rack {p.rack} U{p.u}" if p else ""
        title = para(
            esc(f"{sw.id} ({sw.role}, {sw.model}{where}): {len(items)} of {sw.radix} ports cabled"),
            "h2",
        )
        body = pc.clip_rows([row for _, row in items], widths)
        tables = pc.paged_tables(header, body, widths, h - 12 * mm)
        story.append(CondPageBreak(30 * mm))
        story.append(pc.SectionMark(f"Switch {sw.id}", f"sw-{sw.id}", level=1))
        story.append(title)
        story.extend(tables)
    return story


def _bom_section(bom: Bom | None, frame: tuple[float, float]) -> list[Flowable]:
    w, h = frame
    story: list[Flowable] = [pc.SectionMark("Bill of materials", "bom"),
                             para("Bill of materials", "h1")]  # fmt: skip
    if bom is None:
        story.append(para("No BOM was given for this design.", "body"))
        return story
    header = ["Part", "Kind", "Description", "Part number", "Length", "Count", "Unit $",
              "Total $", "Unit W", "Total W"]  # fmt: skip
    rel = [30, 14, 80, 26, 12, 12, 15, 20, 12, 16]
    widths = [w * r / sum(rel) for r in rel]
    rows = [
        [ln.part, ln.kind, ln.description[:70], ln.part_number or "-",
         f"{ln.length_m:g} m" if ln.length_m is not None else "", f"{ln.count:,}",
         f"{ln.unit_price_usd:,.0f}", f"{ln.total_usd:,.0f}", f"{ln.unit_power_w:g}",
         f"{ln.total_power_w:,.0f}"]
        for ln in bom.lines
    ]  # fmt: skip
    t = bom.totals
    rows.append(["Total", "", f"{t.switches} switches, {t.transceivers:,} transceivers, "
                 f"{t.cables:,} cables", "", "", "", "", f"{t.cost_usd:,.0f}", "",
                 f"{t.power_w:,.0f}"])  # fmt: skip
    right = [("ALIGN", (5, 0), (-1, -1), "RIGHT"), ("FONT", (0, -1), (-1, -1), pc.BOLD, 7),
             ("LINEABOVE", (0, -1), (-1, -1), 0.8, pc.INK)]  # fmt: skip
    story.extend(pc.paged_tables(header, rows, widths, h - 12 * mm, extra=right))
    story.append(Spacer(1, 3 * mm))
    story.append(para("Sources of prices and power figures:", "h2"))
    for ln in bom.lines:
        story.append(
            para(esc(f"{ln.part}: price {ln.source}; power {ln.power_source or '-'}"), "small")
        )
    for note in bom.notes:
        story.append(para(esc(note), "small"))
    return story


def sheets_story(design: Design, info: DocInfo, bom: Bom | None) -> list[Flowable]:
    land = pc.Document(None, info).frame_size("landscape")
    rows = cable_rows(design)
    story: list[Flowable] = []
    story += _cover(design, info, bom, rows)
    story += pc.landscape_next()
    story += [pc.SectionMark("Topology", "topology"), para("Topology", "h1")]
    story += [TopologyDiagram(design, land[0], land[1] - 12 * mm)]
    story += [pc.PageBreak()]
    story += _elevations(design, land)
    story += [pc.PageBreak()]
    story += _cable_tables(design, rows, land)
    story += [pc.PageBreak()]
    story += _port_maps(design, rows, land)
    story += [pc.PageBreak()]
    story += _bom_section(bom, land)
    return story


def render_sheets(
    design: Design, bom: Bom | None = None, revision: str = "draft",
    design_hash: str = "", page_size: str = "a4", progress: Progress | None = None,
) -> tuple[bytes, int]:  # fmt: skip
    """The cabling sheets PDF and its page count."""
    from railplan.testplan import design_hash as hash_of

    info = DocInfo(
        "Cabling sheets", design.name, revision, design_hash or hash_of(design), page_size
    )
    return pc.render(sheets_story(design, info, bom), info, progress)


# -- labels --------------------------------------------------------------------------------------


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
    c = rl_canvas.Canvas(buf, pagesize=size, invariant=1)
    c.setTitle(f"Cable labels: {design.name}")
    c.setAuthor("railplan")
    c.setCreator("railplan")
    rows = cable_rows(design)
    labels = [x for r in rows for x in ((r, "A"), (r, "B"))]
    pages = max(1, math.ceil(len(labels) / g.per_page))
    digest = design_hash or hash_of(design)
    pw, ph = size
    for page in range(pages):
        chunk = labels[page * g.per_page : (page + 1) * g.per_page]
        for i, (row, end) in enumerate(chunk):
            col, line = i % g.columns, i // g.columns
            x = (g.left_mm + col * g.pitch_x_mm) * mm
            y = ph - (g.top_mm + line * g.pitch_y_mm + g.height_mm) * mm
            _label(c, x, y, g.width_mm * mm, g.height_mm * mm, row, end)
        c.setFont(pc.FONT, 6)
        c.setFillColor(pc.GREY)
        c.drawCentredString(pw / 2, 4 * mm, f"{design.name}  |  cable labels ({g.name})  |  "
                            f"revision {revision}  |  design {digest}  |  page {page + 1} of {pages}")  # fmt: skip
        c.showPage()
        if progress is not None:
            progress("labels", page + 1, pages)
    c.save()
    return buf.getvalue(), pages


def _fit(c: Any, text: str, font: str, size: float, width: float) -> float:
    if len(text) * size <= width:  # no glyph of these fonts is wider than 1 em: it fits
        return size
    while size > 4 and c.stringWidth(text, font, size) > width:
        size -= 0.25
    return size


def _label(c: Any, x: float, y: float, w: float, h: float, row: CableRow, end: str) -> None:
    here = row.a if end == "A" else row.b
    text = row.label_a if end == "A" else row.label_b
    other = row.label_b if end == "A" else row.label_a
    pad = 1.5 * mm
    c.setStrokeColor(pc.RULE)
    c.setLineWidth(0.3)
    c.rect(x, y, w, h, stroke=1, fill=0)
    inner = w - 2 * pad
    size = _fit(c, text, pc.BOLD, 8.5, inner)
    c.setFillColor(pc.INK)
    c.setFont(pc.BOLD, size)
    c.drawString(x + pad, y + h - pad - size, text)
    c.setFont(pc.FONT, 6)
    c.drawString(
        x + pad, y + h - pad - size - 7.5, f"{end} end of {row.id}  {here.device} {here.port}"
    )
    to = f"to {other}"
    c.setFont(pc.FONT, _fit(c, to, pc.FONT, 6, inner))
    c.drawString(x + pad, y + h - pad - size - 14.5, to)
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
    c.setFont(pc.FONT, 5.5)
    c.setFillColor(pc.INK)
    c.drawString(x + pad + 3.6 * mm, y + pad + 0.6, f"{row.colour}  {row.length} m")


# -- topology diagram ----------------------------------------------------------------------------

#: boxes per tier before switches are drawn as groups (SU, pod, rail, core group)
MAX_BOXES = 16
MATRIX_BOXES = 8
#: edges between two tiers up to which each edge is labelled with its bundle size
MAX_LABELLED = 16
ROW_ORDER = ("core", "spine", "leaf-b", "leaf", "nodes")
ROW_NAME = {"core": "core", "spine": "spine", "leaf-b": "leaf B", "leaf": "leaf", "nodes": "nodes"}


@dataclass
class _Unit:
    """A box: one device, or a group of devices drawn as one."""

    title: str
    detail: str
    members: list[str]


def _row_of(sw: Switch) -> str:
    if sw.role in ("core", "spine", "leaf-b"):
        return sw.role
    return "leaf"


def _group_of(sw: Switch) -> tuple[str, int]:
    if sw.role == "spine":
        return ("pod", sw.pod + 1) if sw.pod >= 0 else ("spines", 0)
    if sw.role == "core":
        m = re.search(r"-g(\d+)-", sw.id)
        return ("group", int(m.group(1))) if m else ("cores", 0)
    if sw.role == "leaf-a":
        return ("rail", sw.rail)
    if sw.role == "leaf-b":
        return ("B", sw.su + 1)
    if sw.role == "tor":
        return ("rack", sw.su + 1)
    return ("SU", sw.su + 1) if sw.su >= 0 else ("leaves", 0)


def _merge(
    groups: list[tuple[tuple[str, int], list[str]]], what: str, most: int = MAX_BOXES
) -> list[_Unit]:
    """Groups as boxes; consecutive groups share a box when there are more than ``most``."""
    per = math.ceil(len(groups) / most)
    units = []
    for i in range(0, len(groups), per):
        chunk = groups[i : i + per]
        (kind, first), (_, last) = chunk[0][0], chunk[-1][0]
        members = [m for _, ms in chunk for m in ms]
        name = f"{kind} {first}" if first == last else f"{kind}s {first}-{last}"
        if kind in ("spines", "cores", "leaves"):
            name = kind
        units.append(_Unit(name, f"{len(members)} {what}", members))
    return units


def _short(device: str) -> str:
    return re.sub(r"^p\d+-", "", device)


def topology_rows(design: Design, plane: int = 0) -> list[tuple[str, list[_Unit]]]:
    """Tiers top to bottom, each as boxes (devices, or groups of them at scale)."""
    rows: dict[str, list[Switch]] = defaultdict(list)
    for sw in design.switches:
        if sw.plane == plane:
            rows[_row_of(sw)].append(sw)
    out: list[tuple[str, list[_Unit]]] = []
    # Matrix draws nodes to both leaf groups: fewer, wider boxes keep those lines readable
    most = MATRIX_BOXES if design.topology == "matrix" else MAX_BOXES
    for name in ROW_ORDER[:-1]:
        sws = rows.get(name, [])
        if not sws:
            continue
        if len(sws) <= most:
            units = [_Unit(_short(s.id), s.model, [s.id]) for s in sws]
        else:
            grouped: dict[tuple[str, int], list[str]] = defaultdict(list)
            for s in sws:
                grouped[_group_of(s)].append(s.id)
            units = _merge(sorted(grouped.items()), "switches", most)
        out.append((name, units))
    nodes = design.nodes
    if len(nodes) <= MAX_BOXES:
        units = [_Unit(n.id, f"{design.shape.ports} ports", [n.id]) for n in nodes]
    else:
        by: dict[tuple[str, int], list[str]] = defaultdict(list)
        key = "rack" if design.topology == "fat-tree" else "SU"
        distinct = len({n.su for n in nodes}) > 1
        for n in nodes:
            by[(key, n.su + 1) if distinct else ("nodes", n.index // MAX_BOXES)].append(n.id)
        groups = sorted(by.items())
        units = _merge(groups, "nodes")
        if not distinct:
            for u in units:
                u.title = f"{u.members[0]}-{u.members[-1][-4:]}"
    out.append(("nodes", units))
    return out


def _full_meshes(
    rows: list[tuple[str, list[_Unit]]],
    per_gap: dict[tuple[int, int], list[int]],
    edges: Counter[tuple[tuple[int, int], tuple[int, int]]],
) -> set[tuple[int, int]]:
    """Adjacent tiers whose boxes are all linked to all, with the same count, many times over."""
    out = set()
    for (ra, rb), counts in per_gap.items():
        full = len(rows[ra][1]) * len(rows[rb][1])
        if rb == ra + 1 and len(counts) == full > MAX_LABELLED and len(set(counts)) == 1:
            out.add((ra, rb))
    del edges
    return out


class TopologyDiagram(Flowable):
    """Tiers as rows of boxes, links as lines labelled with how many run between two boxes."""

    def __init__(self, design: Design, width: float, height: float, plane: int = 0) -> None:
        super().__init__()
        self.design = design
        self.width = width
        self.height = height
        self.plane = plane

    def wrap(self, aw: float, ah: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        c, d = self.canv, self.design
        rows = topology_rows(d, self.plane)
        where: dict[str, tuple[int, int]] = {}
        for r, (_, units) in enumerate(rows):
            for i, u in enumerate(units):
                for m in u.members:
                    where[m] = (r, i)
        edges: Counter[tuple[tuple[int, int], tuple[int, int]]] = Counter()
        for lk in d.links:
            if lk.plane != self.plane or lk.a_device not in where or lk.b_device not in where:
                continue
            a, b = where[lk.a_device], where[lk.b_device]
            edges[(min(a, b), max(a, b))] += 1
        legend_h = 16 * mm
        usable = self.height - legend_h
        gap = usable / max(len(rows), 1)
        box_h = min(11 * mm, gap * 0.42)
        left = 22 * mm
        span = self.width - left
        pos: dict[tuple[int, int], tuple[float, float, float]] = {}
        for r, (_, units) in enumerate(rows):
            slot = span / max(len(units), 1)
            bw = min(34 * mm, slot * 0.86)
            y = self.height - legend_h - (r + 0.5) * gap - box_h / 2
            for i in range(len(units)):
                x = left + i * slot + (slot - bw) / 2
                pos[(r, i)] = (x, y, bw)
        # edges under the boxes
        per_gap: dict[tuple[int, int], list[int]] = defaultdict(list)
        for ((ra, _), (rb, _)), n in edges.items():
            per_gap[(ra, rb)].append(n)
        c.saveState()
        mesh = _full_meshes(rows, per_gap, edges)
        for ra, rb in mesh:  # every box to every box: one band instead of a thicket of lines
            xs = [pos[(ra, i)] for i in range(len(rows[ra][1]))]
            xt = [pos[(rb, i)] for i in range(len(rows[rb][1]))]
            y_top, y_bot = xs[0][1], xt[0][1] + box_h
            p = c.beginPath()
            p.moveTo(xs[0][0], y_top)
            p.lineTo(xs[-1][0] + xs[-1][2], y_top)
            p.lineTo(xt[-1][0] + xt[-1][2], y_bot)
            p.lineTo(xt[0][0], y_bot)
            p.close()
            c.setFillColor(pc.SHADE)
            c.setStrokeColor(pc.GREY)
            c.setLineWidth(0.5)
            c.drawPath(p, stroke=1, fill=1)
            counts = per_gap[(ra, rb)]
            c.setFillColor(pc.INK)
            c.setFont(pc.BOLD, 7.5)
            c.drawCentredString(
                self.width / 2 + left / 2,
                (y_top + y_bot) / 2 - 2.5,
                f"full mesh: every box to every box, {counts[0]:,} links each "
                f"({sum(counts):,} links)",
            )
        for ((ra, ia), (rb, ib)), n in sorted(edges.items()):
            if (ra, rb) in mesh:
                continue
            xa, ya, wa = pos[(ra, ia)]
            xb, yb, wb = pos[(rb, ib)]
            c.setStrokeColor(pc.INK if rb - ra == 1 else pc.GREY)
            c.setDash([] if rb - ra == 1 else [2, 1.5])
            c.setLineWidth(0.3 + 0.45 * math.log10(max(n, 1)))
            c.line(xa + wa / 2, ya, xb + wb / 2, yb + box_h)
        c.setDash([])
        for ((ra, ia), (rb, ib)), n in sorted(edges.items()):
            if len(per_gap[(ra, rb)]) > MAX_LABELLED or (ra, rb) in mesh:
                continue
            xa, ya, wa = pos[(ra, ia)]
            xb, yb, wb = pos[(rb, ib)]
            t = 0.62 if rb - ra == 1 else 0.8
            mx = xa + wa / 2 + (xb + wb / 2 - xa - wa / 2) * t
            my = ya + (yb + box_h - ya) * t
            label = f"{n}"
            tw = c.stringWidth(label, pc.FONT, 6) + 2
            c.setFillColor(pc.colors.white)
            c.rect(mx - tw / 2, my - 2.2, tw, 7, stroke=0, fill=1)
            c.setFillColor(pc.INK)
            c.setFont(pc.FONT, 6)
            c.drawCentredString(mx, my - 0.3, label)
        # boxes
        for r, (name, units) in enumerate(rows):
            _, y, _ = pos[(r, 0)]
            c.setFillColor(pc.GREY)
            c.setFont(pc.BOLD, 7)
            c.drawString(0, y + box_h / 2 + 2, ROW_NAME[name])
            c.setFont(pc.FONT, 6)
            c.drawString(0, y + box_h / 2 - 6, f"{sum(len(u.members) for u in units):,}")
            for i, u in enumerate(units):
                x, y, bw = pos[(r, i)]
                c.setFillColor(pc.SHADE if name == "nodes" else pc.colors.HexColor("#dfe5ef"))
                c.setStrokeColor(pc.INK)
                c.setLineWidth(0.6)
                c.roundRect(x, y, bw, box_h, 1.2 * mm, stroke=1, fill=1)
                c.setFillColor(pc.INK)
                size = _fit(c, u.title, pc.BOLD, 6.5, bw - 2)
                c.setFont(pc.BOLD, size)
                c.drawCentredString(x + bw / 2, y + box_h / 2 + 0.8, u.title)
                size = _fit(c, u.detail, pc.FONT, 5.5, bw - 2)
                c.setFont(pc.FONT, size)
                c.drawCentredString(x + bw / 2, y + box_h / 2 - 6, u.detail)
        # what the numbers mean, and unlabelled tiers summarised
        c.setFillColor(pc.INK)
        c.setFont(pc.FONT, 7)
        s = d.sizing
        lines = [
            f"{d.topology}, {s.tiers} tier(s), plane {self.plane} of {d.planes}"
            + ("; the other planes are wired the same" if d.planes > 1 else "")
            + ". Boxes are switches (or groups of them, with their count); a line's number "
            "is how many links run between the two boxes.",
        ]
        for (ra, rb), counts in sorted(per_gap.items()):
            if len(counts) > MAX_LABELLED and (ra, rb) not in mesh:
                lo, hi = min(counts), max(counts)
                each = f"{lo}" if lo == hi else f"{lo}-{hi}"
                lines.append(
                    f"{ROW_NAME[rows[ra][0]]} - {ROW_NAME[rows[rb][0]]}: {sum(counts):,} links "
                    f"over {len(counts)} box pairs, {each} each (not labelled)"
                )
        for k, text in enumerate(lines[:4]):
            c.drawString(0, self.height - 4 * mm - k * 9, text)
        c.restoreState()
