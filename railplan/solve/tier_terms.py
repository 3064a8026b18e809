"""What each tier of a fabric costs for each switch model: the terms of the switch-choice model.

A fabric's cost splits by tier: the leaf tier (leaf switches, node and device links, links
between leaves) depends on the leaf model only; the spine tier (spines, leaf-spine links) on
the leaf and spine models; the core tier (cores, spine-core links) on all three. Counts come
from the generators themselves, run in counting mode for the leaves and through
``clos.size_upper`` for the tiers above, so they are the counts the wiring will have. Media
are priced per link class (speed and the cages at both ends) at nominal lengths with
``physical.media.select``: an estimate of the bill, which the solver corrects with the bill of
every fabric it builds.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from railplan.catalog import Catalog, SwitchModel
from railplan.design import Cable, Design, NodeShape, Switch
from railplan.errors import InfeasibleError
from railplan.physical import media
from railplan.physical.bom import Bom, bom
from railplan.spec import Spec
from railplan.topology import GENERATORS
from railplan.topology.clos import UpLeaf, UpperPlan, size_upper
from railplan.topology.tiers import TierModels, TierSpeeds, UpperTiers, upper_tiers
from railplan.topology.wiring import Tally, counting

PriceDesign = Callable[[Design], Bom]

#: lengths used when no floor layout has been routed
NOMINAL_LENGTHS_M = {
    "node-leaf": 3.0,
    "leaf-spine": 20.0,
    "spine-core": 50.0,
    "leaf-leaf": 20.0,
    "device-leaf": 20.0,
}


def nominal_pricer(catalog: Catalog, lengths_m: Mapping[str, float] | None = None) -> PriceDesign:
    """A pricer that gives every link a nominal length per link kind, picks media, and bills it.

    Use it before a floor layout exists; pass the layout's own pricer for routed lengths.
    """
    table = {**NOMINAL_LENGTHS_M, **(lengths_m or {})}

    def price(design: Design) -> Bom:
        routed = {lk.id: table.get(lk.kind, 20.0) for lk in design.links}
        assignment = media.assign_design(design, catalog, routed)
        cables = tuple(
            Cable(
                id=f"C{n:06d}",
                link_id=lk.id,
                media=assignment.choices[lk.id].cable,
                transceiver_a=assignment.choices[lk.id].transceiver_a,
                transceiver_b=assignment.choices[lk.id].transceiver_b,
                length_m=assignment.choices[lk.id].stocked_length_m,
                label_a="",
                label_b="",
                colour="",
            )
            for n, lk in enumerate(design.links, start=1)
        )
        return bom(dataclasses.replace(design, cables=cables), catalog)

    return price


@dataclass(frozen=True)
class LeafTerm:
    """The leaf tier built from one model: its cost and the leaves the tiers above serve."""

    model: SwitchModel
    cost: float
    switches: int
    leaf: Switch
    #: per plane: (leaves with their uplinks, tiers asked, leaves per group)
    uppers: tuple[tuple[Sequence[UpLeaf], int | None, int], ...]


@dataclass(frozen=True)
class SpineTerm:
    """The spine tier above one leaf model: 2 or 3 tiers, its spines and their cost."""

    tiers: int
    cost: float
    spines: int


def unit(model: SwitchModel, objective: str) -> float:
    return model.price_usd.value if objective == "cost" else model.power_typical_w.value


def class_cost(
    catalog: Catalog,
    objective: str,
    rate: int,
    a: tuple[str, int],
    b: tuple[str, int],
    kind: str,
    parallel: bool = False,
) -> float:
    """Per-link media cost (or power) of a link class at the kind's nominal length."""
    choice = media.select(
        catalog,
        speed_gbps=rate,
        a_form_factor=a[0],
        b_form_factor=b[0],
        length_m=NOMINAL_LENGTHS_M.get(kind, 20.0),
        a_ports_per_cage=a[1],
        b_ports_per_cage=b[1],
        parallel=parallel,
    )
    return choice.cost_usd if objective == "cost" else choice.power_w


def leaf_term(
    spec: Spec,
    shape: NodeShape,
    family: str,
    models: TierModels,
    catalog: Catalog,
    objective: str,
) -> LeafTerm:
    """Cost of the leaf tier of ``models.leaf`` (raises RailplanError when it cannot be built
    or cabled)."""
    with counting() as tally:
        GENERATORS[family](spec, shape, models)
    leaves = [sw for sw in tally.switches if sw.tier == 1]
    if not leaves:
        raise InfeasibleError(f"{models.leaf.id} builds no leaves for this cluster")
    cost = len(leaves) * unit(models.leaf, objective)
    cost += _links_cost(tally, shape, catalog, objective)
    return LeafTerm(models.leaf, cost, len(leaves), leaves[0], tuple(tally.uppers))


def _links_cost(tally: Tally, shape: NodeShape, catalog: Catalog, objective: str) -> float:
    host = (shape.form_factor, shape.ports_per_cage)
    total = 0.0
    for (kind, rate, a, b), count in sorted(tally.links.items(), key=repr):
        total += count * class_cost(catalog, objective, rate, a or host, b, kind)
    return total


def spine_term(
    spec: Spec,
    term: LeafTerm,
    spine: SwitchModel,
    speeds: TierSpeeds,
    catalog: Catalog,
    objective: str,
) -> SpineTerm:
    """Spines above ``term``'s leaves and the leaf-spine media; raises when they do not fit
    or cannot be cabled. Whether a core tier is needed depends on the spine, not the core."""
    upper = upper_tiers(spec, TierModels(term.model, spine, spine), speeds)
    plans = [size_upper(lv, upper, tiers, group) for lv, tiers, group in term.uppers]
    cost = sum(
        _leaf_spine_media(lv, plan, upper, term.leaf, catalog, objective)
        for (lv, _, _), plan in zip(term.uppers, plans, strict=True)
    )
    spines = sum(plan.spine_count for plan in plans)
    return SpineTerm(plans[0].tiers, cost + spines * unit(spine, objective), spines)


def core_term(
    spec: Spec,
    term: LeafTerm,
    spine: SwitchModel,
    core: SwitchModel,
    speeds: TierSpeeds,
    catalog: Catalog,
    objective: str,
) -> tuple[float, int]:
    """Cost and count of the cores above a 3-tier (leaf, spine) pair; raises when they do
    not fit or cannot be cabled."""
    upper = upper_tiers(spec, TierModels(term.model, spine, core), speeds)
    cost, cores = 0.0, 0
    for leaves, tiers, group in term.uppers:
        plan = size_upper(leaves, upper, tiers, group)
        cores += plan.core_count
        cost += _spine_core_media(plan, upper, catalog, objective)
    return cost + cores * unit(core, objective), cores


def _leaf_spine_media(
    leaves: Sequence[UpLeaf],
    plan: UpperPlan,
    upper: UpperTiers,
    leaf: Switch,
    catalog: Catalog,
    objective: str,
) -> float:
    up_ppc = leaf.up_ports_per_cage if leaf.mixed_speed else leaf.ports_per_cage
    a = (catalog.switch(leaf.model).form_factor, up_ppc)
    lay = upper.two_tier_layout() if plan.tiers == 2 else upper.spine.layout
    b = (lay.model.form_factor, lay.down_ppc)
    rate = lay.down_gbps
    total = 0.0
    counts: Mapping[int, int] = _bundles(leaves, plan.spines)
    for per, links in sorted(counts.items()):
        parallel = per % a[1] == 0 and per % b[1] == 0 and a[1] == b[1] > 1
        total += links * class_cost(catalog, objective, rate, a, b, "leaf-spine", parallel)
    return total


def _bundles(leaves: Sequence[UpLeaf], spines: int) -> dict[int, int]:
    """Links by bundle size: each leaf sends ceil(up / spines) links to each spine."""
    out: dict[int, int] = {}
    for lf in leaves:
        per = math.ceil(lf.up / spines)
        out[per] = out.get(per, 0) + per * spines
    return out


def _spine_core_media(
    plan: UpperPlan, upper: UpperTiers, catalog: Catalog, objective: str
) -> float:
    sp, core = upper.spine.layout, upper.core
    a = (sp.model.form_factor, sp.up_ppc)
    b = (core.model.form_factor, core.down_ppc)
    total = 0.0
    for u in plan.pod_up:
        per = math.ceil(u / plan.group_cores)
        links = plan.spines * plan.group_cores * per
        parallel = per % a[1] == 0 and per % b[1] == 0 and a[1] == b[1] > 1
        total += links * class_cost(catalog, objective, sp.up_gbps, a, b, "spine-core", parallel)
    return total


def protocol_match(*models: SwitchModel) -> bool:
    return len({m.protocol for m in models}) == 1


__all__ = [
    "NOMINAL_LENGTHS_M",
    "LeafTerm",
    "PriceDesign",
    "SpineTerm",
    "class_cost",
    "core_term",
    "leaf_term",
    "nominal_pricer",
    "protocol_match",
    "spine_term",
    "unit",
]
