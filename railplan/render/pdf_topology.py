"""The topology figure of the sheets: tiers as rows of boxes, bundles as bands, one plane."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

from reportlab.lib.units import mm
from reportlab.platypus import Flowable

from railplan.design import Design, Switch
from railplan.render import pdf_common as pc

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
                size = pc.fit_size(c, u.title, pc.BOLD, 6.5, bw - 2)
                c.setFont(pc.BOLD, size)
                title = pc.clip(u.title, bw + 2, pc.BOLD, size)
                c.drawCentredString(x + bw / 2, y + box_h / 2 + 0.8, title)
                c.setFont(pc.FONT, pc.MIN_PAGE_PT)
                detail = pc.clip(u.detail, bw + 2, pc.FONT, pc.MIN_PAGE_PT)
                c.drawCentredString(x + bw / 2, y + box_h / 2 - 6.2, detail)
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
