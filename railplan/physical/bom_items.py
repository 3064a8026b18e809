"""The physical items a laid-out design is built from: modules per cage, cables per id.

A module is one per cage (a twin-port module serving two links is one part). A cable is one
per physical id (``Cable.physical``: a twin-port DAC or a 1:2 splitter carries two links under
one id), at the longest length any of its links needs; the fibre plant adds its harnesses,
trunks and cords from ``Design.segments``. Designs written before physical ids existed are
grouped by the rule that assigns them (``physical_ids.instance_key``), each group cut to its
component's longest length as ``media.assign_cages`` does.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

from railplan.catalog import Cable, Catalog, Transceiver
from railplan.design import Cable as CableRow
from railplan.design import Design
from railplan.design.ends import CageEnd
from railplan.physical.media_assign import LinkRun, components
from railplan.physical.physical_ids import instance_key


@dataclass(slots=True)
class Item:
    """One physical cable: its part, the length it is cut to, its BOM kind and its first link
    (by id; the item is counted under that link's kind)."""

    part: Cable
    length_m: float
    kind: str
    link: str


@dataclass(slots=True)
class Module:
    """One module in one cage, and the first link (by id) it serves."""

    part: Transceiver
    on_switch: bool
    link: str


def line_kind(part: Cable, in_plant: bool) -> str:
    """BOM kind of a cable part: cable, fibre, splitter, or harness/trunk in the plant."""
    if part.kind == "trunk":
        return "trunk"
    if part.breakout > 1:
        return "harness" if in_plant else "splitter"
    return "fibre" if part.optical else "cable"


def by_link(design: Design) -> list[CableRow]:
    """The design's cables in the order of their link ids (what ``modules`` and ``items``
    walk)."""
    return sorted(design.cables, key=_LINK_ID)


def modules(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    ordered: Sequence[CableRow],
) -> dict[tuple[str, int], Module]:
    """Every cage's module (by device and cage, cages in the order of their first link by id);
    ``ordered`` is ``by_link(design)``.

    Call it on cables ``check_cables`` passed: a cage then holds one module whatever link of
    it names the module, so the first link that names one stands for the cage.
    """
    switches = design.switch_by_id()
    out: dict[tuple[str, int], Module] = {}
    for cab in ordered:
        a, b = ends[cab.link_id]
        for end, name in ((a, cab.transceiver_a), (b, cab.transceiver_b)):
            if not name or end.key in out:
                continue
            t = catalog.transceivers.get(name)
            if t is not None:
                out[end.key] = Module(t, end.device in switches, cab.link_id)
    return out


def items(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    ordered: Sequence[CableRow],
) -> dict[Hashable, Item]:
    """Every physical cable of the design, point-to-point and fibre plant alike; ``ordered``
    is ``by_link(design)``."""
    plant_links = {s.link_id for s in design.segments}
    direct = [c for c in ordered if c.link_id not in plant_links]
    out: dict[Hashable, Item] = {}
    if direct and all(c.physical for c in direct):
        parts: dict[str, tuple[Cable, str]] = {}
        for cab in direct:
            key = ("id", cab.physical)
            item = out.get(key)
            if item is None:
                hit = parts.get(cab.media)
                if hit is None:
                    part = catalog.cables[cab.media]
                    hit = parts[cab.media] = (part, line_kind(part, False))
                out[key] = Item(hit[0], max(0.0, cab.length_m), hit[1], cab.link_id)
            elif cab.length_m > item.length_m:
                item.length_m = cab.length_m
    else:
        out.update(_inferred(direct, catalog, ends))
    for s in design.segments:
        part = catalog.cables[s.part]
        item = out.setdefault(
            ("id", s.physical), Item(part, s.length_m, line_kind(part, True), s.link_id)
        )
        item.length_m = max(item.length_m, s.length_m)
    return out


_LINK_ID = attrgetter("link_id")


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
        item = out.setdefault(key, Item(part, 0.0, line_kind(part, False), cab.link_id))
        item.length_m = max(item.length_m, longest[i])
    return out
