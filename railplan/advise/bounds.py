"""Closed-form lower bounds on a candidate's cost and power, before any wiring or layout.

A candidate's switches are counted with the generators in counting mode (leaves) and
``clos.size_upper`` (spines and cores): the counts the wiring will have. Its media are floored
per link class by the cheapest part that reaches the shortest length any cable can have,
with every multi-port cage assumed full (``physical.media.select``): a part that reaches
farther is never cheaper to use, and a cage that is not full only costs more per link. So the
bound never exceeds the bill ``build`` prices: the search may skip a candidate whose bound is
at least the best cost found, and it cannot lose the cheapest design.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.catalog import Catalog, SwitchModel
from railplan.errors import InfeasibleError, RailplanError
from railplan.physical import media
from railplan.spec import Spec
from railplan.topology import GENERATORS
from railplan.topology.clos import UpLeaf, UpperPlan, size_upper
from railplan.topology.shape import check_capacity, fabric_capacity, resolve_shape
from railplan.topology.tiers import TierModels, tier_speeds, upper_tiers
from railplan.topology.wiring import counting

#: shorter than any routed cable: media.select rounds it up to the shortest stocked part
FLOOR_LENGTH_M = 0.1


@dataclass(frozen=True)
class Bound:
    """What a candidate costs at least: switches by tier, links, cost and power floors."""

    switches: dict[str, int]
    links: int
    switch_cost_usd: float
    media_cost_usd: float
    switch_power_w: float
    tiers: int

    @property
    def cost_usd(self) -> float:
        return self.switch_cost_usd + self.media_cost_usd

    @property
    def total_switches(self) -> int:
        return sum(self.switches.values())


#: per catalog object: floors by link class (a catalog is immutable once loaded)
_FLOORS: dict[int, tuple[Catalog, dict[tuple[int, tuple[str, int], tuple[str, int]], float]]] = {}


def _floor(catalog: Catalog, rate: int, a: tuple[str, int], b: tuple[str, int]) -> float:
    held = _FLOORS.get(id(catalog))
    if held is None or held[0] is not catalog:
        held = _FLOORS[id(catalog)] = (catalog, {})
    table = held[1]
    key = (rate, a, b)
    if key not in table:
        table[key] = _class_floor(catalog, rate, a, b)
    return table[key]


def _class_floor(catalog: Catalog, rate: int, a: tuple[str, int], b: tuple[str, int]) -> float:
    """Cheapest per-link media of a class at the shortest length, either cage pairing (0 when
    nothing in the catalog cables it: the build then refuses the candidate)."""
    best: float | None = None
    for parallel in (False, True):
        try:
            choice = media.select(
                catalog,
                speed_gbps=rate,
                a_form_factor=a[0],
                b_form_factor=b[0],
                length_m=FLOOR_LENGTH_M,
                a_ports_per_cage=a[1],
                b_ports_per_cage=b[1],
                parallel=parallel,
            )
        except RailplanError:
            continue
        best = choice.cost_usd if best is None else min(best, choice.cost_usd)
    return best or 0.0


def _cage(model: SwitchModel, gbps: int) -> tuple[str, int]:
    mode = model.mode_at(gbps)
    return model.form_factor, mode.ports_per_cage if mode else 1


def lower_bound(spec: Spec, catalog: Catalog, family: str, model: SwitchModel) -> Bound:
    """The bound of ``family`` on one switch model at every tier; raises RailplanError when the
    family cannot hold the cluster on it (the reason names the limit)."""
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    # the closed-form ceiling first, as plan() checks it: a cluster no tier of this model can
    # hold is refused before the generator counts millions of links it would never build
    check_capacity(spec, shape, [model], [speeds.leaf_down, speeds.leaf_up, speeds.spine_up])
    with counting() as tally:
        GENERATORS[family](spec, shape, model)
    leaves = [sw for sw in tally.switches if sw.tier == 1]
    if not leaves:
        raise InfeasibleError(f"{model.id} builds no switches for this cluster")
    host = (shape.form_factor, shape.ports_per_cage)
    media_cost = 0.0
    links = 0
    for (_kind, rate, a, b), count in sorted(tally.links.items(), key=repr):
        media_cost += count * _floor(catalog, rate, a or host, b)
        links += count
    spines = cores = 0
    tiers = 1
    if tally.uppers:
        speeds = tier_speeds(spec, shape)
        upper = upper_tiers(spec, TierModels(model, model, model), speeds)
        for up_leaves, asked, group in tally.uppers:
            plan = size_upper(up_leaves, upper, asked, group)
            tiers = plan.tiers
            spines += plan.spine_count
            cores += plan.core_count
            ls = _leaf_spine_links(up_leaves, plan)
            up_gbps = speeds.leaf_up
            media_cost += ls * _floor(
                catalog, up_gbps, _cage(model, up_gbps), _cage(model, up_gbps)
            )
            sc = plan.spine_core_links
            core_gbps = speeds.spine_up
            cage = _cage(model, core_gbps)
            media_cost += sc * _floor(catalog, core_gbps, cage, cage)
            links += ls + sc
    counts = {"leaf": len(leaves), "spine": spines, "core": cores}
    n = sum(counts.values())
    return Bound(
        switches=counts,
        links=links,
        switch_cost_usd=n * model.price_usd.value,
        media_cost_usd=round(media_cost, 2),
        switch_power_w=n * model.power_typical_w.value,
        tiers=tiers,
    )


def _leaf_spine_links(leaves: tuple[UpLeaf, ...] | list[UpLeaf], plan: UpperPlan) -> int:
    per_leaf = plan.spines
    return sum(math.ceil(lf.up / per_leaf) * per_leaf for lf in leaves)


def _ceiling(spec: Spec, catalog: Catalog, model: SwitchModel) -> tuple[int, int, int]:
    """(NIC ports one plane holds, the radix, tiers) by ``check_capacity``'s closed form."""
    shape = resolve_shape(spec, catalog)
    speeds = tier_speeds(spec, shape)
    radix = max(
        model.radix(v)
        for v in {speeds.leaf_down, speeds.leaf_up, speeds.spine_up, shape.port_speed_gbps}
    )
    tiers = 3 if spec.fabric.tiers == "auto" else int(spec.fabric.tiers)
    limit = fabric_capacity(radix, spec.fabric.oversubscription_ratio, tiers)
    if tiers <= 2:
        limit *= spec.fabric.spine_groups
    return limit, radix, tiers


def capacity_refusal(catalog: Catalog, specs: Sequence[tuple[Spec, SwitchModel]]) -> str | None:
    """None when some candidate (its spec and switch model) may hold the cluster by the
    closed-form ceiling ``lower_bound`` checks first; else the one-sentence refusal: the
    candidate that holds the most, its limit, and the fix (the fewest planes that would hold
    the cluster on it, or a larger switch). Nothing is generated or counted."""
    reasons: list[str] = []
    for spec, model in specs:
        shape = resolve_shape(spec, catalog)
        speeds = tier_speeds(spec, shape)
        try:
            check_capacity(
                spec, shape, [model], [speeds.leaf_down, speeds.leaf_up, speeds.spine_up]
            )
        except InfeasibleError as exc:
            reasons.append(str(exc))
            continue
        return None
    if not specs:
        return None
    held = []
    for spec, model in specs:
        limit, radix, tiers = _ceiling(spec, catalog, model)
        shape = resolve_shape(spec, catalog)
        gpus = limit * spec.fabric.planes // shape.ports * shape.gpus
        held.append((gpus, -spec.fabric.planes, limit, radix, tiers, spec, model, shape))
    gpus, _, limit, radix, tiers, spec, model, shape = max(held, key=lambda h: h[:2])
    if gpus >= spec.cluster.gpus:  # the ceiling on nodes or NIC ports, not the fabric's
        return reasons[0]
    ports = spec.cluster.gpus // shape.gpus * shape.ports
    planes = [
        p
        for p in range(spec.fabric.planes + 1, shape.ports + 1)
        if shape.ports % p == 0 and ports // p <= limit
    ]
    fix = (
        f"use --planes {planes[0]} (fabric.planes: {planes[0]}) or a larger switch"
        if planes
        else "pick a switch of more ports"
    )
    tried = sorted({s.fabric.planes for s, _ in specs})
    return (
        f"cluster.gpus: {spec.cluster.gpus} GPUs exceed every candidate by the closed-form "
        f"ceiling: {tiers} tiers of {model.id} ({radix}x{shape.port_speed_gbps}G) at "
        f"{spec.fabric.oversubscription} hold at most {limit:,} NIC ports per plane, "
        f"{gpus} GPUs in {spec.fabric.planes} plane(s) (planes tried: "
        f"{', '.join(map(str, tried))}); {fix}"
    )
