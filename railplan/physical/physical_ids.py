"""Which links share one physical cable, and the id and leg each link gets on it."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence

from railplan.catalog import Cable, Catalog, Transceiver
from railplan.design import Link
from railplan.design.ends import CageEnd
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
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    choices: Mapping[str, MediaChoice],
    new_id: Callable[[], str],
) -> tuple[dict[str, tuple[str, str]], int]:
    """(physical id, leg) of every link on a point-to-point cable, numbered in ``order``, and
    how many physical cables they are (ids drawn from ``new_id``).

    Legs are ``A<n>-B<n>``, n counting the cable's links by their slot at the a end (the two
    links of a twin-port DAC are A1-B1 and A2-B2, the two legs of a 1:2 splitter likewise).
    """
    # the first link of each physical cable, then the others (most cables carry one link)
    first: dict[Hashable, tuple[int, str, str]] = {}
    more: dict[Hashable, list[tuple[int, str]]] = {}
    # links of one equivalence class share their MediaChoice object: its parts are looked up
    # once (the choices stay alive in ``choices`` while this runs, so their ids are theirs)
    parts: dict[int, tuple[Cable, int, int] | None] = {}
    for link in order:
        choice = choices[link.id]
        if id(choice) in parts:
            hit = parts[id(choice)]
        else:
            hit = parts[id(choice)] = _parts(catalog, choice)
        if hit is None:
            continue
        a, b = ends[link.id]
        key = _instance_key(hit[0], a, b, hit[1], hit[2])
        held = first.get(key)
        if held is None:
            first[key] = (a.slot * 1000 + b.slot, link.id, new_id())
        else:
            more.setdefault(key, [held[:2]]).append((a.slot * 1000 + b.slot, link.id))
    out = {}
    for key, (_, link_id, phys) in first.items():
        links = more.get(key)
        if links is None:
            out[link_id] = (phys, "A1-B1")
            continue
        for n, (_, member) in enumerate(sorted(links), start=1):
            out[member] = (phys, f"A{n}-B{n}")
    return out, len(first)


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
