"""Physical rules of a laid-out design: one cable per link, devices and panels in racks, no overlap."""

from __future__ import annotations

from collections import Counter
from operator import attrgetter
from typing import TYPE_CHECKING

from railplan.design import Design

if TYPE_CHECKING:
    import numpy as np


def one_cable_per_link(
    d: Design, distinct_links: int | None = None, rows: np.ndarray | None = None
) -> list[str]:
    """Every link has one cable and every cable id is used once (decided by sets first: the
    counting, which names the culprits, runs only when they disagree). Given how many distinct
    link ids there are and ``rows`` (``cable_rows``: each cable's link as a link-table row, -1
    for an unknown link), the links are not hashed again."""
    if distinct_links is not None and rows is not None and _sound_by_rows(d, distinct_links, rows):
        return []
    links = set(map(_ID, d.links))
    cabled = list(map(_LINK_ID, d.cables))
    if (
        len(links) == len(d.links) == len(cabled)
        and links.issuperset(cabled)
        and len(set(cabled)) == len(cabled)
        and len(set(map(_ID, d.cables))) == len(cabled)
    ):
        return []
    per_link = Counter(cabled)
    out = [f"link {lk.id} has {per_link[lk.id]} cables" for lk in d.links if per_link[lk.id] != 1]
    dup = [i for i, c in Counter(map(_ID, d.cables)).items() if c > 1]
    out += [f"cable id {i} is used more than once" for i in dup[:5]]
    return out[:10]


_ID, _LINK_ID = attrgetter("id"), attrgetter("link_id")


def _sound_by_rows(d: Design, distinct_links: int, rows: np.ndarray) -> bool:
    """The set test over link rows: link ids distinct, as many cables as links, each on a
    known link and no two on one (so each link has exactly one), cable ids distinct."""
    import numpy as np

    n = len(d.links)
    if not (distinct_links == n == len(d.cables) == len(rows)):
        return False
    if n and (rows.min() < 0 or np.bincount(rows, minlength=n).max() > 1):
        return False
    return len(set(map(_ID, d.cables))) == n


def racks(d: Design) -> list[str]:
    """Rack ids are unique and no two racks stand on the same floor position."""
    out = [
        f"rack id {i} is used more than once"
        for i, c in Counter(r.id for r in d.racks).items()
        if c > 1
    ]
    for what, key in (
        ("row and position", lambda r: (r.row, r.position)),
        ("spot", lambda r: (r.x_m, r.y_m)),
    ):
        taken: dict[object, str] = {}
        for r in d.racks:
            other = taken.setdefault(key(r), r.id)
            if other != r.id:
                out.append(f"racks {other} and {r.id} stand on the same {what}")
    return out[:10]


def placements(d: Design) -> list[str]:
    """Every node, switch, attached device and patch panel sits once, inside an existing rack,
    without overlapping another."""
    racks = {r.id: r for r in d.racks}
    devices = [n.id for n in d.nodes] + [s.id for s in d.switches] + [x.id for x in d.devices]
    devices += [p.id for p in d.panels]
    placed = Counter(p.device for p in d.placements)
    out = [f"{dev} is placed {placed[dev]} times" for dev in devices if placed[dev] != 1][:10]
    used: dict[tuple[str, int], str] = {}
    for p in d.placements:
        rack = racks.get(p.rack)
        if rack is None:
            out.append(f"{p.device} sits in rack {p.rack}, which is not on the floor")
            continue
        if p.height_u < 1 or p.u < 1 or p.u + p.height_u - 1 > rack.height_u:
            out.append(
                f"{p.device} at U{p.u} ({p.height_u}U) does not fit the {rack.height_u}U rack {p.rack}"
            )
        for u in range(p.u, p.u + p.height_u):
            other = used.setdefault((p.rack, u), p.device)
            if other != p.device:
                out.append(f"{p.device} and {other} both occupy {p.rack} U{u}")
                break
        if len(out) >= 10:
            break
    return out
