"""Every way to cable one component (links tied by multi-port cages) and its price at a length.

A *component* is the shape of a group of links (cages and slots, no names or lengths), so alike
components share their plans. A *plan* is one way to cable it: straight built-in cables,
splitter cables, or optics with fibre cords; priced at a routed length it gives the cheapest
stocked parts. Costs and power are per link: a module serving two links counts half on each.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from railplan.catalog import LENGTH_EPS_M, Cable, Catalog, Transceiver, cage_accepts

KIND_ORDER = ("dac", "acc", "aec", "aoc", "fibre")
#: module combinations tried per interface and component before falling back to one per cage
MAX_COMBINATIONS = 64


@dataclass(frozen=True, slots=True)
class MediaChoice:
    """The media of one link: cable part, stocked length, optics at each end, per-link cost."""

    cable: str
    stocked_length_m: float
    transceiver_a: str
    transceiver_b: str
    kind: str
    cost_usd: float
    power_w: float
    #: optical interface both modules run ("400g-dr4"), "" for built-in cables
    interface: str = ""
    fibre: str = ""
    #: links sharing the physical cable (2 on a twin-port cable or a 1:2 splitter)
    links_per_cable: int = 1


@dataclass(frozen=True, slots=True)
class Component:
    """The shape of a component, without names or lengths (so alike components share plans)."""

    speed: int
    #: (form factor, ports per cage) of each cage, by first appearance
    cages: tuple[tuple[str, int], ...]
    #: (a cage, a slot, b cage, b slot) of each link
    runs: tuple[tuple[int, int, int, int], ...]
    fibre: str = ""


@dataclass(frozen=True, slots=True)
class Instance:
    """One physical cable: candidate parts (cheapest stocking the length wins) and its links."""

    parts: tuple[Cable, ...]
    runs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    kind: str
    label: str
    modules: tuple[Transceiver | None, ...]
    instances: tuple[Instance, ...]
    reach_m: float
    interface: str = ""
    fibre: str = ""


@dataclass(frozen=True, slots=True)
class Priced:
    plan: Plan
    #: (part, stocked length) per instance
    cables: tuple[tuple[Cable, float], ...]
    cost_usd: float
    power_w: float

    def rank(self) -> tuple[float, float, int, str]:
        return (
            round(self.cost_usd, 2),
            round(self.power_w, 3),
            kind_rank(self.plan.kind),
            self.plan.label,
        )


def kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


class CatalogIndex:
    """Per-catalog lookups, built once (catalogs are immutable)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.builtin = sorted(
            (c for c in catalog.cables.values() if c.kind != "fibre"), key=lambda c: c.id
        )
        self.cords = sorted(
            (c for c in catalog.cables.values() if c.kind == "fibre"), key=lambda c: c.id
        )
        self.modules = sorted(
            catalog.transceivers.values(), key=lambda t: (t.price_usd.value, t.id)
        )
        self.plans: dict[Component, tuple[Plan, ...]] = {}

    def modules_for(self, ff: str, ppc: int, speed: int, fibre: str) -> list[Transceiver]:
        return [
            t
            for t in self.modules
            if t.ports == ppc
            and t.port_speed_gbps == speed
            and cage_accepts(ff, t.form_factor)
            and (not fibre or t.fibre == fibre)
        ]

    def cords_for(self, fibre: str, end_a: str, end_b: str, breakout: int) -> tuple[Cable, ...]:
        """Fibre cords of ``breakout`` legs from connector ``end_a`` to ``end_b``."""
        out = []
        for c in self.cords:
            if c.fibre != fibre or c.breakout != breakout:
                continue
            if (c.end_a, c.end_b) == (end_a, end_b) or (
                breakout == 1 and (c.end_b, c.end_a) == (end_a, end_b)
            ):
                out.append(c)
        return tuple(out)


_INDEXES: dict[int, CatalogIndex] = {}


def catalog_index(catalog: Catalog) -> CatalogIndex:
    idx = _INDEXES.get(id(catalog))
    if idx is None or idx.catalog is not catalog:
        if len(_INDEXES) > 16:
            _INDEXES.clear()
        idx = CatalogIndex(catalog)
        _INDEXES[id(catalog)] = idx
    return idx


def plans_for(idx: CatalogIndex, comp: Component) -> tuple[Plan, ...]:
    hit = idx.plans.get(comp)
    if hit is None:
        plans: list[Plan] = []
        if not comp.fibre:
            plans += _straight_plans(idx, comp)
            plans += _splitter_plans(idx, comp)
        plans += _optical_plans(idx, comp)
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
    out = []
    for c in idx.builtin:
        if c.breakout != 1 or c.links * c.speed_gbps != bandwidth:
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
    out = []
    for c in idx.builtin:
        if c.breakout != k or c.links != k or c.speed_gbps != comp.speed:
            continue
        if cage_accepts(hub_ff, c.end_a) and all(
            cage_accepts(comp.cages[f][0], c.end_b) for f in far
        ):
            runs = tuple(range(len(comp.runs)))
            modules = tuple(None for _ in comp.cages)
            out.append(Plan(c.kind, c.id, modules, (Instance((c,), runs),), math.inf))
    return out


def _optical_plans(idx: CatalogIndex, comp: Component) -> list[Plan]:
    """A module per cage on one interface, with fibre cords between their connectors."""
    per_cage = [idx.modules_for(ff, ppc, comp.speed, comp.fibre) for ff, ppc in comp.cages]
    if any(not c for c in per_cage):
        return []
    interfaces = set.intersection(*({t.interface for t in c} for c in per_cage))
    out = []
    for iface in sorted(interfaces):
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
        if ma == 1 and mb == 1:
            key: tuple[object, ...] = ("run", r)
            parts = idx.cords_for(fibre, ca, cb, 1)
            runs: tuple[int, ...] = (r,)
        elif ma == mb:
            if sorted(members[ga]) != sorted(members[gb]) or sa % ma != sb % mb:
                return None
            key = ("pair", ga, gb)
            parts = idx.cords_for(fibre, ca, cb, 1)
            runs = tuple(sorted(members[ga]))
        elif mb == 1 or ma == 1:
            hub, hub_conn, m = (ga, ca, ma) if mb == 1 else (gb, cb, mb)
            legs = members[hub]
            far_conns = set()
            for leg in legs:
                la, lsa, lb, _lsb = comp.runs[leg]
                far_cage = lb if group(la, lsa) == hub else la
                if mods[far_cage].ports_per_connector != 1:
                    return None
                far_conns.add(mods[far_cage].connector)
            if len(far_conns) != 1:
                return None
            key = ("hub", hub)
            parts = idx.cords_for(fibre, hub_conn, far_conns.pop(), m)
            runs = tuple(sorted(legs))
        else:
            return None
        if not parts:
            return None
        instances.setdefault(key, Instance(parts, runs))
    reach = min(t.reach_m.value for t in mods)
    label = f"{iface}:" + "+".join(t.id for t in mods)
    return Plan("fibre", label, tuple(mods), tuple(instances.values()), reach, iface, fibre)


def _price(plan: Plan, length_m: float) -> Priced | None:
    if length_m > plan.reach_m + LENGTH_EPS_M:
        return None
    cables = []
    cost = sum(t.price_usd.value for t in plan.modules if t is not None)
    power = sum(t.power_w.value for t in plan.modules if t is not None)
    for inst in plan.instances:
        best: tuple[tuple[float, float, str], Cable, float] | None = None
        for part in inst.parts:
            stock = part.stocked(length_m)
            if stock is None or stock > plan.reach_m + LENGTH_EPS_M:
                continue
            rank = (part.price_at(stock), part.power_w.value, part.id)
            if best is None or rank < best[0]:
                best = (rank, part, stock)
        if best is None:
            return None
        cables.append((best[1], best[2]))
        cost += best[0][0]
        power += best[1].power_w.value
    return Priced(plan, tuple(cables), cost, power)


def cheapest(plans: Iterable[Plan], length_m: float) -> Priced | None:
    best: Priced | None = None
    for plan in plans:
        priced = _price(plan, length_m)
        if priced is not None and (best is None or priced.rank() < best.rank()):
            best = priced
    return best


def longest_reach(plans: Sequence[Plan]) -> float:
    out = 0.0
    for plan in plans:
        stocked = min(max(p.lengths_m[-1] for p in inst.parts) for inst in plan.instances)
        out = max(out, min(plan.reach_m, stocked))
    return out


def per_link_choices(comp: Component, priced: Priced) -> list[MediaChoice]:
    """Split a priced plan into per-link choices: shared modules and cables count by share."""
    plan = priced.plan
    on_cage: dict[int, int] = defaultdict(int)
    for a, _, b, _ in comp.runs:
        on_cage[a] += 1
        on_cage[b] += 1
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
