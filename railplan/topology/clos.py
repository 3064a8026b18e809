"""Wire the tiers above the leaves: spines (2-tier) or pods of spines plus cores (3-tier).

Each tier is sized from its own switch: a spine's leaf-facing ports at the leaf uplink speed,
its core-facing ports at the spine uplink speed, a core's ports at that speed. The sizing is
a pure function (``size_upper``) that the wiring follows, so the switch-choice solver can
count a fabric's switches without wiring it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.errors import InfeasibleError
from railplan.topology.shape import divisors
from railplan.topology.tiers import UpperTiers
from railplan.topology.wiring import FabricBuilder, tally


class CapacityExceeded(InfeasibleError):
    """The leaves do not fit the requested number of tiers."""


@dataclass(frozen=True)
class UpLeaf:
    """A leaf that needs ``up`` uplinks; leaves of one ``group`` (SU or rack) share a pod."""

    id: str
    up: int
    group: int


@dataclass(frozen=True)
class UpperPlan:
    """The sizing of one plane's upper tiers, before any wiring."""

    tiers: int
    groups_per_pod: int
    pods: int
    #: 2-tier: spines of the plane; 3-tier: spines per pod
    spines: int
    #: 3-tier: cores per spine group, and each pod's spine uplinks
    group_cores: int = 0
    pod_up: tuple[int, ...] = ()
    #: 3-tier: spine positions one core group serves (1: the classic one group per position;
    #: more when few pods would leave a core per position nearly empty)
    shared: int = 1

    @property
    def spine_count(self) -> int:
        return self.spines if self.tiers == 2 else self.spines * self.pods

    @property
    def core_count(self) -> int:
        return self.spines // self.shared * self.group_cores if self.tiers == 3 else 0

    @property
    def spine_core_links(self) -> int:
        return 0 if self.tiers == 2 else self.spines * sum(self.pod_up)


def pod_capacity_groups(spine_down: int, leaves_per_group: int) -> int:
    """How many whole groups of leaves one 3-tier pod holds (one link per leaf and spine)."""
    return spine_down // leaves_per_group


def two_tier_spines(leaves: Sequence[UpLeaf], capacity: int, least: int = 1) -> int | None:
    """Fewest spines S (a divisor of the largest uplink count, at least ``least``: e.g.
    Juniper's AI data center JVD asks for "at least 4 spines") whose ports hold every leaf."""
    u_max = max(leaf.up for leaf in leaves)
    for s in divisors(u_max):
        if s < least:
            continue
        if sum(math.ceil(leaf.up / s) for leaf in leaves) <= capacity:
            return s
    return None


def size_upper(
    leaves: Sequence[UpLeaf], upper: UpperTiers, tiers: int | None, leaves_per_group: int
) -> UpperPlan:
    """How many spines (and cores) one plane needs; ``tiers`` None means the fewest that fit."""
    if tiers in (None, 2):
        spines = two_tier_spines(leaves, upper.two_tier_capacity(), upper.min_spines)
        if spines is not None:
            return UpperPlan(tiers=2, groups_per_pod=0, pods=0, spines=spines)
        if tiers == 2:
            raise CapacityExceeded("2-tier")
    return _size_three_tier(leaves, upper, leaves_per_group)


def _size_three_tier(
    leaves: Sequence[UpLeaf], upper: UpperTiers, leaves_per_group: int
) -> UpperPlan:
    if upper.missing:
        raise CapacityExceeded(f"3-tier: {upper.missing}")
    down = upper.spine.down
    groups_per_pod = pod_capacity_groups(down, leaves_per_group)
    if groups_per_pod < 1:
        raise CapacityExceeded(
            f"a 3-tier pod of {upper.spine.layout.model.id} spines cannot hold one group of "
            f"{leaves_per_group} leaves"
        )
    u_max = max(leaf.up for leaf in leaves)
    full_pod = groups_per_pod * leaves_per_group
    fits = [s for s in divisors(u_max) if full_pod * math.ceil(u_max / s) <= down]
    pod_spines = next((s for s in fits if s >= upper.min_spines), fits[-1])
    pods: dict[int, list[UpLeaf]] = {}
    for leaf in leaves:
        pods.setdefault(leaf.group // groups_per_pod, []).append(leaf)
    n_pods = max(pods) + 1
    # each spine's uplinks keep the spine ratio for the down ports its pod uses
    pod_up = tuple(
        upper.spine.up_for(sum(math.ceil(lf.up / pod_spines) for lf in pods.get(p, [])))
        for p in range(n_pods)
    )
    cu_max = max(pod_up)
    radix = upper.core.radix
    group_cores = next(
        (c for c in divisors(cu_max) if sum(math.ceil(u / c) for u in pod_up) <= radix), None
    )
    if group_cores is None:
        raise CapacityExceeded(f"3-tier: {n_pods} pods exceed what {radix}-port cores hold")
    shared = _shared_positions(pod_spines, pod_up, group_cores, radix)
    return UpperPlan(3, groups_per_pod, n_pods, pod_spines, group_cores, pod_up, shared)


def _shared_positions(spines: int, pod_up: Sequence[int], group_cores: int, radix: int) -> int:
    """Spine positions per core group, sized from the ports the cores use: the most (a
    divisor of the positions, so every group is alike) whose cores still hold every link.
    With many pods a core's ports fill from one position (1, the classic groups); with few,
    one position would leave each core nearly empty (Alibaba HPN's single pod: 8 of 128)."""
    per_position = sum(math.ceil(u / group_cores) for u in pod_up)
    return max(j for j in divisors(spines) if j * per_position <= radix)


def build_upper(
    b: FabricBuilder,
    leaves: Sequence[UpLeaf],
    plane: int,
    tiers: int | None,
    leaves_per_group: int,
    upper: UpperTiers,
) -> UpperPlan:
    """Add spines (and cores) for ``leaves`` in one plane, as ``size_upper`` sizes them.

    In counting mode the leaves are recorded for the caller and nothing is added.
    """
    counted = tally()
    if counted is not None:
        counted.uppers.append((tuple(leaves), tiers, leaves_per_group))
        return UpperPlan(tiers=2, groups_per_pod=1, pods=0, spines=0)
    plan = size_upper(leaves, upper, tiers, leaves_per_group)
    if plan.tiers == 2:
        b.set_layout(2, upper.two_tier_layout())
        _wire_two_tier(b, leaves, plane, plan.spines)
    else:
        b.set_layout(2, upper.spine.layout)
        b.set_layout(3, upper.core)
        _wire_three_tier(b, leaves, plane, plan, upper)
    return plan


def _wire_two_tier(
    b: FabricBuilder,
    leaves: Sequence[UpLeaf],
    plane: int,
    spines: int,
    prefix: str = "",
    group: str = "",
) -> None:
    """Every leaf on every spine; ``prefix`` and ``group`` name a rail group's spines."""
    name = prefix or f"p{plane}-spine-"
    attrs = {"group": group} if group else {}
    ids = [b.add_switch(f"{name}{s + 1:02d}", "spine", plane, **attrs) for s in range(spines)]
    b.connect_all("leaf-spine", [(lf.id, math.ceil(lf.up / spines)) for lf in leaves], ids, plane)


def _wire_three_tier(
    b: FabricBuilder, leaves: Sequence[UpLeaf], plane: int, plan: UpperPlan, upper: UpperTiers
) -> None:
    pods: list[list[UpLeaf]] = [[] for _ in range(plan.pods)]
    for leaf in leaves:
        pods[leaf.group // plan.groups_per_pod].append(leaf)
    spine_ids: list[list[str]] = []
    for p, members in enumerate(pods):
        ids = [
            b.add_switch(f"p{plane}-spine-pod{p + 1:02d}-{j + 1:02d}", "spine", plane, pod=p)
            for j in range(plan.spines)
        ]
        spine_ids.append(ids)
        downs = [(lf.id, math.ceil(lf.up / plan.spines)) for lf in members]
        b.connect_all("leaf-spine", downs, ids, plane)
        for spine in ids:
            b.skip_to(spine, upper.spine.up_start)
    per_pod = [math.ceil(up / plan.group_cores) for up in plan.pod_up]
    for g in range(plan.spines // plan.shared):
        # every core of group g takes the same spines, each pod's with its own link count
        spines = [
            (spine_ids[p][j], per_pod[p])
            for j in range(g * plan.shared, (g + 1) * plan.shared)
            for p in range(plan.pods)
        ]
        for c in range(plan.group_cores):
            core = b.add_switch(f"p{plane}-core-g{g + 1:02d}-{c + 1:02d}", "core", plane)
            b.connect_all("spine-core", spines, [core], plane)
