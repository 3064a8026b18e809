"""Which links share one physical cable, and the id and leg each link gets on it."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from itertools import islice
from operator import attrgetter

import numpy as np

from railplan.array_groups import sort_groups
from railplan.catalog import Cable, Catalog, Transceiver
from railplan.design import Link
from railplan.design.ends import CageEnd
from railplan.design.link_table import LinkTable
from railplan.physical.media_types import MediaChoice


def instance_key(
    part: Cable, a: CageEnd, b: CageEnd, mods: Sequence[Transceiver | None]
) -> Hashable:
    """What identifies one physical cable, so links sharing it count it once.

    A straight built-in cable fills both its cages (a twin-port DAC carries both links of a
    cage); a built-in splitter is one per hub cage; a straight fibre cord joins one connector
    at each end (a connector may carry two ports); a splitter cord is one per hub connector.
    """
    per = [t.ports_per_connector if t else 1 for t in mods]
    return _instance_key(part, a, b, per[0], per[1])


def _instance_key(part: Cable, a: CageEnd, b: CageEnd, per_a: int, per_b: int) -> Hashable:
    """``instance_key`` with the ports per connector of the module at each end (1: none)."""
    if not part.optical:
        if part.breakout == 1:
            return ("cable", part.id, a.key)
        hub = a if a.ports_per_cage >= b.ports_per_cage else b
        return ("splitter", part.id, hub.key)
    conn = [(a.key, a.slot // per_a, per_a), (b.key, b.slot // per_b, per_b)]
    if part.breakout == 1:
        return ("cord", part.id, conn[0][0], conn[0][1])
    at = conn[0] if conn[0][2] == part.breakout or conn[1][2] != part.breakout else conn[1]
    return ("split", part.id, at[0], at[1])


def direct_ids(
    catalog: Catalog,
    order: Sequence[Link],
    table: LinkTable,
    choices: Mapping[str, MediaChoice],
    new_id: Callable[[], str],
    *,
    rows: np.ndarray | None = None,
    chosen: Sequence[MediaChoice] | None = None,
) -> tuple[list[str], list[str], int]:
    """The physical id and leg of every link in ``order`` ("" for a link through the fibre
    plant), numbered in ``order``, and how many physical cables the point-to-point links are
    (ids drawn from ``new_id``, one per cable, in the order of its first link).

    Legs are ``A<n>-B<n>``, n counting the cable's links by their slot at the a end (the two
    links of a twin-port DAC are A1-B1 and A2-B2, the two legs of a 1:2 splitter likewise).
    Worked out over arrays of the links' ends: each link's ``instance_key`` as three numbers
    (part, cage, connector), links grouped by sorting them.

    A caller that has them passes ``rows`` (each link's row in ``table``) and ``chosen`` (its
    choice), which saves looking each link up by id in two dicts of every link.
    """
    n = len(order)
    if rows is None:
        rows = np.fromiter(map(table.row.__getitem__, map(_ID, order)), np.int64, n)
    if chosen is None:
        chosen = list(map(choices.__getitem__, map(_ID, order)))
    # links of one equivalence class share their MediaChoice object: its parts are looked up
    # once per object (the choices stay alive in ``choices`` while this runs); a dict built
    # in C keeps each object's first place, as a comprehension would
    classes = dict(zip(map(id, chosen), chosen, strict=True))
    slot_of = {k: i for i, k in enumerate(classes)}
    cls = np.fromiter(map(slot_of.__getitem__, map(id, chosen)), np.int64, n)
    part_ids: dict[str, int] = {}
    info = []  # per class: part number (-1: plant), optical, breakout, per connector a and b
    for choice in classes.values():
        hit = _parts(catalog, choice)
        if hit is None:
            info.append((-1, 0, 1, 1, 1))
        else:
            part, per_a, per_b = hit
            code = part_ids.setdefault(part.id, len(part_ids))
            info.append((code, int(part.optical), part.breakout, per_a, per_b))
    part, optical, breakout, per_a, per_b = np.array(info, np.int64).reshape(-1, 5)[cls].T
    a, b = table.a, table.b
    a_key, b_key = a.cage_key[rows], b.cage_key[rows]
    a_slot, b_slot = a.slot[rows], b.slot[rows]
    # the end that names the cable (``_instance_key``): a hub end for a splitter (a DAC's
    # cage with more ports, a cord's connector that carries the breakout), else the a end
    split = breakout > 1
    use_b = np.where(
        optical == 1,
        split & (per_a != breakout) & (per_b == breakout),
        split & (a.ports_per_cage[rows] < b.ports_per_cage[rows]),
    )
    cage = np.where(use_b, b_key, a_key)
    conn = np.where(optical == 1, np.where(use_b, b_slot // per_b, a_slot // per_a), 0)
    pos = np.flatnonzero(part >= 0)
    # ``fill`` puts the one str in every element (``np.full`` would convert it to a numpy
    # string and back, a new str per element)
    phys = np.empty(n, dtype=object)
    phys.fill("")
    legs = np.empty(n, dtype=object)
    legs.fill("")
    if not len(pos):
        return phys.tolist(), legs.tolist(), 0
    # by key, then by place in ``order`` (the rows of ``pos`` run in order)
    s, starts = sort_groups(part[pos], cage[pos], conn[pos])
    sizes = np.diff(np.r_[starts, len(s)])
    group = np.repeat(np.arange(len(starts)), sizes)  # each sorted row's cable
    firsts = pos[s][starts]
    rank = np.empty(len(firsts), np.int64)
    rank[np.argsort(firsts, kind="stable")] = np.arange(len(firsts))
    # drawn in the order of first links (``iter`` calls ``new_id`` until it has as many)
    numbers = list(islice(iter(new_id, None), len(firsts)))
    named = np.array(numbers, dtype=object)[rank[group]]
    leg = np.empty(len(s), dtype=object)
    leg.fill("A1-B1")
    many = np.flatnonzero(sizes[group] > 1)  # members of cables that carry several links
    if len(many):
        at = pos[s][many]
        slot_key = a_slot[at] * 1000 + b_slot[at]
        by_id = sorted(range(len(at)), key=[order[i].id for i in at.tolist()].__getitem__)
        id_rank = np.empty(len(at), np.int64)
        id_rank[by_id] = np.arange(len(at))
        g = group[many]
        within, _ = sort_groups(g, slot_key, id_rank)
        _, first_of = sort_groups(g[within])  # each cable's first member in ``within``
        place = np.arange(len(within)) - np.repeat(first_of, np.diff(np.r_[first_of, len(within)]))
        top = int(place.max()) + 1
        names = np.array([f"A{m}-B{m}" for m in range(1, top + 1)], dtype=object)
        leg[many[within]] = names[place]
    phys[pos[s]] = named
    legs[pos[s]] = leg
    return phys.tolist(), legs.tolist(), len(firsts)


_ID = attrgetter("id")


def _parts(catalog: Catalog, choice: MediaChoice) -> tuple[Cable, int, int] | None:
    """A point-to-point choice's cable and the ports per connector of the module at each end
    (1: none); None for a link through the fibre plant."""
    if choice.kind == "plant":
        return None
    per = [
        t.ports_per_connector if t is not None else 1
        for t in (
            catalog.transceivers.get(n) if n else None
            for n in (choice.transceiver_a, choice.transceiver_b)
        )
    ]
    return catalog.cables[choice.cable], per[0], per[1]
