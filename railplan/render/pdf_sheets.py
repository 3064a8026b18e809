"""Cabling sheets PDF (cover, topology, rack elevations, cable tables, port maps, patch-panel
port maps, BOM) and labels.

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
from typing import Any

from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable, PageBreak, Paragraph, Spacer, Table

from railplan.design import Design, Switch
from railplan.physical.bom import Bom
from railplan.render import pdf_common as pc
from railplan.render import pdf_document as pdoc
from railplan.render import pdf_tables as ptab
from railplan.render.pdf_common import CHECKBOX, Progress, esc, para, swatch
from railplan.render.pdf_document import DocInfo
from railplan.render.pdf_labels import LABEL_GRIDS, render_labels
from railplan.render.pdf_panels import panel_port_maps
from railplan.render.pdf_topology import TopologyDiagram
from railplan.render.sheet_rows import NOT_LAID_OUT, CableRow, cable_rows

__all__ = [
    "LABEL_GRIDS",
    "NOT_LAID_OUT",
    "CableRow",
    "cable_rows",
    "render_labels",
    "render_sheets",
]


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
        ("Physical cables", f"{len({r.physical or r.id for r in rows}):,} carrying "
                            f"{len(rows):,} links: "
                            + ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items()))),
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
        ptab.kv_table(summary, (45 * mm, width - 45 * mm)),
        Spacer(1, 6 * mm),
        para("Switches by role", "h2"),
        ptab.kv_table(roles, (60 * mm, 30 * mm)),
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


def _legend(design: Design) -> list[Flowable]:
    """The legend page: what each abbreviation on a label means, with worked examples."""
    from railplan.physical.labels import label_legend, short_names

    short = short_names(design)
    story: list[Flowable] = [
        pc.SectionMark("Legend", "legend"),
        para("Legend: how to read a label", "h1"),
        para(
            "Labels abbreviate device names but keep every number of the name: the number on a "
            "label is the number in the device's name on these sheets, in the CSV, in NetBox and "
            "in the test scripts (leading zeros dropped). Words are abbreviated as below; a word "
            "not listed is printed in capitals.",
            "body",
        ),
        ptab.kv_table(label_legend(design), (30 * mm, 80 * mm)),
        Spacer(1, 4 * mm),
    ]
    examples: dict[str, str] = {}
    if design.nodes:
        examples.setdefault("node", design.nodes[0].id)
    for sw in design.switches:
        examples.setdefault(sw.role, sw.id)
    for dev in design.devices:
        examples.setdefault(dev.purpose, dev.id)
    if examples:
        story.append(para("On a label -> device name", "h2"))
        rows = [(short[name], name) for name in examples.values()]
        story.append(ptab.kv_table(rows, (40 * mm, 80 * mm)))
    if design.cables:
        c = design.cables[0]
        link = next(lk for lk in design.links if lk.id == c.link_id)
        where = f" ({link.a_device} to {link.b_device})"
        story.append(Spacer(1, 4 * mm))
        story.append(para(esc(f"Example: cable {c.id}{where} is labelled {c.label_a} at its A "
                              f"end and {c.label_b} at its B end."), "body"))  # fmt: skip
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
            c.setFont(pc.FONT, pc.MIN_PAGE_PT)
            for u in range(1, rack.height_u + 1):
                y = base + (u - 1) * u_h
                c.line(x, y, x + col_w, y)
                if u % 5 == 0 or u == 1:
                    c.setFillColor(pc.GREY)
                    c.drawRightString(x - 0.6 * mm, y + u_h * 0.5 - 2, str(u))
            for p in self.placed.get(rack.id, []):
                self._device(c, x, base + (p.u - 1) * u_h, col_w, p.height_u * u_h, p)

    def _device(self, c: Any, x: float, y: float, w: float, h: float, p: Any) -> None:
        """A device's box: its name, its model (switches) or U range (nodes) when they fit."""
        sw = self.switches.get(p.device)
        c.setFillColor(pc.SHADE if sw is None else pc.colors.HexColor("#d5dbe6"))
        c.setStrokeColor(pc.INK)
        c.setLineWidth(0.5)
        c.rect(x + 0.4, y + 0.3, w - 0.8, h - 0.6, stroke=1, fill=1)
        c.setFillColor(pc.INK)
        font = pc.BOLD if sw is None else pc.FONT
        size = max(pc.MIN_PAGE_PT, min(7.0, h * 0.55))
        where = f"U{p.u}" if p.height_u == 1 else f"U{p.u}-U{p.u + p.height_u - 1}"
        second = f"({sw.model})" if sw is not None else where
        one_line = f"{p.device} {second}" if sw is not None else p.device
        lines = [one_line]
        if sw is None or c.stringWidth(one_line, font, size) > w - 2:
            lines = [p.device, second]
        if sw is not None:
            # a switch names its U too, in the first layout that fits whole (never cut for it)
            tried = [[f"{where} {p.device} {second}"], [f"{where} {p.device}", second],
                     [p.device, f"{second} {where}"]]  # fmt: skip
            for option in tried:
                wide = max(c.stringWidth(t, font, size) for t in option)
                if wide <= w - 2 and h >= (size + 1) * len(option) + 1:
                    lines = option
                    break
        if h < (size + 1) * len(lines) + 1:
            lines = lines[:1]  # a low box: its name only
        top = y + h / 2 + (len(lines) - 1) * (size + 1) / 2 - size * 0.35
        for i, text in enumerate(lines):
            c.setFont(font if i == 0 else pc.FONT, size)
            c.drawCentredString(x + w / 2, top - i * (size + 1), pc.clip(text, w + 3, font, size))


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
    if a == b:
        return a if a == "-" else f"{a} (both)"
    return f"{a} / {b}"


#: a family number with the length left open (``MCP4Y10-N00x``, ``MCA4J80-N00x-FTF``): not a
#: number one can order; the bill says "order by length" beside it
PLACEHOLDER = re.compile(r"\d[xX](?=-|$)")


def _orderable(bom: Bom | None) -> dict[tuple[str, float | None], str]:
    """(catalog part, stocked length or None) -> the orderable part number the bill lists."""
    if bom is None:
        return {}
    out: dict[tuple[str, float | None], str] = {}
    for ln in bom.lines:
        if ln.part_number and not PLACEHOLDER.search(ln.part_number):
            out[(ln.part, ln.length_m)] = ln.part_number
    return out


class _Orderable:
    """The bill's orderable part number of a row's cable (per stocked length) or an optic,
    the catalog id where the bill has none."""

    def __init__(self, bom: Bom | None) -> None:
        self.pn = _orderable(bom)

    def part(self, r: CableRow) -> str:
        length = float(r.length) if r.length.replace(".", "", 1).isdigit() else None
        return self.pn.get((r.media, length), r.media)

    def optic(self, name: str) -> str:
        return self.pn.get((name, None), name)


def _cable_tables(
    design: Design, rows: list[CableRow], frame: tuple[float, float], bom: Bom | None = None
) -> list[Flowable]:
    w, _ = frame
    pns = _Orderable(bom)
    part, optic = pns.part, pns.optic

    header = ["", "Physical / leg", "Link cable", "A rack / U", "A device", "A port",
              "B rack / U", "B device", "B port", "Cable part", "Optics A / B", "m", "Label A",
              "Label B", "Colour"]  # fmt: skip
    rel = [5, 22, 12, 15, 20, 11, 15, 21, 11, 24, 32, 6, 41, 41, 14]
    order = _rack_key(design)
    by_rack: dict[str, list[list[Any]]] = defaultdict(list)
    physical: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        by_rack[r.a.rack].append(
            [CHECKBOX, r.item, r.id, r.a.where, r.a.device, r.a.port, r.b.where, r.b.device,
             r.b.port, part(r), _optics(optic(r.optic_a), optic(r.optic_b)), r.length, r.label_a,
             r.label_b, swatch(r.colour) if r.colour else "-"]
        )  # fmt: skip
        physical[r.a.rack].add(r.physical or r.id)
    # one set of widths for every rack's table, each column as wide as its widest cell
    cells = [row for items in by_rack.values() for row in items]
    widths, small = ptab.fit_widths(header, cells, w, rel)
    if small:  # every cell clipped to its column at the smaller size (cell by cell alike)
        clipped = iter(pc.clip_rows(cells, widths, small[-1][-1]))
        by_rack = {rack: [next(clipped) for _ in items] for rack, items in by_rack.items()}
    story: list[Flowable] = [pc.SectionMark("Cable tables", "cables"), para("Cable tables", "h1"),
                             para("Every cable once, under the rack of its A end, in the order "
                                  "to pull them: top of the rack down. A twin-port or splitter "
                                  "cable is one physical item with one id (P...): its legs "
                                  "(A1-B1, A2-B2) are listed together. Cable parts and optics "
                                  "are the bill's orderable part numbers where it has one.",
                                  "small")]  # fmt: skip
    for rack in sorted(by_rack, key=lambda k: order.get(k, (9999, 0, k))):
        items = table = by_rack[rack]
        title = para(
            f"Rack {esc(rack)}: {len(physical[rack])} physical cable(s), {len(items)} link(s)",
            "h2",
        )
        tables = ptab.paged_tables(header, table, widths, extra=small, caption=f"Rack {rack}")
        story.append(CondPageBreak(30 * mm))
        story.append(pc.SectionMark(f"Rack {rack}", f"rack-{rack}", level=1))
        story.append(title)
        story.extend(tables)
    return story


def _port_maps(
    design: Design, rows: list[CableRow], frame: tuple[float, float], bom: Bom | None = None
) -> list[Flowable]:
    w, _ = frame
    pns = _Orderable(bom)
    header = ["Port", "Cable", "Far device", "Far port", "Far rack / U", "Cable part",
              "Optic here", "m", "Label here", "Colour", ""]  # fmt: skip
    rel = [12, 14, 28, 13, 18, 40, 28, 8, 40, 18, 5]
    switches = design.switch_by_id()
    ports: dict[str, list[tuple[int, list[Any]]]] = defaultdict(list)
    link_port = {lk.id: (lk.a_port, lk.b_port) for lk in design.links}
    for r in rows:
        pa, pb = link_port[r.link]
        ends = ((r.a, r.b, pa, r.label_a, r.optic_a), (r.b, r.a, pb, r.label_b, r.optic_b))
        for here, far, port, label, optic in ends:
            if here.device in switches:
                ports[here.device].append(
                    (port, [here.port, r.id, far.device, far.port, far.where, pns.part(r),
                            pns.optic(optic),
                            r.length, label, swatch(r.colour) if r.colour else "-", CHECKBOX])
                )  # fmt: skip
    story: list[Flowable] = [pc.SectionMark("Switch port maps", "ports"),
                             para("Switch port maps", "h1"),
                             para("Each cabled port of each switch, with the cable and the far "
                                  "end it must reach.", "small")]  # fmt: skip
    placed = {p.device: p for p in design.placements}
    cells = [row for items in ports.values() for _, row in items]
    widths, small = ptab.fit_widths(header, cells, w, rel)
    if small:  # every cell clipped to its column at the smaller size (cell by cell alike)
        clipped = iter(pc.clip_rows(cells, widths, small[-1][-1]))
        ports = {sw: [(port, next(clipped)) for port, _ in items] for sw, items in ports.items()}
    for sw in design.switches:
        items = sorted(ports.get(sw.id, []), key=lambda t: t[0])
        p = placed.get(sw.id)
        where = f", rack {p.rack} U{p.u}" if p else ""
        title = para(
            esc(f"{sw.id} ({sw.role}, {sw.model}{where}): {len(items)} of {sw.radix} ports cabled"),
            "h2",
        )
        body = [row for _, row in items]
        tables = ptab.paged_tables(header, body, widths, extra=small, caption=f"Switch {sw.id}")
        story.append(CondPageBreak(30 * mm))
        story.append(pc.SectionMark(f"Switch {sw.id}", f"sw-{sw.id}", level=1))
        story.append(title)
        story.extend(tables)
    return story


def _bom_section(bom: Bom | None, frame: tuple[float, float]) -> list[Flowable]:
    w, _ = frame
    story: list[Flowable] = [pc.SectionMark("Bill of materials", "bom"),
                             para("Bill of materials", "h1")]  # fmt: skip
    if bom is None:
        story.append(para("No BOM was given for this design.", "body"))
        return story
    header = ["Part", "Kind", "Description", "Part number", "Length", "Count", "Unit $",
              "Total $", "Unit W", "Total W"]  # fmt: skip
    cell = pc.STYLES["cell"]

    def number(pn: str | None) -> Any:
        if pn and PLACEHOLDER.search(pn):
            return Paragraph(f"{esc(pn)}<br/><i>order by length</i>", cell)
        return pn or "-"

    rows: list[list[Any]] = [
        [ln.part, ln.kind, Paragraph(esc(ln.description), cell), number(ln.part_number),
         f"{ln.length_m:g} m" if ln.length_m is not None else "", f"{ln.count:,}",
         f"{ln.unit_price_usd:,.0f}", f"{ln.total_usd:,.0f}", f"{ln.unit_power_w:g}",
         f"{ln.total_power_w:,.0f}"]
        for ln in bom.lines
    ]  # fmt: skip
    t = bom.totals
    rows.append(["Total", "", Paragraph(esc(f"{t.switches} switches, {t.transceivers:,} "
                 f"transceivers, {t.cables:,} cables"), pc.STYLES["cellb"]), "", "", "", "",
                 f"{t.cost_usd:,.0f}", "", f"{t.power_w:,.0f}"])  # fmt: skip
    widths, small = _bom_widths(header, bom, rows, w)
    right = [("ALIGN", (5, 0), (-1, -1), "RIGHT"), ("FONT", (0, -1), (-1, -1), pc.BOLD, 7),
             ("LINEABOVE", (0, -1), (-1, -1), 0.8, pc.INK), *small]  # fmt: skip
    # rows as tall as their wrapped description: reportlab's own Table, its header repeated
    table = Table([header, *rows], colWidths=widths, repeatRows=1)
    table.setStyle(ptab.grid_style(1, right))
    story.append(table)
    story.append(Spacer(1, 3 * mm))
    story.append(para("Sources of prices and power figures:", "h2"))
    for line in bom_sources(bom):
        story.append(para(esc(line), "small"))
    for note in bom.notes:
        story.append(para(esc(note), "small"))
    return story


def _bom_widths(
    header: list[str], bom: Bom, rows: list[list[Any]], total: float
) -> tuple[list[float], list[tuple[Any, ...]]]:
    """The bill's column widths: every column but Description as wide as its widest cell
    (bold for the Total row), so no part id or figure is cut; Description takes the rest and
    wraps in it. Part numbers that wrap ("order by length") count by their longer line."""
    need = []
    for j, head in enumerate(header):
        texts = [r[j] for r in rows[:-1] if isinstance(r[j], str)]
        bold = [rows[-1][j]] if isinstance(rows[-1][j], str) else []
        if j == 3:  # part numbers: the number itself, or "order by length" under it
            texts = [ln.part_number or "-" for ln in bom.lines] + ["order by length"]
        need.append(max(ptab.widest([head], pc.BOLD), ptab.widest(texts), ptab.widest(bold, pc.BOLD))
                    + ptab.PAD)  # fmt: skip
    rest = total - (sum(need) - need[2])
    floor = 0.2 * total  # a description column narrower than this would be a column of words
    if rest >= floor:
        return [*need[:2], rest, *need[3:]], []
    # too wide at 7 pt: the figures set smaller (rounded down, never below 6 pt)
    others = sum(need) - need[2] - ptab.PAD * (len(need) - 1)
    size = max(pc.MIN_PAGE_PT, math.floor(7 * (total - floor - ptab.PAD * 9) / others * 4) / 4)
    widths = [ptab.PAD + (n - ptab.PAD) * size / 7 for n in need]
    widths[2] = total - (sum(widths) - widths[2])
    return widths, [("FONT", (0, 1), (-1, -2), pc.FONT, size)]


def bom_sources(bom: Bom) -> list[str]:
    """The bill's sources, one line per part (a part stocked in several lengths is listed once,
    each distinct source of it once)."""
    lines: dict[str, list[str]] = {}
    for ln in bom.lines:
        text = f"price {ln.source}; power {ln.power_source or '-'}"
        seen = lines.setdefault(ln.part, [])
        if text not in seen:
            seen.append(text)
    return [f"{part}: {' | '.join(texts)}" for part, texts in lines.items()]


def sheets_story(design: Design, info: DocInfo, bom: Bom | None) -> list[Flowable]:
    land = pdoc.Document(None, info).frame_size("landscape")
    rows = cable_rows(design)
    story: list[Flowable] = []
    story += _cover(design, info, bom, rows)
    story += [PageBreak()]
    story += _legend(design)
    story += pdoc.landscape_next()
    story += [pc.SectionMark("Topology", "topology"), para("Topology", "h1")]
    story += [TopologyDiagram(design, land[0], land[1] - 12 * mm)]
    story += [PageBreak()]
    story += _elevations(design, land)
    story += [PageBreak()]
    story += _cable_tables(design, rows, land, bom)
    story += [PageBreak()]
    story += _port_maps(design, rows, land, bom)
    story += [PageBreak()]
    if design.panels:
        story += panel_port_maps(design, land)
        story += [PageBreak()]
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
    return pdoc.render(sheets_story(design, info, bom), info, progress)
