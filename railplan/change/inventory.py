"""What a laid-out design installs, item by item with an identity: switches, modules, cables.

Two designs are compared by what stands on the floor, not by how their bills are summed: a
switch by its id, a module by the cage it sits in, a cable by the links (port pairs) it
carries, a fibre-plant piece by its physical id, a panel by its id. Each item knows its bill
line (kind, part, stocked length), so the difference of two inventories is a delta bill that
must equal the difference of the two bills line by line (``tests/test_change_grow.py``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.design import Design, Link
from railplan.design.ends import every_end, link_ends
from railplan.physical.bom_items import line_kind

#: one end of a link: (device, logical port)
Port = tuple[str, int]
#: a link by its two ends, lower end first (the a end of railplan's links points to the nodes)
Ends = tuple[Port, Port]
#: a bill line: (kind, part, stocked length or None)
LineKey = tuple[str, str, float | None]


def ends_of(link: Link) -> Ends:
    """The link's two ports, a end first."""
    return (link.a_device, link.a_port), (link.b_device, link.b_port)


@dataclass(frozen=True, slots=True)
class CableItem:
    """One physical cable (or plant piece): its part, stocked length and the links it carries."""

    key: str
    line: LineKey
    legs: frozenset[Ends]


@dataclass(frozen=True)
class Inventory:
    """Everything a design installs, keyed by identity."""

    switches: dict[str, str]
    #: (device, cage index) -> transceiver part
    modules: dict[tuple[str, int], str]
    #: direct cables by the set of links they carry
    cables: dict[frozenset[Ends], CableItem]
    #: fibre-plant pieces (harnesses, trunks, cords) by physical id
    plant: dict[str, CableItem]
    #: panel id -> (part, rack, u, cassette part, cassettes)
    panels: dict[str, tuple[str, str, int, str, int]]


def _stocked(catalog: Catalog, part: str, length: float) -> float:
    cab = catalog.cables[part]
    stock = cab.stocked(length)
    return stock if stock is not None else cab.lengths_m[-1]


def inventory(design: Design, catalog: Catalog) -> Inventory:
    """The installed items of a laid-out ``design`` (cables, modules and plant from its rows)."""
    links = {lk.id: lk for lk in design.links}
    cages = every_end(link_ends(design, catalog)) if design.cables else {}
    modules: dict[tuple[str, int], str] = {}
    for cab in sorted(design.cables, key=lambda c: c.link_id):
        for end, part in zip(
            cages[cab.link_id], (cab.transceiver_a, cab.transceiver_b), strict=True
        ):
            if part and part in catalog.transceivers:
                modules.setdefault((end.device, end.cage), part)
    plant_links = {s.link_id for s in design.segments}
    by_physical: dict[str, list] = defaultdict(list)
    for cab in design.cables:
        if cab.link_id not in plant_links:
            by_physical[cab.physical or cab.id].append(cab)
    cables: dict[frozenset[Ends], CableItem] = {}
    for key, rows in by_physical.items():
        rows.sort(key=lambda c: c.link_id)
        media = catalog.cables[rows[0].media]
        length = max(max(c.length_m for c in rows), 0.0)
        legs = frozenset(ends_of(links[c.link_id]) for c in rows)
        line = (line_kind(media, False), media.id, _stocked(catalog, media.id, length))
        cables[legs] = CableItem(key, line, legs)
    pieces: dict[str, list] = defaultdict(list)
    for seg in design.segments:
        pieces[seg.physical].append(seg)
    plant: dict[str, CableItem] = {}
    for key, segs in pieces.items():
        segs.sort(key=lambda s: (s.link_id, s.seq))
        piece = catalog.cables[segs[0].part]
        length = max(max(s.length_m for s in segs), 0.0)
        legs = frozenset(ends_of(links[s.link_id]) for s in segs)
        line = (line_kind(piece, True), piece.id, _stocked(catalog, piece.id, length))
        plant[key] = CableItem(key, line, legs)
    panels = {p.id: (p.part, p.rack, p.u, p.cassette, p.cassettes) for p in design.panels}
    return Inventory(
        switches={s.id: s.model for s in design.switches},
        modules=modules,
        cables=cables,
        plant=plant,
        panels=panels,
    )
