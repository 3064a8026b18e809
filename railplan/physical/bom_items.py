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

import numpy as np

from railplan.array_groups import sort_groups
from railplan.catalog import Cable, Catalog, Transceiver
from railplan.design import Cable as CableRow
from railplan.design import Design
from railplan.design.ends import CageEnd
from railplan.design.link_table import LinkTable
from railplan.physical.media_assign import LinkRun, components
from railplan.physical.physical_ids import instance_key


@dataclass(slots=True)
class Item:
    """One physical cable of a design without physical ids: its part, the length it is cut
    to, its BOM kind and its first link (by id)."""

    part: Cable
    length_m: float
    kind: str
    link: str


@dataclass(frozen=True)
class Modules:
    """Every cage's module, one row per cage (cages in the order of their first link by id):
    the part (``part`` indexes ``parts``), whether the cage is a switch's, the device (an
    index into ``devices``) and the first link (by id) it serves."""

    parts: tuple[Transceiver, ...]
    part: np.ndarray
    on_switch: np.ndarray
    device: np.ndarray
    devices: tuple[str, ...]
    link: list[str]

    def __len__(self) -> int:
        return len(self.link)


@dataclass(frozen=True)
class Items:
    """Every physical cable, one row per item in the order of its first link: the part
    (``part`` indexes ``parts``), the length it is cut to, its BOM kind and its first link (by
    id; the item is counted under that link's kind)."""

    parts: tuple[Cable, ...]
    part: np.ndarray
    length_m: np.ndarray
    kind: list[str]
    link: list[str]

    def __len__(self) -> int:
        return len(self.link)


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
    design: Design, catalog: Catalog, table: LinkTable, ordered: Sequence[CableRow]
) -> Modules:
    """Every cage's module; ``ordered`` is ``by_link(design)``, ``table`` the design's
    ``link_table``.

    Call it on cables ``check_cables`` passed: a cage then holds one module whatever link of
    it names the module, so the first link that names one stands for the cage. Worked out over
    arrays: each cable's two ends in turn, the first end naming a catalog module per cage key.
    """
    n = len(ordered)
    rows = np.fromiter(map(table.row.__getitem__, map(_LINK_ID, ordered)), np.int64, n)
    names = (list(map(_TRANSCEIVER_A, ordered)), list(map(_TRANSCEIVER_B, ordered)))
    known = catalog.transceivers
    code_of = {name: i for i, name in enumerate(sorted(set(names[0]) | set(names[1])))}
    parts = tuple(known.get(name) for name in code_of)
    usable = np.array([t is not None for t in parts], bool)
    # ends in the order modules are met: a then b of each cable, cable by cable
    code = np.empty(2 * n, np.int64)
    code[0::2] = np.fromiter(map(code_of.__getitem__, names[0]), np.int64, n)
    code[1::2] = np.fromiter(map(code_of.__getitem__, names[1]), np.int64, n)
    key = np.empty(2 * n, np.int64)
    key[0::2], key[1::2] = table.a.cage_key[rows], table.b.cage_key[rows]
    device = np.empty(2 * n, np.int64)
    device[0::2], device[1::2] = table.a.device[rows], table.b.device[rows]
    met = np.flatnonzero(usable[code])
    by_cage, starts = sort_groups(key[met])
    at = np.sort(met[by_cage[starts]])  # each cage's first end, in the order they are met
    switches = design.switch_by_id()
    is_switch = np.array([d in switches for d in table.devices], bool)
    found = tuple(t for t in parts if t is not None)
    renumber = np.cumsum(usable) - 1
    link_ids = list(map(_LINK_ID, ordered))
    return Modules(
        parts=found,
        part=renumber[code[at]],
        on_switch=is_switch[device[at]],
        device=device[at],
        devices=table.devices,
        link=[link_ids[i] for i in (at // 2).tolist()],
    )


def items(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    ordered: Sequence[CableRow],
) -> Items:
    """Every physical cable of the design, point-to-point and fibre plant alike; ``ordered``
    is ``by_link(design)``. Cables sharing a physical id (and plant pieces) are one item, cut
    to the longest length its links need, of the part of its first; grouped over arrays."""
    plant_links = {s.link_id for s in design.segments}
    direct = [c for c in ordered if c.link_id not in plant_links] if plant_links else ordered
    keys: list[Hashable]
    if direct and all(map(_PHYSICAL, direct)):
        keys = list(map(_PHYSICAL, direct))
        media = list(map(_MEDIA, direct))
        links = list(map(_LINK_ID, direct))
        lengths = np.maximum(np.fromiter(map(_LENGTH, direct), float, len(direct)), 0.0)
    else:
        inferred = _inferred(direct, catalog, ends)
        keys = list(inferred)
        media = [item.part.id for item in inferred.values()]
        links = [item.link for item in inferred.values()]
        lengths = np.array([item.length_m for item in inferred.values()], float)
    in_plant = np.zeros(len(keys) + len(design.segments), bool)
    in_plant[len(keys) :] = True
    segments = design.segments
    keys += map(_PHYSICAL, segments)
    media += map(_PART, segments)
    links += map(_LINK_ID, segments)
    lengths = np.concatenate((lengths, np.fromiter(map(_LENGTH, segments), float, len(segments))))
    distinct = dict.fromkeys(keys)
    group_of = dict(zip(distinct, range(len(distinct)), strict=True))
    group = np.fromiter(map(group_of.__getitem__, keys), np.int64, len(keys))
    by_group, starts = sort_groups(group)
    first = by_group[starts]
    longest = np.maximum.reduceat(lengths[by_group], starts) if len(keys) else lengths
    part_ids = sorted({media[i] for i in first.tolist()})
    code_of = {pid: i for i, pid in enumerate(part_ids)}
    parts = tuple(catalog.cables[pid] for pid in part_ids)
    part = np.fromiter((code_of[media[i]] for i in first.tolist()), np.int64, len(first))
    kinds = {
        (c, plant): line_kind(parts[c], plant) for c in range(len(parts)) for plant in (False, True)
    }
    return Items(
        parts=parts,
        part=part,
        length_m=longest,
        kind=[
            kinds[c, plant]
            for c, plant in zip(part.tolist(), in_plant[first].tolist(), strict=True)
        ],
        link=[links[i] for i in first.tolist()],
    )


_MEDIA, _PART, _PHYSICAL = attrgetter("media"), attrgetter("part"), attrgetter("physical")
_LENGTH = attrgetter("length_m")
_TRANSCEIVER_A, _TRANSCEIVER_B = attrgetter("transceiver_a"), attrgetter("transceiver_b")
_LINK_ID = attrgetter("link_id")


def _inferred(
    cables: Sequence[CableRow], catalog: Catalog, ends: Mapping[str, tuple[CageEnd, CageEnd]]
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
