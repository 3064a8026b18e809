"""The change from one laid-out design to another: links kept, moved, added and removed, and
the items (switches, modules, cables, plant, panels) that must be bought or taken out.

A link is its two ports. A link of BEFORE whose two ports are a link of AFTER is kept; one that
shares exactly one port with a link of AFTER left over is moved (its other end is re-plugged);
the rest are removed or added. A moved cable is re-used when AFTER needs the same part at the
same stocked length; otherwise the old one is taken out and a new one billed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from railplan.catalog import Catalog
from railplan.change.inventory import CableItem, Ends, Inventory, LineKey, ends_of, inventory
from railplan.design import Cable, Design, Link


@dataclass(frozen=True, slots=True)
class Move:
    """One cable re-plugged at one end: which end, from which port to which, its new labels."""

    cable: str
    link_before: str
    link_after: str
    end: str  # "a" or "b": the end that moves
    from_device: str
    from_port: str
    to_device: str
    to_port: str
    from_rack: str
    from_u: int
    to_rack: str
    to_u: int
    old_label_a: str
    old_label_b: str
    label_a: str
    label_b: str
    #: the cable is kept (same part and stocked length) or must be replaced
    reuse: bool


@dataclass(frozen=True, slots=True)
class DeltaLine:
    """One bill line of the change: how many bought, how many taken out, at what unit price."""

    kind: str
    part: str
    length_m: float | None
    added: int
    removed: int
    unit_price_usd: float

    @property
    def net(self) -> int:
        return self.added - self.removed

    @property
    def cost_usd(self) -> float:
        """What the added items cost (removed ones are not refunded)."""
        return round(self.added * self.unit_price_usd, 2)


@dataclass(frozen=True)
class Delta:
    """Everything that changes from ``before`` to ``after``."""

    before: str
    after: str
    kept: tuple[str, ...]  # after link ids kept as they were
    moves: tuple[Move, ...]
    added: tuple[str, ...]  # after link ids
    removed: tuple[str, ...]  # before link ids
    #: kept links whose cable row changed (id, labels, media, length): (after link id, fields)
    changed: tuple[tuple[str, tuple[str, ...]], ...]
    lines: tuple[DeltaLine, ...]
    switches_added: tuple[str, ...]
    switches_removed: tuple[str, ...]
    #: switches in both whose rack or U differ: (id, before rack/U, after rack/U)
    reracked: tuple[tuple[str, str, str], ...]
    notes: tuple[str, ...] = field(default=())

    @property
    def zero_move(self) -> bool:
        return not self.moves and not self.removed and not self.reracked

    def bill_counts(self) -> dict[LineKey, int]:
        return {(ln.kind, ln.part, ln.length_m): ln.net for ln in self.lines}

    @property
    def cost_usd(self) -> float:
        return round(sum(ln.cost_usd for ln in self.lines), 2)


def _where(design: Design) -> dict[str, tuple[str, int]]:
    return {p.device: (p.rack, p.u) for p in design.placements}


def match_links(
    before: Design, after: Design
) -> tuple[dict[str, str], list[tuple[Link, Link, str]], list[Link], list[Link]]:
    """Kept (before id -> after id), moved (before, after, moving end), removed, added."""
    after_by_ends = {ends_of(lk): lk for lk in after.links}
    kept: dict[str, str] = {}
    left_before: list[Link] = []
    for lk in sorted(before.links, key=lambda x: x.id):
        twin = after_by_ends.get(ends_of(lk))
        if twin is not None:
            kept[lk.id] = twin.id
        else:
            left_before.append(lk)
    used = set(kept.values())
    left_after = [lk for lk in sorted(after.links, key=lambda x: x.id) if lk.id not in used]
    by_a = {(lk.a_device, lk.a_port): lk for lk in left_after}
    by_b = {(lk.b_device, lk.b_port): lk for lk in left_after}
    moved: list[tuple[Link, Link, str]] = []
    taken: set[str] = set()
    removed: list[Link] = []
    for lk in left_before:
        other = by_a.get((lk.a_device, lk.a_port))
        end = "b"
        if other is None or other.id in taken:
            other, end = by_b.get((lk.b_device, lk.b_port)), "a"
        if other is None or other.id in taken:
            removed.append(lk)
            continue
        taken.add(other.id)
        moved.append((lk, other, end))
    added = [lk for lk in left_after if lk.id not in taken]
    return kept, moved, removed, added


def _price(catalog: Catalog, key: LineKey) -> float:
    kind, part, length = key
    if kind == "switch":
        return catalog.switch(part).price_usd.value
    if kind == "transceiver":
        return catalog.transceivers[part].price_usd.value
    if kind == "panel":
        return catalog.panels[part].price_usd.value
    if kind == "cassette":
        return catalog.cassettes[part].price_usd.value
    return catalog.cables[part].price_at(length if length is not None else 0.0)


def _item_diff(
    old: Inventory, new: Inventory, translate: dict[Ends, Ends]
) -> tuple[Counter[LineKey], Counter[LineKey], set[frozenset[Ends]]]:
    """Lines bought and taken out, and the before cables re-used (by their before legs)."""
    added: Counter[LineKey] = Counter()
    removed: Counter[LineKey] = Counter()
    for sid in new.switches.keys() | old.switches.keys():
        a, b = old.switches.get(sid), new.switches.get(sid)
        if a != b:
            if a is not None:
                removed["switch", a, None] += 1
            if b is not None:
                added["switch", b, None] += 1
    for cage in new.modules.keys() | old.modules.keys():
        a, b = old.modules.get(cage), new.modules.get(cage)
        if a != b:
            if a is not None:
                removed["transceiver", a, None] += 1
            if b is not None:
                added["transceiver", b, None] += 1
    # a before cable lives on in the after cable that carries its (translated) legs
    leg_owner: dict[Ends, CableItem] = {}
    for item in new.cables.values():
        for leg in item.legs:
            leg_owner[leg] = item
    reused: set[frozenset[Ends]] = set()
    kept_after: set[frozenset[Ends]] = set()
    for legs, item in old.cables.items():
        moved_legs = frozenset(translate.get(leg, leg) for leg in legs)
        owner = leg_owner.get(next(iter(moved_legs)))
        if (
            owner is not None
            and owner.line == item.line
            and moved_legs <= owner.legs
            and owner.legs not in kept_after
        ):
            kept_after.add(owner.legs)
            reused.add(legs)
            continue
        removed[item.line] += 1
    for legs, item in new.cables.items():
        if legs not in kept_after:
            added[item.line] += 1
    for key in new.plant.keys() | old.plant.keys():
        was, now = old.plant.get(key), new.plant.get(key)
        same = (
            was is not None
            and now is not None
            and was.line == now.line
            and frozenset(translate.get(leg, leg) for leg in was.legs) <= now.legs
        )
        if not same:
            if was is not None:
                removed[was.line] += 1
            if now is not None:
                added[now.line] += 1
    for pid in new.panels.keys() | old.panels.keys():
        a_p, b_p = old.panels.get(pid), new.panels.get(pid)
        if a_p is not None and b_p is not None and a_p[:4] == b_p[:4]:
            extra = b_p[4] - a_p[4]
            if extra > 0:
                added["cassette", b_p[3], None] += extra
            elif extra < 0:
                removed["cassette", a_p[3], None] -= extra
            continue
        if a_p is not None:
            removed["panel", a_p[0], None] += 1
            removed["cassette", a_p[3], None] += a_p[4]
        if b_p is not None:
            added["panel", b_p[0], None] += 1
            added["cassette", b_p[3], None] += b_p[4]
    return added, removed, reused


_KIND_ORDER = (
    "switch",
    "nic",
    "transceiver",
    "cable",
    "splitter",
    "fibre",
    "harness",
    "trunk",
    "panel",
    "cassette",
)


def delta(before: Design, after: Design, catalog: Catalog) -> Delta:
    """What changes from laid-out ``before`` to laid-out ``after`` (devices matched by id)."""
    kept, moved, removed, added = match_links(before, after)
    translate = {ends_of(b): ends_of(a) for b, a, _ in moved}
    old, new = inventory(before, catalog), inventory(after, catalog)
    plus, minus, reused = _item_diff(old, new, translate)
    reused_legs = {leg for legs in reused for leg in legs}
    keys = sorted(
        (plus.keys() | minus.keys()),
        key=lambda k: (_KIND_ORDER.index(k[0]), k[1], k[2] or 0.0),
    )
    lines = tuple(
        DeltaLine(k[0], k[1], k[2], plus[k], minus[k], _price(catalog, k))
        for k in keys
        if plus[k] or minus[k]
    )
    cab_b = {c.link_id: c for c in before.cables}
    cab_a = {c.link_id: c for c in after.cables}
    where_b, where_a = _where(before), _where(after)
    moves = []
    for b, a, end in moved:
        cb, ca = cab_b.get(b.id), cab_a.get(a.id)
        fd, fp = (b.a_device, b.a_port) if end == "a" else (b.b_device, b.b_port)
        td, tp = (a.a_device, a.a_port) if end == "a" else (a.b_device, a.b_port)
        fr, tr = where_b.get(fd, ("", 0)), where_a.get(td, ("", 0))
        moves.append(
            Move(
                cable=cb.id if cb else b.id,
                link_before=b.id,
                link_after=a.id,
                end=end,
                from_device=fd,
                from_port=before.port_name(fd, fp),
                to_device=td,
                to_port=after.port_name(td, tp),
                from_rack=fr[0],
                from_u=fr[1],
                to_rack=tr[0],
                to_u=tr[1],
                old_label_a=cb.label_a if cb else "",
                old_label_b=cb.label_b if cb else "",
                label_a=ca.label_a if ca else "",
                label_b=ca.label_b if ca else "",
                reuse=ends_of(b) in reused_legs,
            )
        )
    moves.sort(key=technician_key)
    changed = []
    for bid, aid in sorted(kept.items(), key=lambda kv: kv[1]):
        diffs = _cable_fields(cab_b.get(bid), cab_a.get(aid))
        if diffs:
            changed.append((aid, diffs))
    sw_b, sw_a = before.switch_by_id(), after.switch_by_id()
    reracked = tuple(
        (sid, f"{where_b[sid][0]} U{where_b[sid][1]}", f"{where_a[sid][0]} U{where_a[sid][1]}")
        for sid in sorted(sw_b.keys() & sw_a.keys())
        if sid in where_b and sid in where_a and where_b[sid] != where_a[sid]
    )
    return Delta(
        before=before.name,
        after=after.name,
        kept=tuple(sorted(kept.values())),
        moves=tuple(moves),
        added=tuple(lk.id for lk in added),
        removed=tuple(lk.id for lk in removed),
        changed=tuple(changed),
        lines=lines,
        switches_added=tuple(sorted(sw_a.keys() - sw_b.keys())),
        switches_removed=tuple(sorted(sw_b.keys() - sw_a.keys())),
        reracked=reracked,
    )


def technician_key(m: Move) -> tuple[str, int, str, str]:
    """Work rack by rack, top of the rack down, then device and port: one walk per rack."""
    return (m.from_rack, -m.from_u, m.from_device, m.from_port)


def _cable_fields(a: Cable | None, b: Cable | None) -> tuple[str, ...]:
    if a is None or b is None:
        return () if a is b else ("cable",)
    names = ("id", "media", "length_m", "label_a", "label_b", "physical", "leg", "colour")
    return tuple(n for n in names if getattr(a, n) != getattr(b, n))
