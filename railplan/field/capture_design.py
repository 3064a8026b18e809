"""The design as a capture shows it cabled: the plan's links re-plugged where LLDP or IB saw them.

``railplan diff PLAN --lldp/--ibnetdiscover CAPTURE`` compares a design with itself as built.
A design file cannot carry a hand-made swap (design files are re-derived from their spec), so
the second design of a change review is read from the fabric: every captured edge between two
design ports that the plan does not hold becomes a link of the as-built design, carrying the
cable of the planned link that leaves its lower (node-side, ``a``) port, since a cable stays
in the port it was plugged into first and is re-plugged at its far end. So two cables crossed
on a leaf read as two links that moved at their switch end, which ``change.diff`` reports as
one swap naming both cables and their labels. A planned link one of whose devices the capture
covers, but which it does not show, is left out (missing); an edge between ports the plan
leaves free is an extra link without a cable. Links on devices the capture does not cover stay
as planned: an unseen port is unknown, not empty.
"""

from __future__ import annotations

import dataclasses

from railplan.design import Design, Link
from railplan.field.drift import Capture
from railplan.field.names import Endpoint

#: id prefix of a captured link no planned link explains (an extra cable)
EXTRA_PREFIX = "XL"


def design_as_captured(design: Design, capture: Capture) -> Design:
    """``design`` with its links as ``capture`` shows them (cables follow their lower port)."""
    at: dict[tuple[str, int], Link] = {}
    for lk in design.links:
        at[lk.a_device, lk.a_port] = lk
        at[lk.b_device, lk.b_port] = lk
    planned = {_key(lk) for lk in design.links}
    seen: list[tuple[tuple[str, int], tuple[str, int]]] = []
    for edge in capture.edges:
        ends = sorted((e.device, e.port) for e in edge if isinstance(e, Endpoint))
        if len(ends) == 2:  # an edge to something outside the design is no link of it
            seen.append((ends[0], ends[1]))
    seen.sort()
    seen_ports = {p for edge in seen for p in edge}
    placed: dict[str, Link] = {}  # planned link id -> where the capture shows its cable
    extra: list[Link] = []
    for x, y in seen:
        if frozenset((x, y)) in planned:
            lk = at[x]
            placed[lk.id] = lk
            continue
        owner = _owner(at, x, y, placed)
        if owner is None:
            extra.append(_extra(design, len(extra) + 1, x, y))
            continue
        # the cable stays in the port the planned link leaves from: that end keeps its side
        if _is_a(owner, x) or (not _is_a(owner, y) and (owner.b_device, owner.b_port) == y):
            lo, hi = x, y
        else:
            lo, hi = y, x
        placed[owner.id] = dataclasses.replace(
            owner, a_device=lo[0], a_port=lo[1], b_device=hi[0], b_port=hi[1]
        )
    links: list[Link] = []
    for lk in design.links:
        if lk.id in placed:
            links.append(placed[lk.id])
        elif not _seen_empty(lk, capture, seen_ports):
            links.append(lk)  # not covered by the capture: unknown, kept as planned
    links.extend(extra)
    kept = {lk.id for lk in links}
    return dataclasses.replace(
        design,
        name=f"{design.name} (as built)",
        links=tuple(links),
        cables=tuple(c for c in design.cables if c.link_id in kept),
    )


def _key(lk: Link) -> frozenset[tuple[str, int]]:
    return frozenset(((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)))


def _is_a(lk: Link, port: tuple[str, int]) -> bool:
    return (lk.a_device, lk.a_port) == port


def _owner(
    at: dict[tuple[str, int], Link],
    x: tuple[str, int],
    y: tuple[str, int],
    placed: dict[str, Link],
) -> Link | None:
    """The planned link whose cable a captured edge x-y is: the one leaving x or y at its lower
    (``a``) end, not yet placed elsewhere; else one leaving x or y at its upper end."""
    candidates = [at.get(x), at.get(y)]
    for want_a in (True, False):
        for port, lk in zip((x, y), candidates, strict=True):
            if lk is not None and lk.id not in placed and _is_a(lk, port) == want_a:
                return lk
    return None


def _seen_empty(lk: Link, capture: Capture, seen_ports: set[tuple[str, int]]) -> bool:
    """Is the planned link missing from the capture: a device of it covered, neither port seen
    (an edge at one of its ports that went elsewhere re-placed its cable already)?"""
    ends = ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
    covered = lk.a_device in capture.covered or lk.b_device in capture.covered
    return (covered or capture.full_fabric) and not any(p in seen_ports for p in ends)


def _extra(design: Design, n: int, x: tuple[str, int], y: tuple[str, int]) -> Link:
    """A link between two ports the plan leaves free (no cable of the plan is on it)."""
    switches = design.switch_by_id()
    lo, hi = (x, y) if x[0] not in switches or (y[0] in switches and x < y) else (y, x)
    kind = "node-leaf" if lo[0] not in switches else "leaf-leaf"
    rate = switches[hi[0]].port_speed_gbps if hi[0] in switches else design.shape.port_speed_gbps
    return Link(f"{EXTRA_PREFIX}{n:06d}", kind, lo[0], lo[1], hi[0], hi[1], rate, -1)


__all__ = ["EXTRA_PREFIX", "design_as_captured"]
