"""The cable schedule: one CSV row per cable leg, both ends, media, length and labels, rack by rack.

A link on a point-to-point cable is one row; ``physical_cable`` and ``leg`` name the physical
item it rides (two links of a twin-port DAC share the id, as legs A1-B1 and A2-B2). A link
through the fibre plant is one row per piece (harness leg, trunk position, harness leg), in
order from its a end (``piece`` 1/3, 2/3, 3/3), with the panel ports as the piece ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter

from railplan.design import Cable, Design, Link, Placement, PlantSegment, Switch
from railplan.errors import DesignFileError
from railplan.safe_text import FORMULA_STARTS, csv_pieces, neutralise, to_csv
from railplan.slot_init import slot_init

COLUMNS = (
    "cable_id",
    "a_rack",
    "a_u",
    "a_device",
    "a_port",
    "b_rack",
    "b_u",
    "b_device",
    "b_port",
    "media",
    "transceiver_a",
    "transceiver_b",
    "length_m",
    "plane",
    "rail",
    "label_a",
    "label_b",
    "colour",
    "link_id",
    "kind",
    "physical_cable",
    "leg",
    "piece",
)


@slot_init  # two per cable (786,432 at 131,072 GPUs): see railplan/slot_init.py
@dataclass(frozen=True, slots=True)
class CableEnd:
    """One end of a cable as a technician finds it: rack, U, device and port name."""

    rack: str
    u: int
    device: str
    port: str


@slot_init
@dataclass(frozen=True, slots=True)
class ScheduleRow:
    """A cable with its link and both ends resolved."""

    cable: Cable
    link: Link
    a: CableEnd
    b: CableEnd


def port_name(design: Design, device: str, port: int, switches: dict[str, Switch]) -> str:
    """Front-panel port name on a switch (``P17``, ``P9/2``), NIC port name on a node."""
    return design.port_name(device, port, switches)


def schedule(design: Design) -> list[ScheduleRow]:
    """Every cable with both ends, ordered rack by rack (row, position), top of rack first.

    Raises DesignFileError when the design has no cables yet (plan and complete it first).
    """
    if not design.cables:
        raise DesignFileError(
            f"design {design.name} has no cables; complete it with racks and cabling first "
            "(railplan cables does this from a spec)"
        )
    links = {lk.id: lk for lk in design.links}
    where: dict[str, Placement] = {p.device: p for p in design.placements}
    order = {r.id: (r.row, r.position) for r in design.racks}
    name = _port_namer(design)
    keyed = []
    for cable in design.cables:
        link = links[cable.link_id]
        pa, pb = where[link.a_device], where[link.b_device]
        a = CableEnd(pa.rack, pa.u, link.a_device, name(link.a_device, link.a_port))
        b = CableEnd(pb.rack, pb.u, link.b_device, name(link.b_device, link.b_port))
        key = (order.get(pa.rack, (0, 0)), -pa.u, link.a_device, link.a_port, cable.id)
        keyed.append((key, ScheduleRow(cable, link, a, b)))
    keyed.sort(key=itemgetter(0))
    return [row for _, row in keyed]


def _port_namer(design: Design) -> Callable[[str, int], str]:
    """``port_name`` of a device's port, worked out once per port layout: a switch's name
    depends on its cage layout only, a node's on the node shape, an attached device's on the
    port number (``Design.port_name``'s three cases, in its order)."""
    switches = design.switch_by_id()
    layout: dict[str, object] = {
        sw.id: (sw.ports_per_cage, sw.up_from_port, sw.up_ports_per_cage)
        for sw in switches.values()
    }
    layout.update((d.id, "device") for d in design.devices if d.id not in layout)
    memo: dict[tuple[object, int], str] = {}

    def name(device: str, port: int) -> str:
        key = (layout.get(device), port)  # None: a node
        found = memo.get(key)
        if found is None:
            found = memo[key] = port_name(design, device, port, switches)
        return found

    return name


#: the one cell writer (``railplan.safe_text``), importable from here as before
__all__ = [
    "COLUMNS",
    "FORMULA_STARTS",
    "neutralise",
    "render",
    "render_pieces",
    "schedule",
    "to_csv",
]


def render(design: Design) -> str:
    """The cable schedule as CSV text (header first, one row per cable leg)."""
    return "".join(render_pieces(design))


def render_pieces(design: Design) -> Iterator[str]:
    """``render``'s text in pieces, a block of rows at a time, each made as the writer asks
    for it (``cables -o`` writes one while the next is made; the whole text is never held)."""
    return csv_pieces(COLUMNS, _rows(design, schedule(design)))  # (a design without cables
    # is refused here, before a piece is asked for)


def _rows(design: Design, ordered: list[ScheduleRow]) -> Iterator[tuple[object, ...]]:
    """The CSV rows of the schedule ``ordered``, one per cable leg."""
    pieces: dict[str, list[PlantSegment]] = {}
    for seg in design.segments:
        pieces.setdefault(seg.link_id, []).append(seg)
    where = {p.device: p for p in design.placements}
    for row in ordered:
        c, lk = row.cable, row.link
        rail = lk.rail if lk.rail >= 0 else ""
        tail = (lk.plane, rail)
        chain = sorted(pieces.get(lk.id, []), key=lambda s: s.seq)
        if not chain:
            yield (c.id, row.a.rack, row.a.u, row.a.device, row.a.port, row.b.rack, row.b.u,
                   row.b.device, row.b.port, c.media, c.transceiver_a, c.transceiver_b,
                   f"{c.length_m:g}", *tail, c.label_a, c.label_b, c.colour, lk.id, lk.kind,
                   c.physical, c.leg, "")  # fmt: skip
            continue
        for seg in chain:
            first, last = seg.seq == 1, seg.seq == len(chain)
            a = row.a if first else _panel_end(seg.a_device, seg.a_port, where)
            b = row.b if last else _panel_end(seg.b_device, seg.b_port, where)
            yield (c.id, a.rack, a.u, a.device, a.port, b.rack, b.u, b.device, b.port, seg.part,
                   c.transceiver_a if first else "", c.transceiver_b if last else "",
                   f"{seg.length_m:g}", *tail, c.label_a if first else f"{a.device} {a.port}",
                   c.label_b if last else f"{b.device} {b.port}", c.colour, lk.id, lk.kind,
                   seg.physical, seg.leg, f"{seg.seq}/{len(chain)}")  # fmt: skip


def _panel_end(panel: str, port: str, where: dict[str, Placement]) -> CableEnd:
    p = where.get(panel)
    return CableEnd(p.rack if p else "", p.u if p else 0, panel, port)
