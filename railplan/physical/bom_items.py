"""The physical items a laid-out design is built from: modules per cage, cables per id.

A module is one per cage (a twin-port module serving two links is one part). A cable is one
per physical id (``Cable.physical``: a twin-port DAC or a 1:2 splitter carries two links under
one id), at the longest length any of its links needs; the fibre plant adds its harnesses,
trunks and cords from ``Design.segments``. Designs written before physical ids existed are
grouped by the rule that assigns them (``physical_ids.instance_key``), each group cut to its
component's longest length as ``media.assign_cages`` does.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from railplan.catalog import Cable, Catalog, Transceiver
from railplan.design import Design
from railplan.design.ends import CageEnd
from railplan.physical.media_assign import LinkRun, components
from railplan.physical.physical_ids import instance_key


@dataclass
class Item:
    """One physical cable: its part, the length it is cut to, its links and its BOM kind."""

    part: Cable
    length_m: float
    kind: str
    links: list[str] = field(default_factory=list)


@dataclass
class Module:
    """One module in one cage, and the links it serves."""

    part: Transceiver
    on_switch: bool
    links: list[str] = field(default_factory=list)


def line_kind(part: Cable, in_plant: bool) -> str:
    """BOM kind of a cable part: cable, fibre, splitter, or harness/trunk in the plant."""
    if part.kind == "trunk":
        return "trunk"
    if part.breakout > 1:
        return "harness" if in_plant else "splitter"
    return "fibre" if part.optical else "cable"


def modules(
    design: Design, catalog: Catalog, ends: Mapping[str, tuple[CageEnd, CageEnd]]
) -> dict[tuple[str, int], Module]:
    """Every cage's module (by device and cage), with the links it serves."""
    switches = design.switch_by_id()
    out: dict[tuple[str, int], Module] = {}
    for cab in sorted(design.cables, key=lambda c: c.link_id):
        a, b = ends[cab.link_id]
        for end, name in ((a, cab.transceiver_a), (b, cab.transceiver_b)):
            t = catalog.transceivers.get(name) if name else None
            if t is None:
                continue
            held = out.get(end.key)
            if held is None:
                held = out[end.key] = Module(t, end.device in switches)
            held.part = t
            held.links.append(cab.link_id)
    return out


def items(
    design: Design, catalog: Catalog, ends: Mapping[str, tuple[CageEnd, CageEnd]]
) -> dict[Hashable, Item]:
    """Every physical cable of the design, point-to-point and fibre plant alike."""
    plant_links = {s.link_id for s in design.segments}
    direct = sorted(
        (c for c in design.cables if c.link_id not in plant_links), key=lambda c: c.link_id
    )
    out: dict[Hashable, Item] = {}
    if direct and all(c.physical for c in direct):
        for cab in direct:
            item = out.get(("id", cab.physical))
            if item is None:
                part = catalog.cables[cab.media]
                item = out[("id", cab.physical)] = Item(part, 0.0, line_kind(part, False))
            item.length_m = max(item.length_m, cab.length_m)
            item.links.append(cab.link_id)
    else:
        out.update(_inferred(direct, catalog, ends))
    for s in design.segments:
        part = catalog.cables[s.part]
        item = out.setdefault(("id", s.physical), Item(part, s.length_m, line_kind(part, True)))
        item.length_m = max(item.length_m, s.length_m)
        item.links.append(s.link_id)
    return out


def _inferred(
    cables: list, catalog: Catalog, ends: Mapping[str, tuple[CageEnd, CageEnd]]
) -> dict[Hashable, Item]:
    """Physical cables of a design without ids: grouped by the rule that assigns ids."""
    runs = [LinkRun(c.link_id, 0, c.length_m, *ends[c.link_id]) for c in cables]
    longest: dict[int, float] = {}
    for members in components(runs):
        top = max(runs[i].length_m for i in members)
        for i in members:
            longest[i] = top
    out: dict[Hashable, Item] = {}
    for i, cab in enumerate(cables):
        part = catalog.cables[cab.media]
        a, b = ends[cab.link_id]
        mods = [
            catalog.transceivers.get(n) if n else None
            for n in (cab.transceiver_a, cab.transceiver_b)
        ]
        key = instance_key(part, a, b, mods)
        item = out.setdefault(key, Item(part, 0.0, line_kind(part, False)))
        item.length_m = max(item.length_m, longest[i])
        item.links.append(cab.link_id)
    return out
