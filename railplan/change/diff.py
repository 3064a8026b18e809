"""The difference between two designs: switches, links, cables, ports and bill.

Links are matched by their two ports (device and port), not by id, so two designs planned
separately compare by what is plugged where. A link of A that shares one port with a link of
B left over has moved at its other end; two such moves that exchange their ends are one swap
(two cables crossed, the classic cabling fault). Cables of links in both are compared field
by field (id, media, length, labels, physical id, colour).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from railplan.catalog import Catalog
from railplan.change.delta import match_links
from railplan.design import Cable, Design, Link
from railplan.physical.bom import Bom

CABLE_FIELDS = ("id", "media", "length_m", "label_a", "label_b", "physical", "leg", "colour")


@dataclass(frozen=True, slots=True)
class LinkMove:
    """A link of A found in B with one end on another port."""

    cable: str  # A's cable id (the link id when A has no cables)
    link_a: str
    link_b: str
    end: str
    from_port: str  # "device port"
    to_port: str
    label_a: str
    label_b: str


@dataclass(frozen=True)
class DesignDiff:
    """What differs between design A and design B."""

    a: str
    b: str
    switches_added: tuple[str, ...]
    switches_removed: tuple[str, ...]
    switches_changed: tuple[tuple[str, str, str], ...]
    links_same: int
    links_added: tuple[str, ...]  # B link ids
    links_removed: tuple[str, ...]  # A link ids
    moved: tuple[LinkMove, ...]
    swapped: tuple[tuple[LinkMove, LinkMove], ...]
    cables_changed: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...]
    #: (device, port, peer in A, peer in B)
    ports_changed: tuple[tuple[str, str, str, str], ...]
    #: (kind, part, length, count in A, count in B)
    bill: tuple[tuple[str, str, float | None, int, int], ...]
    cost_a_usd: float
    cost_b_usd: float
    #: both bills were given (False when B is a capture: it shows ports, not parts)
    billed: bool = True

    @property
    def identical(self) -> bool:
        return not (
            self.switches_added
            or self.switches_removed
            or self.switches_changed
            or self.links_added
            or self.links_removed
            or self.moved
            or self.swapped
            or self.cables_changed
            or self.ports_changed
            or self.bill
        )

    def to_json(self) -> dict[str, Any]:
        def move(m: LinkMove) -> dict[str, Any]:
            return {
                "cable": m.cable,
                "link_a": m.link_a,
                "link_b": m.link_b,
                "end": m.end,
                "from": m.from_port,
                "to": m.to_port,
                "label_a": m.label_a,
                "label_b": m.label_b,
            }

        return {
            "a": self.a,
            "b": self.b,
            "identical": self.identical,
            "switches": {
                "added": list(self.switches_added),
                "removed": list(self.switches_removed),
                "changed": [
                    {"id": i, "model_a": x, "model_b": y} for i, x, y in self.switches_changed
                ],
            },
            "links": {
                "same": self.links_same,
                "added": list(self.links_added),
                "removed": list(self.links_removed),
                "moved": [move(m) for m in self.moved],
                "swapped": [[move(x), move(y)] for x, y in self.swapped],
            },
            "cables": {
                "changed": [
                    {"link": lid, "fields": {f: [x, y] for f, x, y in fields}}
                    for lid, fields in self.cables_changed
                ]
            },
            "ports": {
                "changed": [
                    {"device": d, "port": p, "a": x, "b": y} for d, p, x, y in self.ports_changed
                ]
            },
            "bill": {
                "lines": [
                    {"kind": k, "part": p, "length_m": ln, "a": x, "b": y, "delta": y - x}
                    for k, p, ln, x, y in self.bill
                ],
                "compared": self.billed,
                "cost_usd": {
                    "a": self.cost_a_usd,
                    "b": self.cost_b_usd,
                    "delta": round(self.cost_b_usd - self.cost_a_usd, 2),
                },
            },
        }


def _peers(design: Design) -> dict[tuple[str, str], str]:
    sw = design.switch_by_id()
    out: dict[tuple[str, str], str] = {}
    for lk in design.links:
        a = (lk.a_device, design.port_name(lk.a_device, lk.a_port, sw))
        b = (lk.b_device, design.port_name(lk.b_device, lk.b_port, sw))
        out[a] = " ".join(b)
        out[b] = " ".join(a)
    return out


def _move(
    a: Design, b: Design, la: Link, lb: Link, end: str, cables_a: dict[str, Cable]
) -> LinkMove:
    cab = cables_a.get(la.id)
    f_dev, f_port = (la.a_device, la.a_port) if end == "a" else (la.b_device, la.b_port)
    t_dev, t_port = (lb.a_device, lb.a_port) if end == "a" else (lb.b_device, lb.b_port)
    return LinkMove(
        cable=cab.id if cab else la.id,
        link_a=la.id,
        link_b=lb.id,
        end=end,
        from_port=f"{f_dev} {a.port_name(f_dev, f_port)}",
        to_port=f"{t_dev} {b.port_name(t_dev, t_port)}",
        label_a=cab.label_a if cab else "",
        label_b=cab.label_b if cab else "",
    )


def _bill_counts(bill: Bom | None) -> Counter[tuple[str, str, float | None]]:
    out: Counter[tuple[str, str, float | None]] = Counter()
    for ln in bill.lines if bill is not None else ():
        out[ln.kind, ln.part, ln.length_m] += ln.count
    return out


def diff(
    a: Design, b: Design, catalog: Catalog, bom_a: Bom | None, bom_b: Bom | None
) -> DesignDiff:
    """Design A against design B (their bills given, or None to leave the bill out)."""
    del catalog  # the bills are priced already; kept for a uniform signature
    sw_a, sw_b = a.switch_by_id(), b.switch_by_id()
    kept, moved, removed, added = match_links(a, b)
    cables_a = {c.link_id: c for c in a.cables}
    cables_b = {c.link_id: c for c in b.cables}
    moves = [(la, lb, end, _move(a, b, la, lb, end, cables_a)) for la, lb, end in moved]
    # two moves at the same end that exchange their ports are one swap
    by_pair: dict[tuple[str, str, str], int] = {}
    for k, (_, _, end, m) in enumerate(moves):
        by_pair[end, m.from_port, m.to_port] = k
    swapped: list[tuple[LinkMove, LinkMove]] = []
    in_swap: set[int] = set()
    for k, (_, _, end, m) in enumerate(moves):
        other = by_pair.get((end, m.to_port, m.from_port))
        if other is not None and other != k and k not in in_swap and other not in in_swap:
            in_swap |= {k, other}
            swapped.append((m, moves[other][3]))
    changed: list[tuple[str, tuple[tuple[str, str, str], ...]]] = []
    for la_id, lb_id in sorted(kept.items()):
        ca, cb = cables_a.get(la_id), cables_b.get(lb_id)
        if ca is None or cb is None:
            if (ca is None) != (cb is None):
                changed.append((lb_id, (("cable", ca.id if ca else "", cb.id if cb else ""),)))
            continue
        fields = tuple(
            (f, str(getattr(ca, f)), str(getattr(cb, f)))
            for f in CABLE_FIELDS
            if getattr(ca, f) != getattr(cb, f)
        )
        if fields:
            changed.append((lb_id, fields))
    pa, pb = _peers(a), _peers(b)
    ports = tuple(
        (dev, port, pa.get((dev, port), ""), pb.get((dev, port), ""))
        for dev, port in sorted(pa.keys() | pb.keys())
        if pa.get((dev, port)) != pb.get((dev, port))
    )
    ca_bill, cb_bill = _bill_counts(bom_a), _bill_counts(bom_b)
    bill = tuple(
        (k[0], k[1], k[2], ca_bill[k], cb_bill[k])
        for k in sorted(ca_bill.keys() | cb_bill.keys(), key=lambda k: (k[0], k[1], k[2] or 0.0))
        if ca_bill[k] != cb_bill[k]
    )
    return DesignDiff(
        a=a.name,
        b=b.name,
        switches_added=tuple(sorted(sw_b.keys() - sw_a.keys())),
        switches_removed=tuple(sorted(sw_a.keys() - sw_b.keys())),
        switches_changed=tuple(
            (s, sw_a[s].model, sw_b[s].model)
            for s in sorted(sw_a.keys() & sw_b.keys())
            if (sw_a[s].model, sw_a[s].role) != (sw_b[s].model, sw_b[s].role)
        ),
        links_same=len(kept),
        links_added=tuple(lk.id for lk in added),
        links_removed=tuple(lk.id for lk in removed),
        moved=tuple(m for k, (_, _, _, m) in enumerate(moves) if k not in in_swap),
        swapped=tuple(swapped),
        cables_changed=tuple(changed),
        ports_changed=ports,
        bill=bill,
        cost_a_usd=bom_a.totals.cost_usd if bom_a else 0.0,
        cost_b_usd=bom_b.totals.cost_usd if bom_b else 0.0,
        billed=bom_a is not None and bom_b is not None,
    )
