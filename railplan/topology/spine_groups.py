"""Rail-grouped spines: a plane's rails split into groups, each with spines of its own.

NVIDIA's DGX SuperPOD B300 Spectrum-4 Ethernet reference architecture (Table 3, "Larger DGX
SuperPOD component counts") keeps 16 SU (1,024 nodes, 8,192 GPUs, two planes) in two tiers:
256 leaves, 128 spines, 8,192 leaf-spine cables. Each SN5600 leaf sends 32 x 800G up, but a
plane holds 64 spines of 64 x 800G: a leaf cannot reach every spine of its plane. The spines
of a plane are therefore grouped by rail (``fabric.spine_groups``): the leaves of rails
``g*R/G .. (g+1)*R/G - 1`` of every SU meet only the spines of group ``g``. Same-rail traffic,
which is what a rail-optimized fabric carries (NCCL moves data to the right rail over NVLink
first, PXN), still reaches every node of its rail in two switch hops; traffic between rails of
different groups has no fabric path and must change rail inside the node.

With one group (the default) nothing changes: ``build_grouped_upper`` is ``build_upper``.
"""

from __future__ import annotations

from collections.abc import Sequence

from railplan.errors import SpecError
from railplan.topology.clos import (
    CapacityExceeded,
    UpLeaf,
    UpperPlan,
    _wire_two_tier,
    build_upper,
    size_upper,
)
from railplan.topology.tiers import UpperTiers
from railplan.topology.wiring import FabricBuilder, tally

#: the ``group`` a grouped spine carries: ``spine-group-<g+1>``
GROUP_PREFIX = "spine-group-"


def group_of_rail(rail: int, rails: int, groups: int) -> int:
    """The spine group of a leaf on ``rail`` when ``rails`` rails share ``groups`` groups."""
    return rail // (rails // groups)


def spine_group_index(group: str) -> int:
    """The 0-based group of a grouped spine (-1 for a spine of an ungrouped plane)."""
    if group.startswith(GROUP_PREFIX):
        return int(group.removeprefix(GROUP_PREFIX)) - 1
    return -1


def check_groups(groups: int, rails: int) -> None:
    """Refuse a group count that does not split the rails of a plane evenly."""
    if groups > 1 and (groups > rails or rails % groups):
        raise SpecError(
            f"fabric.spine_groups: {groups} groups cannot split the {rails} rails of a plane "
            f"evenly; use a divisor of {rails}"
        )


def build_grouped_upper(
    b: FabricBuilder,
    leaves: Sequence[UpLeaf],
    plane: int,
    tiers: int | None,
    rails: int,
    upper: UpperTiers,
    groups: int,
) -> UpperPlan:
    """The tiers above one plane's leaves; with ``groups`` > 1, two tiers per rail group.

    ``leaves`` come SU by SU, rail by rail (as ROFT makes them), so leaf ``i`` is on rail
    ``i % rails``. Each group's spines are sized like an ungrouped plane's (``size_upper``,
    fewest spines whose ports hold the group's uplinks) and named ``p<plane>-spine-g<g>-NN``.
    A grouped plane is two tiers: if a group does not fit, the fabric needs more groups,
    planes or a larger switch (``CapacityExceeded``).
    """
    if groups <= 1:
        return build_upper(b, leaves, plane, tiers, rails, upper)
    check_groups(groups, rails)
    if tiers == 3:
        raise SpecError(
            "fabric.spine_groups: rail-grouped spines make a two-tier fabric; leave "
            "fabric.tiers at auto or 2, or set spine_groups to 1 for three tiers"
        )
    members: list[list[UpLeaf]] = [[] for _ in range(groups)]
    for i, leaf in enumerate(leaves):
        members[group_of_rail(i % rails, rails, groups)].append(leaf)
    counted = tally()
    if counted is not None:
        for part in members:
            counted.uppers.append((tuple(part), 2, rails // groups))
        return UpperPlan(tiers=2, groups_per_pod=1, pods=0, spines=0)
    plans = [size_upper(part, upper, 2, rails // groups) for part in members if part]
    spines = max(p.spines for p in plans)
    b.set_layout(2, upper.two_tier_layout())
    for g, part in enumerate(members):
        if part:
            _wire_group(b, part, plane, g, spines)
    return UpperPlan(tiers=2, groups_per_pod=0, pods=0, spines=spines * groups)


def _wire_group(
    b: FabricBuilder, leaves: Sequence[UpLeaf], plane: int, g: int, spines: int
) -> None:
    """``spines`` spines for one rail group, every leaf of the group on each of them."""
    _wire_two_tier(
        b,
        leaves,
        plane,
        spines,
        prefix=f"p{plane}-spine-g{g + 1}-",
        group=f"{GROUP_PREFIX}{g + 1}",
    )


__all__ = [
    "GROUP_PREFIX",
    "CapacityExceeded",
    "build_grouped_upper",
    "check_groups",
    "group_of_rail",
    "spine_group_index",
]
