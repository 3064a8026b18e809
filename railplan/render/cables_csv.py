"""The cable schedule: one CSV row per cable leg, both ends, media, length and labels, rack by rack.

A link on a point-to-point cable is one row; ``physical_cable`` and ``leg`` name the physical
item it rides (two links of a twin-port DAC share the id, as legs A1-B1 and A2-B2). A link
through the fibre plant is one row per piece (harness leg, trunk position, harness leg), in
order from its a end (``piece`` 1/3, 2/3, 3/3), with the panel ports as the piece ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import numpy as np

from railplan.design import Cable, Design, Link, Placement, PlantSegment, Switch
from railplan.errors import DesignFileError
from railplan.safe_text import FORMULA_STARTS, column_pieces, neutralise, to_csv
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
    """Every cable with both ends, ordered rack by rack (row, position), top of rack first
    (``_schedule_order``).

    Raises DesignFileError when the design has no cables yet (plan and complete it first).
    """
    _refuse_uncabled(design)
    links = {lk.id: lk for lk in design.links}
    where: dict[str, Placement] = {p.device: p for p in design.placements}
    name = _port_namer(design)
    rows = []
    for cable in design.cables:
        link = links[cable.link_id]
        pa, pb = where[link.a_device], where[link.b_device]
        a = CableEnd(pa.rack, pa.u, link.a_device, name(link.a_device, link.a_port))
        b = CableEnd(pb.rack, pb.u, link.b_device, name(link.b_device, link.b_port))
        rows.append(ScheduleRow(cable, link, a, b))
    ends = [row.a for row in rows]
    ranked = _schedule_order(
        _rack_order(design),
        [e.rack for e in ends],
        [e.u for e in ends],
        [e.device for e in ends],
        [row.link.a_port for row in rows],
        [row.cable.id for row in rows],
    )
    return list(map(rows.__getitem__, ranked))


def _refuse_uncabled(design: Design) -> None:
    if not design.cables:
        raise DesignFileError(
            f"design {design.name} has no cables; complete it with racks and cabling first "
            "(railplan cables does this from a spec)"
        )


def _rack_order(design: Design) -> dict[str, tuple[int, int]]:
    """Each rack's (row, position): the schedule goes rack by rack in that order."""
    return {r.id: (r.row, r.position) for r in design.racks}


def _port_layouts(design: Design) -> tuple[dict[str, Switch], dict[str, object]]:
    """The design's switches by id, and each switch's or attached device's port layout: a
    switch's port name depends on its cage layout only, a node's (no entry) on the node
    shape, an attached device's on the port number (``Design.port_name``'s three cases)."""
    switches = design.switch_by_id()
    layout: dict[str, object] = {
        sw.id: (sw.ports_per_cage, sw.up_from_port, sw.up_ports_per_cage)
        for sw in switches.values()
    }
    layout.update((d.id, "device") for d in design.devices if d.id not in layout)
    return switches, layout


def _port_namer(design: Design) -> Callable[[str, int], str]:
    """``port_name`` of a device's port, worked out once per port layout and port
    (``_port_layouts``)."""
    switches, layout = _port_layouts(design)
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
    for it (``cables -o`` writes one while the next is made; the whole text is never held).
    The cells are made column by column (``schedule_columns``); a design without cables is
    refused here, before a piece is asked for."""
    return column_pieces(COLUMNS, schedule_columns(design))


_ID, _LINK_ID, _RACK, _U = (
    attrgetter("id"),
    attrgetter("link_id"),
    attrgetter("rack"),
    attrgetter("u"),
)
_A_DEVICE, _A_PORT = attrgetter("a_device"), attrgetter("a_port")
_B_DEVICE, _B_PORT = attrgetter("b_device"), attrgetter("b_port")


def schedule_columns(design: Design) -> list[list[object]]:
    """The schedule's CSV cells as columns (``COLUMNS``), rows in ``schedule``'s order: one
    row per cable on a point-to-point cable, one per piece (in order from its a end) for a
    link through the fibre plant. The rows are put in order first (each by the index of its
    cable), then every column is read off them by one C-level map, and the cells of the
    plant's pieces written over theirs; no object is made per row (at 131,072 GPUs, 393,216
    cables and 36,544 pieces).

    Raises DesignFileError when the design has no cables yet (as ``schedule``)."""
    _refuse_uncabled(design)
    cables = design.cables
    links = {lk.id: lk for lk in design.links}
    where: dict[str, Placement] = {p.device: p for p in design.placements}
    lks = list(map(links.__getitem__, map(_LINK_ID, cables)))
    a_dev, a_port = list(map(_A_DEVICE, lks)), list(map(_A_PORT, lks))
    pa = list(map(where.__getitem__, a_dev))
    ids = list(map(_ID, cables))
    ranked = _schedule_order(
        _rack_order(design), list(map(_RACK, pa)), list(map(_U, pa)), a_dev, a_port, ids
    )
    pieces: dict[str, list[PlantSegment]] = {}
    for seg in design.segments:
        pieces.setdefault(seg.link_id, []).append(seg)
    chains: list[tuple[int, list[PlantSegment]]] = []  # (first row, pieces) of each plant link
    if pieces:
        rows: list[int] = []
        link_ids = list(map(_ID, lks))
        for i in ranked:
            chain_ = pieces.get(link_ids[i])
            if chain_:
                chains.append((len(rows), sorted(chain_, key=_SEQ)))
                rows.extend([i] * len(chain_))
            else:
                rows.append(i)
        ranked = rows
    cs, ls = list(map(cables.__getitem__, ranked)), list(map(lks.__getitem__, ranked))
    a_dev, a_port, pa = (list(map(values.__getitem__, ranked)) for values in (a_dev, a_port, pa))
    b_dev, b_port = list(map(_B_DEVICE, ls)), list(map(_B_PORT, ls))
    pb = list(map(where.__getitem__, b_dev))
    a_name, b_name = _port_names(design, a_dev, a_port, b_dev, b_port)
    columns: list[list[Any]] = [
        list(map(_ID, cs)),
        list(map(_RACK, pa)),
        list(map(_U, pa)),
        a_dev,
        a_name,
        list(map(_RACK, pb)),
        list(map(_U, pb)),
        b_dev,
        b_name,
        list(map(attrgetter("media"), cs)),
        list(map(attrgetter("transceiver_a"), cs)),
        list(map(attrgetter("transceiver_b"), cs)),
        list(map("{:g}".format, map(attrgetter("length_m"), cs))),
        list(map(attrgetter("plane"), ls)),
        [r if r >= 0 else "" for r in map(attrgetter("rail"), ls)],
        list(map(attrgetter("label_a"), cs)),
        list(map(attrgetter("label_b"), cs)),
        list(map(attrgetter("colour"), cs)),
        list(map(_ID, ls)),
        list(map(attrgetter("kind"), ls)),
        list(map(attrgetter("physical"), cs)),
        list(map(attrgetter("leg"), cs)),
        [""] * len(cs),
    ]
    if chains:
        _write_pieces(columns, chains, where)
    return columns


def _schedule_order(
    order: dict[str, tuple[int, int]],
    a_rack: list[str],
    a_u: list[int],
    a_dev: list[str],
    a_port: list[int],
    ids: list[str],
) -> list[int]:
    """The cables' order in the schedule: by the a end's rack (``order``: its row and position,
    (0, 0) when not listed), top U first, device, port, then cable id, as a sort of those key
    tuples would give. Each key is ranked among its few distinct values and the four sorted
    together by NumPy (``lexsort`` is stable); cables alike in all four (none in a railplan
    design) are then put in id order."""
    racks = [order.get(r, (0, 0)) for r in a_rack]
    n = len(ids)

    def ranks(values: list[Any]) -> np.ndarray:
        rank = {v: i for i, v in enumerate(sorted(set(values)))}
        return np.fromiter(map(rank.__getitem__, values), np.int64, n)

    keys = (ranks(a_port), ranks(a_dev), -np.asarray(a_u, dtype=np.int64), ranks(racks))
    ranked = np.lexsort(keys)
    sorted_keys = [k[ranked] for k in keys]
    alike = np.ones(max(0, n - 1), dtype=bool)
    for k in sorted_keys:
        alike &= k[1:] == k[:-1]
    out: list[int] = ranked.tolist()
    if alike.any():  # runs of cables alike in all four: by id, as the key tuples would
        starts = np.flatnonzero(np.r_[True, ~alike])
        stops = np.r_[starts[1:], n]
        for lo, hi in zip(starts.tolist(), stops.tolist(), strict=True):
            if hi - lo > 1:
                out[lo:hi] = sorted(out[lo:hi], key=ids.__getitem__)
    return out


def _port_names(
    design: Design, a_dev: list[str], a_port: list[int], b_dev: list[str], b_port: list[int]
) -> tuple[list[str], list[str]]:
    """``port_name`` of the ends ``a_dev``/``a_port`` and ``b_dev``/``b_port``, worked out
    once per port layout and port (``_port_layouts``), as ``_port_namer`` does end by end."""
    switches, layout = _port_layouts(design)
    a_keys = list(zip(map(layout.get, a_dev), a_port, strict=True))  # None: a node
    b_keys = list(zip(map(layout.get, b_dev), b_port, strict=True))
    names: dict[tuple[object, int], str] = {}
    for keys, devices, ports in ((a_keys, a_dev, a_port), (b_keys, b_dev, b_port)):
        for key, i in dict(zip(keys, range(len(keys)), strict=True)).items():  # an end a key
            if key not in names:
                names[key] = port_name(design, devices[i], ports[i], switches)
    return list(map(names.__getitem__, a_keys)), list(map(names.__getitem__, b_keys))


def _write_pieces(
    columns: list[list[Any]],
    chains: list[tuple[int, list[PlantSegment]]],
    where: dict[str, Placement],
) -> None:
    """Over the rows of each link through the plant (its cable's row, once per piece), each
    piece's own cells: the link's ends, transceivers and labels at the first and last piece,
    the panel ports between, and the piece's part, length, id, leg and number."""
    (_, a_rack, a_u, a_dev, a_port, b_rack, b_u, b_dev, b_port, media, tx_a, tx_b, length,
     _, _, label_a, label_b, _, _, _, physical, leg, piece) = columns  # fmt: skip
    for row, chain_ in chains:
        last_row = row + len(chain_) - 1
        for r, seg in enumerate(chain_, start=row):
            if r > row:
                a = _panel_end(seg.a_device, seg.a_port, where)
                a_rack[r], a_u[r], a_dev[r], a_port[r] = a.rack, a.u, a.device, a.port
                tx_a[r], label_a[r] = "", f"{a.device} {a.port}"
            if r < last_row:
                b = _panel_end(seg.b_device, seg.b_port, where)
                b_rack[r], b_u[r], b_dev[r], b_port[r] = b.rack, b.u, b.device, b.port
                tx_b[r], label_b[r] = "", f"{b.device} {b.port}"
            media[r], length[r] = seg.part, f"{seg.length_m:g}"
            physical[r], leg[r], piece[r] = seg.physical, seg.leg, f"{seg.seq}/{len(chain_)}"


_SEQ = attrgetter("seq")


def _panel_end(panel: str, port: str, where: dict[str, Placement]) -> CableEnd:
    p = where.get(panel)
    return CableEnd(p.rack if p else "", p.u if p else 0, panel, port)
