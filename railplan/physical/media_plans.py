"""Every way to cable one component (links tied by multi-port cages) and its price at a length.

A *plan* is one way to cable a component: straight built-in cables, splitter cables, optics
with fibre cords, or optics through the fibre plant (``plant_plans``); priced at a routed
length it gives the cheapest stocked parts. Only parts that run the component's protocol and
are qualified for the equipment at their ends are tried. Costs and power are per link: a
module serving two links counts half on each.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

from railplan.catalog import LENGTH_EPS_M, Cable, Transceiver, cage_accepts
from railplan.physical.media_policy import OPTICS
from railplan.physical.media_types import (
    KIND_ORDER,
    CatalogIndex,
    Component,
    Instance,
    MediaChoice,
    Plan,
    Priced,
    catalog_index,
    kind_rank,
    part_rank,
    shared_interfaces,
)
from railplan.physical.plant_plans import plant_plans, plant_price, run_cost

__all__ = [
    "KIND_ORDER",
    "CatalogIndex",
    "Component",
    "Instance",
    "MediaChoice",
    "Plan",
    "Priced",
    "catalog_index",
    "cheapest",
    "cheapest_for",
    "kind_rank",
    "length_breakpoints",
    "longest_reach",
    "per_link_choices",
    "plans_for",
    "plant_link_choices",
]

#: module combinations tried per interface and component before falling back to one per cage
MAX_COMBINATIONS = 64


def plans_for(idx: CatalogIndex, comp: Component) -> tuple[Plan, ...]:
    hit = idx.plans.get(comp)
    if hit is None:
        plans: list[Plan] = []
        if not comp.fibre:
            plans += _straight_plans(idx, comp)
            plans += _splitter_plans(idx, comp)
        fibre = "" if comp.fibre == OPTICS else comp.fibre  # optics of either fibre
        per_cage = [
            idx.modules_for(
                ff, ppc, comp.speed, fibre, comp.protocol, comp.vendor(c), comp.lanes_of(c)
            )
            for c, (ff, ppc) in enumerate(comp.cages)
        ]
        plans += _optical_plans(idx, comp, per_cage)
        plans += plant_plans(idx, comp, per_cage)
        hit = tuple(plans)
        idx.plans[comp] = hit
    return hit


def _straight_plans(idx: CatalogIndex, comp: Component) -> list[Plan]:
    """One straight built-in cable when every link runs between the same two cages, slot for slot."""
    if len(comp.cages) != 2:
        return []
    (ff0, ppc0), (ff1, ppc1) = comp.cages
    if ppc0 != ppc1:
        return []
    for a, sa, b, sb in comp.runs:
        if a == b or sa != sb:
            return []
    bandwidth = ppc0 * comp.speed
    vendors = comp.vendors_of((0, 1))
    out = []
    for c in idx.builtin:
        # a cable carries links no faster than its own: a 2 x 400G twin cable is not billed on
        # one 800G link, even though its eight lanes would carry it
        if c.breakout != 1 or c.links * c.speed_gbps != bandwidth or c.speed_gbps < comp.speed:
            continue
        if c.usable(comp.protocol, vendors):
            continue
        if (cage_accepts(ff0, c.end_a) and cage_accepts(ff1, c.end_b)) or (
            cage_accepts(ff0, c.end_b) and cage_accepts(ff1, c.end_a)
        ):
            runs = tuple(range(len(comp.runs)))
            out.append(Plan(c.kind, c.id, (None, None), (Instance((c,), runs),), math.inf))
    return out


def _splitter_plans(idx: CatalogIndex, comp: Component) -> list[Plan]:
    """A 1:N built-in splitter when one N-port cage fans out to single-port cages."""
    multi = [i for i, (_, ppc) in enumerate(comp.cages) if ppc > 1]
    if len(multi) != 1:
        return []
    hub = multi[0]
    hub_ff, k = comp.cages[hub]
    far: list[int] = []
    for a, _, b, _ in comp.runs:
        if hub not in (a, b) or a == b:
            return []
        far.append(b if a == hub else a)
    if len(set(far)) != len(far):
        return []
    vendors = comp.vendors_of([hub, *far])
    out = []
    for c in idx.builtin:
        if c.breakout != k or c.links != k or c.speed_gbps != comp.speed:
            continue
        if c.usable(comp.protocol, vendors):
            continue
        if cage_accepts(hub_ff, c.end_a) and all(
            cage_accepts(comp.cages[f][0], c.end_b) for f in far
        ):
            runs = tuple(range(len(comp.runs)))
            modules = tuple(None for _ in comp.cages)
            out.append(Plan(c.kind, c.id, modules, (Instance((c,), runs),), math.inf))
    return out


def _optical_plans(
    idx: CatalogIndex, comp: Component, per_cage: Sequence[list[Transceiver]]
) -> list[Plan]:
    """A module per cage on one interface, with fibre cords between their connectors."""
    out = []
    for iface in shared_interfaces(per_cage):
        lists = [[t for t in c if t.interface == iface] for c in per_cage]
        if math.prod(len(x) for x in lists) > MAX_COMBINATIONS:
            lists = [[next((t for t in x if t.ports_per_connector == 1), x[0])] for x in lists]
        for mods in itertools.product(*lists):
            plan = _cords(idx, comp, mods, iface)
            if plan is not None:
                out.append(plan)
    return out


def _cords(
    idx: CatalogIndex, comp: Component, mods: Sequence[Transceiver], iface: str
) -> Plan | None:
    fibre = mods[0].fibre
    if any(t.fibre != fibre for t in mods):
        return None

    def group(cage: int, slot: int) -> tuple[int, int]:
        return (cage, slot // mods[cage].ports_per_connector)

    members: dict[tuple[int, int], list[int]] = defaultdict(list)
    for r, (a, sa, b, sb) in enumerate(comp.runs):
        members[group(a, sa)].append(r)
        members[group(b, sb)].append(r)
    instances: dict[tuple[object, ...], Instance] = {}
    for r, (a, sa, b, sb) in enumerate(comp.runs):
        ga, gb = group(a, sa), group(b, sb)
        ma, mb = mods[a].ports_per_connector, mods[b].ports_per_connector
        ca, cb = mods[a].connector, mods[b].connector
        vendors = comp.vendors_of((a, b))
        if ma == 1 and mb == 1:
            key: tuple[object, ...] = ("run", r)
            parts = idx.cords_for(fibre, ca, cb, 1, comp.protocol, vendors)
            runs: tuple[int, ...] = (r,)
        elif ma == mb:
            if sorted(members[ga]) != sorted(members[gb]) or sa % ma != sb % mb:
                return None
            key = ("pair", ga, gb)
            parts = idx.cords_for(fibre, ca, cb, 1, comp.protocol, vendors)
            runs = tuple(sorted(members[ga]))
        elif mb == 1 or ma == 1:
            hub, hub_conn, m = (ga, ca, ma) if mb == 1 else (gb, cb, mb)
            legs = members[hub]
            far_conns = set()
            far_cages = [hub[0]]
            for leg in legs:
                la, lsa, lb, _lsb = comp.runs[leg]
                far_cage = lb if group(la, lsa) == hub else la
                if mods[far_cage].ports_per_connector != 1:
                    return None
                far_conns.add(mods[far_cage].connector)
                far_cages.append(far_cage)
            if len(far_conns) != 1:
                return None
            key = ("hub", hub)
            hub_vendors = comp.vendors_of(far_cages)
            parts = idx.cords_for(fibre, hub_conn, far_conns.pop(), m, comp.protocol, hub_vendors)
            runs = tuple(sorted(legs))
        else:
            return None
        if not parts:
            return None
        instances.setdefault(key, Instance(parts, runs))
    reach = min(t.reach_m.value for t in mods)
    label = f"{iface}:" + "+".join(t.id for t in mods)
    return Plan("fibre", label, tuple(mods), tuple(instances.values()), reach, iface, fibre)


def _price(plan: Plan, length_m: float, n_runs: int) -> Priced | None:
    if length_m > plan.reach_m + LENGTH_EPS_M:
        return None
    if plan.plant is not None:
        priced = plant_price(plan, n_runs, length_m)
        if priced is None:
            return None
        cost_usd, power_w, part, stock = priced
        return Priced(plan, ((part, stock),), cost_usd, power_w)
    cables = []
    cost = sum(t.price_usd.value for t in plan.modules if t is not None)
    power = sum(t.power_w.value for t in plan.modules if t is not None)
    for inst in plan.instances:
        best: tuple[tuple[float, float, int, str], Cable, float] | None = None
        for part in inst.parts:
            stocked = part.stocked(length_m)
            if stocked is None or stocked > plan.reach_m + LENGTH_EPS_M:
                continue
            rank = part_rank(part, stocked)
            if best is None or rank < best[0]:
                best = (rank, part, stocked)
        if best is None:
            return None
        cables.append((best[1], best[2]))
        cost += best[1].price_at(best[2])
        power += best[1].power_w.value
    return Priced(plan, tuple(cables), cost, power)


def cheapest(plans: Iterable[Plan], length_m: float, n_runs: int = 1) -> Priced | None:
    """The cheapest plan at ``length_m`` (``n_runs``: links of the component, for a plant)."""
    best: Priced | None = None
    for plan in plans:
        priced = _price(plan, length_m, n_runs)
        if priced is not None and (best is None or priced.rank() < best.rank()):
            best = priced
    return best


def cheapest_for(
    idx: CatalogIndex, comp: Component, length_m: float, which: str = "all"
) -> Priced | None:
    """``cheapest`` over the component's plans (``which``: "all", or "direct" without the
    fibre plant), remembered per component and *length class*.

    Pricing reads the length only through two kinds of comparison: a stocked length covers it
    (``stock >= length - LENGTH_EPS_M``, ``Cable.stocked``) and it is beyond a plan's reach
    (``length > reach + LENGTH_EPS_M``). Two lengths on the same side of every stocked length
    and every reach of the component's plans get the same answer, so the class is the pair of
    bisection indexes of the length among those breakpoints: exact, not a rounding.
    """
    plans, stocks, limits = _subset(idx, comp, which)
    key = (
        comp,
        which,
        bisect.bisect_left(stocks, length_m - LENGTH_EPS_M),
        bisect.bisect_left(limits, length_m),
    )
    try:
        return idx.priced[key]
    except KeyError:
        pass
    if len(idx.priced) > 200_000:
        idx.priced.clear()
    priced = cheapest(plans, length_m, len(comp.runs))
    idx.priced[key] = priced
    return priced


def length_breakpoints(
    idx: CatalogIndex, comp: Component
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The stocked lengths and reach limits ``cheapest_for`` bisects a length among for
    ``comp`` in any deciding of it: every plan (the point-to-point ones are among them), and
    the relaxed shape's when the rules are priced on it. Two lengths in the same class of
    these get the same decision, whatever the subset asked."""
    shapes = (comp, comp.relaxed()) if comp.protocol or comp.vendors else (comp,)
    stocks: set[float] = set()
    limits: set[float] = set()
    for shape in shapes:
        _, shape_stocks, shape_limits = _subset(idx, shape, "all")
        stocks.update(shape_stocks)
        limits.update(shape_limits)
    return tuple(sorted(stocks)), tuple(sorted(limits))


def _subset(
    idx: CatalogIndex, comp: Component, which: str
) -> tuple[tuple[Plan, ...], tuple[float, ...], tuple[float, ...]]:
    """The plans ``cheapest_for`` prices (``which``), with the sorted stocked lengths of every
    part they may use and the sorted reach limits (``reach + LENGTH_EPS_M``) they test."""
    hit = idx.subsets.get((comp, which))
    if hit is None:
        plans = plans_for(idx, comp)
        if which == "direct":
            plans = tuple(p for p in plans if p.plant is None)
        stocks: set[float] = set()
        limits: set[float] = set()
        for plan in plans:
            limits.add(plan.reach_m + LENGTH_EPS_M)
            parts = [p for inst in plan.instances for p in inst.parts]
            if plan.plant is not None:
                parts += plan.plant.carriages
            for part in parts:
                stocks.update(part.lengths_m)
        hit = (plans, tuple(sorted(stocks)), tuple(sorted(limits)))
        idx.subsets[(comp, which)] = hit
    return hit


def longest_reach(plans: Sequence[Plan]) -> float:
    out = 0.0
    for plan in plans:
        if not plan.instances:  # a plant: its reach already counts the longest carriage
            out = max(out, plan.reach_m)
            continue
        stocked = min(max(p.lengths_m[-1] for p in inst.parts) for inst in plan.instances)
        out = max(out, min(plan.reach_m, stocked))
    return out


def per_link_choices(
    comp: Component, priced: Priced, lengths_m: Sequence[float] | None = None
) -> list[MediaChoice]:
    """Split a priced plan into per-link choices: shared modules and cables count by share.

    A plant prices each link's leg at its own length (``lengths_m``, by run; default the
    priced length): its legs ride separate trunks or cords, unlike the cords of one module.
    """
    plan = priced.plan
    on_cage: dict[int, int] = defaultdict(int)
    for a, _, b, _ in comp.runs:
        on_cage[a] += 1
        on_cage[b] += 1
    if plan.plant is not None:
        default = priced.cables[0][1]
        return [
            _plant_choice(plan, on_cage, run, lengths_m[r] if lengths_m is not None else default)
            for r, run in enumerate(comp.runs)
        ]
    cable_of: dict[int, tuple[Cable, float, int]] = {}
    for inst, (part, stock) in zip(plan.instances, priced.cables, strict=True):
        for r in inst.runs:
            cable_of[r] = (part, stock, len(inst.runs))
    out = []
    for r, (a, _, b, _) in enumerate(comp.runs):
        part, stock, share = cable_of[r]
        cost = part.price_at(stock) / share
        power = part.power_w.value / share
        names = []
        for cage in (a, b):
            t = plan.modules[cage] if plan.modules else None
            names.append(t.id if t else "")
            if t is not None:
                cost += t.price_usd.value / on_cage[cage]
                power += t.power_w.value / on_cage[cage]
        out.append(
            MediaChoice(
                cable=part.id,
                stocked_length_m=stock,
                transceiver_a=names[0],
                transceiver_b=names[1],
                kind=part.kind,
                cost_usd=round(cost, 4),
                power_w=round(power, 4),
                interface=plan.interface,
                fibre=plan.fibre,
                links_per_cable=share,
            )
        )
    return out


def plant_link_choices(
    comp: Component, priced: Priced, lengths_m: Iterable[Sequence[float]]
) -> list[list[MediaChoice]]:
    """``per_link_choices`` of a plant plan for components of one shape, each at its own
    lengths: a leg's price reads its length only through the carriages' stocked lengths
    (``cheapest_carriage``), so a link's choice is worked out once per run and class of its
    length among them."""
    plan, parts = priced.plan, priced.plan.plant
    assert parts is not None
    stocks = sorted({s for part in parts.carriages for s in part.lengths_m})
    on_cage: dict[int, int] = defaultdict(int)
    for a, _, b, _ in comp.runs:
        on_cage[a] += 1
        on_cage[b] += 1
    known: dict[tuple[int, int], MediaChoice] = {}
    out = []
    for lengths in lengths_m:
        row = []
        for r, (run, length) in enumerate(zip(comp.runs, lengths, strict=True)):
            key = (r, bisect.bisect_left(stocks, length - LENGTH_EPS_M))
            hit = known.get(key)
            if hit is None:
                hit = known[key] = _plant_choice(plan, on_cage, run, length)
            row.append(hit)
        out.append(row)
    return out


def _plant_choice(
    plan: Plan, on_cage: dict[int, int], run: tuple[int, int, int, int], length_m: float
) -> MediaChoice:
    parts = plan.plant
    assert parts is not None
    cost, power, part, stock = run_cost(
        plan, [on_cage[c] for c in range(len(plan.modules))], run, length_m
    )
    a, _, b, _ = run
    ta, tb = plan.modules[a], plan.modules[b]
    return MediaChoice(
        cable=part.id,
        stocked_length_m=stock,
        transceiver_a=ta.id if ta else "",
        transceiver_b=tb.id if tb else "",
        kind="plant",
        cost_usd=round(cost, 4),
        power_w=round(power, 4),
        interface=plan.interface,
        fibre=plan.fibre,
        links_per_cable=part.links if part.kind == "trunk" else 1,
        fan_out_a=parts.fan_out[a].id,
        fan_out_b=parts.fan_out[b].id,
    )
