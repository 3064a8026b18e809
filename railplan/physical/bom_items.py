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
from functools import cached_property
from itertools import compress, repeat
from operator import attrgetter

import numpy as np

from railplan.array_groups import sort_groups
from railplan.catalog import Cable, Catalog, Transceiver
from railplan.design import Cable as CableRow
from railplan.design import Design
from railplan.design.ends import CageEnd, every_end
from railplan.design.link_table import LinkTable, link_table
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
    index into ``devices``) and the first link it serves (``row``: its row in the design's
    ``link_table``; ``link``: its id)."""

    parts: tuple[Transceiver, ...]
    part: np.ndarray
    on_switch: np.ndarray
    device: np.ndarray
    devices: tuple[str, ...]
    row: np.ndarray
    ids: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.row)

    @cached_property
    def link(self) -> list[str]:
        """The id of each module's first link."""
        return list(map(self.ids.__getitem__, self.row.tolist()))


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
    #: the row of each item's first link in the design's ``link_table`` (-1: not a link of it)
    row: np.ndarray

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


def by_link_order(design: Design) -> list[int]:
    """The positions of ``by_link(design)``'s cables in ``design.cables`` (a stable sort:
    cables of one link keep their order)."""
    ids = list(map(_LINK_ID, design.cables))
    return sorted(range(len(ids)), key=ids.__getitem__)


def link_rows(table: LinkTable, ordered: Sequence[CableRow]) -> np.ndarray:
    """The ``link_table`` row of each cable's link (``KeyError`` for a link not in it)."""
    return np.fromiter(map(table.row.__getitem__, map(_LINK_ID, ordered)), np.int64, len(ordered))


def modules(
    design: Design,
    catalog: Catalog,
    table: LinkTable,
    ordered: Sequence[CableRow],
    rows: np.ndarray | None = None,
) -> Modules:
    """Every cage's module; ``ordered`` is ``by_link(design)``, ``table`` the design's
    ``link_table`` and ``rows`` (worked out when not given) ``link_rows(table, ordered)``.

    Call it on cables ``check_cables`` passed: a cage then holds one module whatever link of
    it names the module, so the first link that names one stands for the cage. Worked out over
    arrays: each cable's two ends in turn, the first end naming a catalog module per cage key.
    """
    n = len(ordered)
    rows = link_rows(table, ordered) if rows is None else rows
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
    return Modules(
        parts=found,
        part=renumber[code[at]],
        on_switch=is_switch[device[at]],
        device=device[at],
        devices=table.devices,
        row=rows[at // 2],
        ids=table.ids,
    )


def items(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    ordered: Sequence[CableRow],
    table: LinkTable | None = None,
    rows: np.ndarray | None = None,
) -> Items:
    """Every physical cable of the design, point-to-point and fibre plant alike; ``ordered``
    is ``by_link(design)``, ``table`` the design's ``link_table`` and ``rows``
    ``link_rows(table, ordered)`` (both worked out when not given). Cables sharing a physical
    id (and plant pieces) are one item, cut to the longest length its links need, of the part
    of its first; grouped over arrays."""
    table = link_table(design, catalog) if table is None else table
    rows = link_rows(table, ordered) if rows is None else rows
    segments = design.segments
    seg_rows = np.fromiter(
        map(table.row.get, map(_LINK_ID, segments), repeat(-1)), np.int64, len(segments)
    )
    direct, direct_rows = ordered, rows
    if segments:  # the plant's links are billed as its pieces, not as their cables
        plant = np.zeros(len(table) + 1, bool)  # the last: a piece's link not in the table
        plant[seg_rows] = True
        keep = ~plant[rows]
        direct, direct_rows = list(compress(ordered, keep.tolist())), rows[keep]
    keys: list[Hashable]
    if direct and all(map(_PHYSICAL, direct)):
        keys = list(map(_PHYSICAL, direct))
        media = list(map(_MEDIA, direct))
        links = list(map(_LINK_ID, direct))
        lengths = np.maximum(np.fromiter(map(_LENGTH, direct), float, len(direct)), 0.0)
        link_row = direct_rows
        by_name = True  # physical ids: strings, grouped by sorting
    else:
        inferred = _inferred(direct, catalog, every_end(ends))
        keys = list(inferred)
        media = [item.part.id for item in inferred.values()]
        links = [item.link for item in inferred.values()]
        lengths = np.array([item.length_m for item in inferred.values()], float)
        link_row = np.fromiter(map(table.row.__getitem__, links), np.int64, len(links))
        by_name = False
    in_plant = np.zeros(len(keys) + len(segments), bool)
    in_plant[len(keys) :] = True
    keys += map(_PHYSICAL, segments)
    media += map(_PART, segments)
    links += map(_LINK_ID, segments)
    lengths = np.concatenate((lengths, np.fromiter(map(_LENGTH, segments), float, len(segments))))
    group = _first_seen(keys) if by_name else _first_seen_hashed(keys)
    by_group, starts = sort_groups(group)
    first = by_group[starts]
    longest = np.maximum.reduceat(lengths[by_group], starts) if len(keys) else lengths
    media_of = np.array(media, object)[first]
    part_ids = sorted(set(media_of.tolist()))
    code_of = {pid: i for i, pid in enumerate(part_ids)}
    parts = tuple(catalog.cables[pid] for pid in part_ids)
    part = np.fromiter(map(code_of.__getitem__, media_of.tolist()), np.int64, len(first))
    kinds = np.array(
        [line_kind(parts[c], plant) for c in range(len(parts)) for plant in (False, True)], object
    )
    return Items(
        parts=parts,
        part=part,
        length_m=longest,
        kind=kinds[2 * part + in_plant[first]].tolist(),
        link=np.array(links, object)[first].tolist(),
        row=np.concatenate((link_row, seg_rows))[first],
    )


def _first_seen(keys: list[Hashable]) -> np.ndarray:
    """Each key's group, groups numbered in the order their first key comes (strings, grouped
    by sorting: what ``_first_seen_hashed`` gives)."""
    if not keys or "\x00" in "".join(keys):  # type: ignore[arg-type]
        # numpy's fixed-width strings drop trailing NULs: such keys are grouped by hashing
        return _first_seen_hashed(keys)
    _, first, inverse = np.unique(np.array(keys, str), return_index=True, return_inverse=True)
    rank = np.empty(len(first), np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def _first_seen_hashed(keys: list[Hashable]) -> np.ndarray:
    """Each key's group, groups numbered in the order their first key comes."""
    distinct = dict.fromkeys(keys)
    group_of = dict(zip(distinct, range(len(distinct)), strict=True))
    return np.fromiter(map(group_of.__getitem__, keys), np.int64, len(keys))


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
