"""Patch-panel port maps for the cabling sheets: what plugs into each coupler, front and rear.

One table per panel of the fibre plant: every used port with the leg on its front (a harness
leg from a module, or a patch cord) and on its rear (a trunk position to a far panel, or the
other harness leg of a link that stays in the rack), the link it carries and the far end.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from reportlab.lib.units import mm
from reportlab.platypus import CondPageBreak, Flowable

from railplan.design import Design, PlantSegment
from railplan.render import pdf_common as pc
from railplan.render import pdf_tables as ptab
from railplan.render.pdf_common import CHECKBOX, esc, para

HEADER = ["Port", "Front: physical / leg", "Front: from", "Rear: physical / leg", "Rear: to",
          "Link", "Cable", ""]  # fmt: skip
REL = [10, 26, 44, 26, 44, 16, 14, 5]


def _sides(design: Design) -> dict[str, dict[int, dict[str, tuple[PlantSegment, str, str]]]]:
    """Per panel, per port number, per side: the piece and its far end (device, port)."""
    out: dict[str, dict[int, dict[str, tuple[PlantSegment, str, str]]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    panels = {p.id for p in design.panels}
    for s in design.segments:
        for here, port, far, far_port in (
            (s.a_device, s.a_port, s.b_device, s.b_port),
            (s.b_device, s.b_port, s.a_device, s.a_port),
        ):
            if here in panels and "/" in port:
                number, side = port.split("/")
                out[here][int(number[1:])][side] = (s, far, far_port)
    return out


def panel_port_maps(design: Design, frame: tuple[float, float]) -> list[Flowable]:
    """The port map of every patch panel, rack by rack (empty when there is no fibre plant)."""
    if not design.panels:
        return []
    w, _ = frame
    widths = [w * r / sum(REL) for r in REL]
    cables = {c.link_id: c.id for c in design.cables}
    sides = _sides(design)
    order = {r.id: (r.row, r.position) for r in design.racks}
    story: list[Flowable] = [
        pc.SectionMark("Patch-panel port maps", "panels"),
        para("Patch-panel port maps", "h1"),
        para(
            "Each used coupler of each panel of the fibre plant: the leg on its front (a "
            "harness leg or cord from a module) and on its rear (a trunk position to a far "
            "panel, or the far harness leg of a link that stays in this rack). Legs are named "
            "A&lt;n&gt;-B&lt;n&gt; on their physical cable.",
            "small",
        ),
    ]
    for panel in sorted(design.panels, key=lambda p: (order.get(p.rack, (0, 0)), -p.u, p.id)):
        rows: list[list[Any]] = []
        for number, by_side in sorted(sides[panel.id].items()):
            cells: list[Any] = [f"P{number:02d}"]
            link = ""
            for side in ("front", "rear"):
                if side in by_side:
                    seg, far, far_port = by_side[side]
                    cells += [f"{seg.physical} {seg.leg}", f"{far} {far_port}"]
                    link = seg.link_id
                else:
                    cells += ["-", "-"]
            rows.append([*cells, link, cables.get(link, "-"), CHECKBOX])
        title = para(
            esc(
                f"{panel.id} ({panel.part}, {panel.cassettes} x {panel.cassette}): rack "
                f"{panel.rack} U{panel.u}-U{panel.u + panel.height_u - 1}, {panel.used} of "
                f"{panel.ports} ports used"
            ),
            "h2",
        )
        story.append(CondPageBreak(30 * mm))
        story.append(pc.SectionMark(f"Panel {panel.id}", f"pnl-{panel.id}", level=1))
        story.append(title)
        story.extend(
            ptab.paged_tables(
                HEADER, pc.clip_rows(rows, widths), widths, caption=f"Panel {panel.id}"
            )
        )
    return story
