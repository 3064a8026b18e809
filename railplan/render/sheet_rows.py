"""One row per cable for the sheets and labels: both ends as rack, U, device, port and label."""

from __future__ import annotations

from dataclasses import dataclass

from railplan.design import Design
from railplan.render import cables_csv

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
    #: the physical item this link rides (twin-port DAC/AOC, splitter: shared by its legs)
    physical: str = ""
    leg: str = ""

    @property
    def item(self) -> str:
        """The physical cable's id, with its leg when the item has several (``P00012 A1-B1``)."""
        if not self.physical:
            return self.id
        return f"{self.physical} {self.leg}" if self.leg else self.physical


def legs_together(rows: list[CableRow]) -> list[CableRow]:
    """Rows in schedule order, the legs of one physical cable moved up beside its first leg
    (within the rack of its A end, where the sheets list it)."""
    first: dict[tuple[str, str], int] = {}
    for i, r in enumerate(rows):
        first.setdefault((r.a.rack, r.physical or r.id), i)
    return sorted(rows, key=lambda r: first[(r.a.rack, r.physical or r.id)])


#: the last design whose rows were made, and its rows: ``sheets`` prints the sheets and then
#: the labels of one design (a design is frozen, so its rows cannot go stale)
_LAST: list[tuple[Design, list[CableRow]]] = []


def cable_rows(design: Design) -> list[CableRow]:
    """Every cable of the design (or every link, when no layout has cabled it yet)."""
    if _LAST and _LAST[0][0] is design:
        return list(_LAST[0][1])
    rows = _cable_rows(design)
    _LAST[:] = [(design, rows)]
    return list(rows)


def _cable_rows(design: Design) -> list[CableRow]:
    switches = design.switch_by_id()
    nodes = design.node_by_id()
    devices = design.device_by_id()
    placed = {p.device: p for p in design.placements}

    def end(device: str, port: int) -> End:
        sw = switches.get(device)
        name = design.port_name(device, port, switches)
        p = placed.get(device)
        if p is not None:
            return End(device, name, p.rack, p.u)
        if sw is not None:
            return End(device, name, "network", None)
        host = nodes.get(device) or devices[device]  # a node, or a device in a node's slot
        return End(device, name, f"rack {host.rack + 1}", None)

    rows = []
    if design.cables:  # the cable schedule's order: rack by rack, top of the rack down
        for sr in cables_csv.schedule(design):
            c, lk = sr.cable, sr.link
            rows.append(
                CableRow(c.id, lk.id, lk.kind, End(sr.a.device, sr.a.port, sr.a.rack, sr.a.u),
                         End(sr.b.device, sr.b.port, sr.b.rack, sr.b.u), c.media,
                         c.transceiver_a or "-", c.transceiver_b or "-", f"{c.length_m:g}",
                         c.label_a, c.label_b, c.colour, lk.rate_gbps, c.physical, c.leg)
            )  # fmt: skip
        return legs_together(rows)
    for lk in design.links:
        a, b = end(lk.a_device, lk.a_port), end(lk.b_device, lk.b_port)
        rows.append(
            CableRow(lk.id, lk.id, lk.kind, a, b, "-", "-", "-", NOT_LAID_OUT,
                     f"{a.device}-{a.port}", f"{b.device}-{b.port}", "", lk.rate_gbps)
        )  # fmt: skip
    return rows
