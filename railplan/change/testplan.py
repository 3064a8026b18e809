"""The test plan of a change: every added or moved link checked, plus a sample of what stayed.

A change is accepted like a build, but only where it touched the fabric: each added or moved
link gets a cabling check (the discovery tools must see its two planned ports face each other,
and its labels must read as planned) and a link-quality check; each added node runs an RDMA
pair test with an installed node on the same rail in another scalable unit (so the traffic
crosses the tier above, through the new links); a seeded sample of unchanged links and of
installed node pairs is re-tested as regression, since a technician working in a rack can
disturb a neighbouring cable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from railplan.change.delta import Delta
from railplan.design import Cable, Design, Link

#: share of unchanged links re-checked as regression, and the fewest re-checked
REGRESSION_SHARE = 0.02
REGRESSION_MIN = 16


@dataclass(frozen=True, slots=True)
class LinkTest:
    """One link to check: why, its cable and the two ports with their labels."""

    why: str  # "added", "moved" or "regression"
    link: str
    cable: str
    a: str
    b: str
    label_a: str
    label_b: str


@dataclass(frozen=True, slots=True)
class PairTest:
    """One RDMA pair test (ib_write_bw both ways) between two nodes on one rail."""

    why: str  # "added" or "regression"
    node_a: str
    node_b: str
    port: str


@dataclass(frozen=True)
class DeltaTestPlan:
    """The checks of one change, in the order they are run."""

    links: tuple[LinkTest, ...]
    pairs: tuple[PairTest, ...]
    seed: int

    def covered(self, why: str) -> set[str]:
        return {t.link for t in self.links if t.why == why}


def _link_test(
    design: Design, links: dict[str, Link], cables: dict[str, Cable], why: str, link_id: str
) -> LinkTest:
    lk = links[link_id]
    cab = cables.get(link_id)
    return LinkTest(
        why=why,
        link=link_id,
        cable=cab.id if cab else "",
        a=f"{lk.a_device} {design.port_name(lk.a_device, lk.a_port)}",
        b=f"{lk.b_device} {design.port_name(lk.b_device, lk.b_port)}",
        label_a=cab.label_a if cab else "",
        label_b=cab.label_b if cab else "",
    )


def regression_count(unchanged: int) -> int:
    """Unchanged links re-checked: 2% of them, at least 16 (all of them when fewer)."""
    return min(unchanged, max(REGRESSION_MIN, math.ceil(REGRESSION_SHARE * unchanged)))


def delta_testplan(before: Design, after: Design, change: Delta, seed: int = 0) -> DeltaTestPlan:
    """Checks for every added and moved link of ``change`` and a seeded regression sample."""
    rng = np.random.default_rng(seed)
    links = {lk.id: lk for lk in after.links}
    cables = {c.link_id: c for c in after.cables}

    def test(why: str, link_id: str) -> LinkTest:
        return _link_test(after, links, cables, why, link_id)

    tests = [test("added", lid) for lid in change.added]
    tests += [test("moved", m.link_after) for m in change.moves]
    kept = sorted(change.kept)
    n = regression_count(len(kept))
    picked = sorted(rng.choice(len(kept), size=n, replace=False).tolist()) if n else []
    tests += [test("regression", kept[i]) for i in picked]
    old_nodes = {x.id for x in before.nodes}
    rail_of = after.shape.port_rail
    by_rail: dict[tuple[int, int], list[tuple[int, str]]] = {}
    for nd in after.nodes:
        if nd.id in old_nodes and not nd.spare:
            for port in range(after.shape.ports):
                by_rail.setdefault((after.shape.port_plane[port], rail_of[port]), []).append(
                    (nd.su, nd.id)
                )
    pairs: list[PairTest] = []
    new_nodes = [nd for nd in after.nodes if nd.id not in old_nodes and not nd.spare]
    for k, nd in enumerate(new_nodes):
        for port in range(after.shape.ports):
            key = (after.shape.port_plane[port], rail_of[port])
            partners = [pid for su, pid in by_rail.get(key, []) if su != nd.su] or [
                pid for _, pid in by_rail.get(key, [])
            ]
            if partners:
                pairs.append(
                    PairTest(
                        "added", nd.id, partners[k % len(partners)], after.shape.port_name(port)
                    )
                )
    installed = sorted(old_nodes & {x.id for x in after.nodes})
    if len(installed) >= 2:
        m = min(len(installed) // 2, max(1, regression_count(len(installed)) // 2))
        order = rng.permutation(len(installed)).tolist()
        for j in range(m):
            a, b = sorted((installed[order[2 * j]], installed[order[2 * j + 1]]))
            pairs.append(PairTest("regression", a, b, after.shape.port_name(0)))
    return DeltaTestPlan(links=tuple(tests), pairs=tuple(pairs), seed=seed)
