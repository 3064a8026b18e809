"""Wire the tiers above the leaves: spines (2-tier) or pods of spines plus cores (3-tier)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.errors import InfeasibleError
from railplan.topology.shape import divisors
from railplan.topology.wiring import FabricBuilder


class CapacityExceeded(InfeasibleError):
    """The leaves do not fit the requested number of tiers."""


@dataclass(frozen=True)
class UpLeaf:
    """A leaf that needs ``up`` uplinks; leaves of one ``group`` (SU or rack) share a pod."""

    id: str
    up: int
    group: int


@dataclass(frozen=True)
class UpperTiers:
    tiers: int
    groups_per_pod: int
    pods: int


def pod_capacity_groups(radix: int, leaves_per_group: int) -> int:
    """How many whole groups of leaves one 3-tier pod holds (spines at 1:1, one link per leaf)."""
    return (radix // 2) // leaves_per_group


def two_tier_spines(leaves: Sequence[UpLeaf], radix: int) -> int | None:
    """Fewest spines S (a divisor of the largest uplink count) whose ports hold every leaf."""
    u_max = max(leaf.up for leaf in leaves)
    for s in divisors(u_max):
        if sum(math.ceil(leaf.up / s) for leaf in leaves) <= radix:
            return s
    return None


def build_upper(
    b: FabricBuilder,
    leaves: Sequence[UpLeaf],
    plane: int,
    tiers: int | None,
    leaves_per_group: int,
) -> UpperTiers:
    """Add spines (and cores) for ``leaves`` in one plane; ``tiers`` None means fewest that fit."""
    if tiers in (None, 2):
        spines = two_tier_spines(leaves, b.radix)
        if spines is not None:
            _wire_two_tier(b, leaves, plane, spines)
            return UpperTiers(tiers=2, groups_per_pod=0, pods=0)
        if tiers == 2:
            raise CapacityExceeded("2-tier")
    return _wire_three_tier(b, leaves, plane, leaves_per_group)


def _wire_two_tier(b: FabricBuilder, leaves: Sequence[UpLeaf], plane: int, spines: int) -> None:
    ids = [b.add_switch(f"p{plane}-spine-{s + 1:02d}", "spine", plane) for s in range(spines)]
    for leaf in leaves:
        per = math.ceil(leaf.up / spines)
        for spine in ids:
            b.connect("leaf-spine", leaf.id, spine, plane, per)


def _wire_three_tier(
    b: FabricBuilder, leaves: Sequence[UpLeaf], plane: int, leaves_per_group: int
) -> UpperTiers:
    radix = b.radix
    down = radix // 2
    groups_per_pod = pod_capacity_groups(radix, leaves_per_group)
    if groups_per_pod < 1:
        raise CapacityExceeded(
            f"a 3-tier pod of {radix}-port switches cannot hold one group of {leaves_per_group} leaves"
        )
    u_max = max(leaf.up for leaf in leaves)
    full_pod = groups_per_pod * leaves_per_group
    pod_spines = next(s for s in divisors(u_max) if full_pod * math.ceil(u_max / s) <= down)
    pods: list[list[UpLeaf]] = []
    for leaf in leaves:
        pod = leaf.group // groups_per_pod
        while len(pods) <= pod:
            pods.append([])
        pods[pod].append(leaf)
    # spine uplinks per pod at 1:1 = the spine's used down ports
    pod_up = [min(radix - down, sum(math.ceil(lf.up / pod_spines) for lf in pod)) for pod in pods]
    cu_max = max(pod_up)
    group_cores = next(
        (c for c in divisors(cu_max) if sum(math.ceil(u / c) for u in pod_up) <= radix), None
    )
    if group_cores is None:
        raise CapacityExceeded(f"3-tier: {len(pods)} pods exceed what {radix}-port cores hold")
    spine_ids: list[list[str]] = []
    for p, members in enumerate(pods):
        ids = [
            b.add_switch(f"p{plane}-spine-pod{p + 1:02d}-{j + 1:02d}", "spine", plane, pod=p)
            for j in range(pod_spines)
        ]
        spine_ids.append(ids)
        for leaf in members:
            per = math.ceil(leaf.up / pod_spines)
            for spine in ids:
                b.connect("leaf-spine", leaf.id, spine, plane, per)
        for spine in ids:
            b.skip_to(spine, down)
    for j in range(pod_spines):
        for c in range(group_cores):
            core = b.add_switch(f"p{plane}-core-g{j + 1:02d}-{c + 1:02d}", "core", plane)
            for p in range(len(pods)):
                b.connect(
                    "spine-core", spine_ids[p][j], core, plane, math.ceil(pod_up[p] / group_cores)
                )
    return UpperTiers(tiers=3, groups_per_pod=groups_per_pod, pods=len(pods))
