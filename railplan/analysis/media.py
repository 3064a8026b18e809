"""Media per cable: the cheapest catalog cable and optics whose reach covers the routed length.

Three calls, from cheap to exact:

- ``select(catalog, speed_gbps=, a_form_factor=, b_form_factor=, length_m=, ...)`` prices one
  link in the usual context of its cages (a twin-port cage full, its links to other cages);
- ``cost_table`` / ``cost_steps`` give that price as a function of length (placement);
- ``assign_design(design, catalog, lengths)`` (or ``assign_cages(catalog, runs)``) decides the
  media of every link at once, cage by cage. Links tied together by multi-port cages (a
  twin-port OSFP carries two links) form one *component* and get one decision: the same
  optical interface, so the same fibre type, on every link of a twin-port module (mixed types
  are refused), one module per cage, and every cable of the component at its longest routed
  length, rounded up to a stocked length (NVIDIA: both fibres of a twin-port module should be
  about the same length). Use ``MediaChoice.stocked_length_m`` as the cable's length.

Options a component can take (every catalog part that fits is priced; the cheapest wins, ties
go to DAC, ACC, AEC, AOC, fibre in that order, then by id):

- a straight built-in cable (DAC/ACC/AEC/AOC) when its links all run between the same two
  cages, slot for slot (one link between single-port cages, or two parallel links between two
  twin-port cages); straight copper is lane-transparent: an 800G twin-port DAC carries
  2 x 400G, 1 x 800G or 4 x 200G;
- a 1:N splitter cable when one N-port cage fans out to N single-port cages;
- optics: a module per cage (ports = the cage's ports, same interface at both ends of a link),
  a straight fibre cord per connector pair, or a 1:N splitter fibre where one connector carries
  N ports and each far module one.

Costs and power are per link: a module serving two links counts half on each, a splitter
cable serving two links half on each.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from railplan.catalog import CAGE_ACCEPTS, LENGTH_EPS_M, Cable, Catalog, Transceiver
from railplan.errors import InfeasibleError
from railplan.model import Design, Link

KIND_ORDER = ("dac", "acc", "aec", "aoc", "fibre")
#: cost a placement objective sees for a link nothing in the catalog reaches at that length
UNREACHABLE_USD = 10_000_000.0
#: module combinations tried per interface and component before falling back to one per cage
MAX_COMBINATIONS = 64
FIX_HINT = "add one to catalogs/optics.yaml"


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
class CageEnd:
    """One end of a link: the device, which cage (port // ports_per_cage) and slot in it."""

    device: str
    cage: int
    slot: int
    form_factor: str
    ports_per_cage: int = 1

    @property
    def key(self) -> tuple[str, int]:
        return (self.device, self.cage)

    def name(self) -> str:
        return f"cage {self.cage + 1} of {self.device}"


@dataclass(frozen=True, slots=True)
class LinkRun:
    """A link to give media to: speed, routed length and its two cage ends."""

    link_id: str
    speed_gbps: int
    length_m: float
    a: CageEnd
    b: CageEnd
    #: "" for any media, "mmf" or "smf" to insist on optics of that fibre
    fibre: str = ""


@dataclass(frozen=True, slots=True)
class Assignment:
    """Media for every link (by link id) and sentences about what the rules changed."""

    choices: dict[str, MediaChoice]
    notes: tuple[str, ...] = ()

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.choices.values())

    @property
    def power_w(self) -> float:
        return sum(c.power_w for c in self.choices.values())


# -- components and plans ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Comp:
    """The shape of a component, without names or lengths (so alike components share plans)."""

    speed: int
    #: (form factor, ports per cage) of each cage, by first appearance
    cages: tuple[tuple[str, int], ...]
    #: (a cage, a slot, b cage, b slot) of each link
    runs: tuple[tuple[int, int, int, int], ...]
    fibre: str = ""


@dataclass(frozen=True, slots=True)
class _Instance:
    """One physical cable: candidate parts (cheapest stocking the length wins) and its links."""

    parts: tuple[Cable, ...]
    runs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class _Plan:
    kind: str
    label: str
    modules: tuple[Transceiver | None, ...]
    instances: tuple[_Instance, ...]
    reach_m: float
    interface: str = ""
    fibre: str = ""


@dataclass(frozen=True, slots=True)
class _Priced:
    plan: _Plan
    #: (part, stocked length) per instance
    cables: tuple[tuple[Cable, float], ...]
    cost_usd: float
    power_w: float

    def rank(self) -> tuple[float, float, int, str]:
        return (
            round(self.cost_usd, 2),
            round(self.power_w, 3),
            _kind_rank(self.plan.kind),
            self.plan.label,
        )


def _kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def _accepts(cage_ff: str, plug_ff: str) -> bool:
    return plug_ff in CAGE_ACCEPTS.get(cage_ff, (cage_ff,))


class _Index:
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
        self.plans: dict[_Comp, tuple[_Plan, ...]] = {}

    def modules_for(self, ff: str, ppc: int, speed: int, fibre: str) -> list[Transceiver]:
        return [
            t
            for t in self.modules
            if t.ports == ppc
            and t.port_speed_gbps == speed
            and _accepts(ff, t.form_factor)
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


_INDEXES: dict[int, _Index] = {}


def _index(catalog: Catalog) -> _Index:
    idx = _INDEXES.get(id(catalog))
    if idx is None or idx.catalog is not catalog:
        if len(_INDEXES) > 16:
            _INDEXES.clear()
        idx = _Index(catalog)
        _INDEXES[id(catalog)] = idx
    return idx


def _plans(idx: _Index, comp: _Comp) -> tuple[_Plan, ...]:
    hit = idx.plans.get(comp)
    if hit is None:
        plans: list[_Plan] = []
        if not comp.fibre:
            plans += _straight_plans(idx, comp)
            plans += _splitter_plans(idx, comp)
        plans += _optical_plans(idx, comp)
        hit = tuple(plans)
        idx.plans[comp] = hit
    return hit


def _straight_plans(idx: _Index, comp: _Comp) -> list[_Plan]:
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
        if (_accepts(ff0, c.end_a) and _accepts(ff1, c.end_b)) or (
            _accepts(ff0, c.end_b) and _accepts(ff1, c.end_a)
        ):
            runs = tuple(range(len(comp.runs)))
            out.append(_Plan(c.kind, c.id, (None, None), (_Instance((c,), runs),), math.inf))
    return out


def _splitter_plans(idx: _Index, comp: _Comp) -> list[_Plan]:
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
        if _accepts(hub_ff, c.end_a) and all(_accepts(comp.cages[f][0], c.end_b) for f in far):
            runs = tuple(range(len(comp.runs)))
            modules = tuple(None for _ in comp.cages)
            out.append(_Plan(c.kind, c.id, modules, (_Instance((c,), runs),), math.inf))
    return out


def _optical_plans(idx: _Index, comp: _Comp) -> list[_Plan]:
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


def _cords(idx: _Index, comp: _Comp, mods: Sequence[Transceiver], iface: str) -> _Plan | None:
    fibre = mods[0].fibre
    if any(t.fibre != fibre for t in mods):
        return None

    def group(cage: int, slot: int) -> tuple[int, int]:
        return (cage, slot // mods[cage].ports_per_connector)

    members: dict[tuple[int, int], list[int]] = defaultdict(list)
    for r, (a, sa, b, sb) in enumerate(comp.runs):
        members[group(a, sa)].append(r)
        members[group(b, sb)].append(r)
    instances: dict[tuple[object, ...], _Instance] = {}
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
        instances.setdefault(key, _Instance(parts, runs))
    reach = min(t.reach_m.value for t in mods)
    label = f"{iface}:" + "+".join(t.id for t in mods)
    return _Plan("fibre", label, tuple(mods), tuple(instances.values()), reach, iface, fibre)


def _price(plan: _Plan, length_m: float) -> _Priced | None:
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
    return _Priced(plan, tuple(cables), cost, power)


def _cheapest(plans: Iterable[_Plan], length_m: float) -> _Priced | None:
    best: _Priced | None = None
    for plan in plans:
        priced = _price(plan, length_m)
        if priced is not None and (best is None or priced.rank() < best.rank()):
            best = priced
    return best


def _longest_reach(plans: Sequence[_Plan]) -> float:
    out = 0.0
    for plan in plans:
        stocked = min(max(p.lengths_m[-1] for p in inst.parts) for inst in plan.instances)
        out = max(out, min(plan.reach_m, stocked))
    return out


def _per_run(comp: _Comp, priced: _Priced) -> list[MediaChoice]:
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


# -- one link in its usual context ------------------------------------------------------------


def _typical(
    speed: int, a_ff: str, a_ppc: int, b_ff: str, b_ppc: int, breakout: int, parallel: bool
) -> _Comp:
    """The component a link usually sits in, given its cages (run 0 is the link asked about)."""
    if a_ppc < 1 or b_ppc < 1:
        raise InfeasibleError("ports per cage must be at least 1")
    big, small = max(a_ppc, b_ppc), min(a_ppc, b_ppc)
    fits = {1, big // small} if big % small == 0 else {1}
    if breakout not in fits:
        raise InfeasibleError(
            f"breakout {breakout} does not fit cages of {a_ppc} and {b_ppc} ports; use "
            + " or ".join(str(f) for f in sorted(fits))
        )
    if breakout > 1:  # the cage's links fan out to separate cages
        parallel = False
    if a_ppc == 1 and b_ppc == 1:
        return _Comp(speed, ((a_ff, 1), (b_ff, 1)), ((0, 0, 1, 0),))
    if a_ppc == b_ppc and parallel:
        runs = tuple((0, s, 1, s) for s in range(a_ppc))
        return _Comp(speed, ((a_ff, a_ppc), (b_ff, b_ppc)), runs)
    if b_ppc == 1:  # a end fans out to single-port cages
        cages = ((a_ff, a_ppc), *tuple((b_ff, 1) for _ in range(a_ppc)))
        return _Comp(speed, cages, tuple((0, s, 1 + s, 0) for s in range(a_ppc)))
    if a_ppc == 1:
        cages = ((b_ff, b_ppc), *tuple((a_ff, 1) for _ in range(b_ppc)))
        runs = tuple((1 + s, 0, 0, s) for s in range(b_ppc))
        return _Comp(speed, cages, runs)
    # grid: b_ppc a-cages each with a_ppc links, one to each of a_ppc b-cages
    cages = tuple((a_ff, a_ppc) for _ in range(b_ppc)) + tuple((b_ff, b_ppc) for _ in range(a_ppc))
    runs = tuple((i, j, b_ppc + j, i) for i in range(b_ppc) for j in range(a_ppc))
    return _Comp(speed, cages, runs)


def _describe(speed: int, a_ff: str, a_ppc: int, b_ff: str, b_ppc: int) -> str:
    extra = [
        f"{p} ports per cage at the {end} end" for end, p in (("a", a_ppc), ("b", b_ppc)) if p > 1
    ]
    return f"{speed}G {a_ff}-{b_ff}" + (f" ({', '.join(extra)})" if extra else "")


def select(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    length_m: float,
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
) -> MediaChoice:
    """The cheapest media for one link of ``length_m`` (routed), per link.

    Cages with several ports are assumed full: a twin-port cage facing single-port cages fans
    out (splitter cable or a twin-port module with a fibre per link); two multi-port cages face
    each other with a module each and a fibre per link, unless ``parallel`` says every link on
    them runs between the same two cages (then one twin-port cable may carry them). ``breakout``
    is inferred from the cages; 1 or their port ratio are accepted. Raises InfeasibleError
    naming the length when nothing reaches it.
    """
    _check_length(length_m)
    comp, plans, what = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    best = _cheapest(plans, length_m)
    if best is None:
        raise InfeasibleError(_unreachable(plans, length_m, what))
    return _per_run(comp, best)[0]


def _class_plans(
    catalog: Catalog,
    speed_gbps: int,
    a_form_factor: str,
    a_ports_per_cage: int,
    b_form_factor: str,
    b_ports_per_cage: int,
    breakout: int,
    parallel: bool,
) -> tuple[_Comp, tuple[_Plan, ...], str]:
    """One link class: its typical component, every way to cable it, and how to name it."""
    comp = _typical(
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    what = _describe(speed_gbps, a_form_factor, a_ports_per_cage, b_form_factor, b_ports_per_cage)
    return comp, _plans(_index(catalog), comp), what


def _check_length(length_m: float) -> None:
    if not math.isfinite(length_m) or length_m < 0:
        raise InfeasibleError(f"cable length {length_m} m is not a length; give metres >= 0")


def _unreachable(plans: Sequence[_Plan], length_m: float, what: str) -> str:
    if not plans:
        return f"no catalog part connects {what} at any length; {FIX_HINT}"
    return (
        f"no catalog part reaches {length_m:.1f} m at {what} (the longest is "
        f"{_longest_reach(plans):g} m); add a longer-reach optic to catalogs/optics.yaml"
    )


def cost_table(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    lengths_m: Iterable[float],
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
) -> list[float]:
    """Per-link cost at each length (``math.inf`` where nothing reaches), as ``select`` prices it."""
    comp, plans, what = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    if not plans:
        raise InfeasibleError(_unreachable(plans, 0.0, what))
    out = []
    for length in lengths_m:
        best = _cheapest(plans, length)
        out.append(_per_run(comp, best)[0].cost_usd if best else math.inf)
    return out


def cost_steps(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
) -> list[tuple[float, float]]:
    """Per-link cost as a step function: ``[(up_to_length_m, cost_usd), ...]``, increasing.

    A link of length L costs the first step whose length is >= L; past the last step nothing
    in the catalog reaches.
    """
    comp, plans, _ = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    marks = sorted(
        {s for p in plans for inst in p.instances for part in inst.parts for s in part.lengths_m}
        | {p.reach_m for p in plans if math.isfinite(p.reach_m)}
    )
    steps: list[tuple[float, float]] = []
    for mark in marks:
        best = _cheapest(plans, mark)
        if best is None:
            continue
        cost = _per_run(comp, best)[0].cost_usd
        if steps and math.isclose(steps[-1][1], cost):
            steps[-1] = (mark, cost)
        else:
            steps.append((mark, cost))
    return steps


# -- every link of a design, cage by cage -----------------------------------------------------


def components(runs: Sequence[LinkRun]) -> list[list[int]]:
    """Runs tied together by sharing a multi-port cage, in order of their first run."""
    parent = list(range(len(runs)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[tuple[str, int], int] = {}
    for i, run in enumerate(runs):
        for end in (run.a, run.b):
            if end.ports_per_cage > 1:
                j = first.setdefault(end.key, i)
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(runs)):
        groups[find(i)].append(i)
    return [groups[k] for k in sorted(groups)]


def _validate_runs(runs: Sequence[LinkRun]) -> None:
    cages: dict[tuple[str, int], tuple[str, int]] = {}
    used: dict[tuple[str, int, int], str] = {}
    for run in runs:
        _check_length(run.length_m)
        if run.fibre not in ("", "mmf", "smf"):
            raise InfeasibleError(f"link {run.link_id}: fibre {run.fibre!r} is not mmf or smf")
        for end in (run.a, run.b):
            shape = (end.form_factor, end.ports_per_cage)
            if cages.setdefault(end.key, shape) != shape:
                raise InfeasibleError(
                    f"{end.name()} is given as {cages[end.key]} and as {shape} (form factor, "
                    "ports per cage); a cage has one shape"
                )
            if not 0 <= end.slot < end.ports_per_cage:
                raise InfeasibleError(
                    f"link {run.link_id}: slot {end.slot} is outside {end.name()} of "
                    f"{end.ports_per_cage} ports"
                )
            port = (end.device, end.cage, end.slot)
            if port in used:
                raise InfeasibleError(
                    f"links {used[port]} and {run.link_id} both use slot {end.slot + 1} of "
                    f"{end.name()}"
                )
            used[port] = run.link_id


def _fibre_demand(runs: Sequence[LinkRun], members: Sequence[int]) -> str:
    wanted: dict[str, str] = {}
    for i in members:
        if runs[i].fibre:
            wanted.setdefault(runs[i].fibre, runs[i].link_id)
    if len(wanted) <= 1:
        return next(iter(wanted), "")
    on_cage: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    for i in members:
        for end in (runs[i].a, runs[i].b):
            if end.ports_per_cage > 1 and runs[i].fibre:
                on_cage[end.key].setdefault(runs[i].fibre, runs[i].link_id)
    for (device, cage), kinds in sorted(on_cage.items()):
        if len(kinds) > 1:
            _mixed(f"cage {cage + 1} of {device}", kinds)
    _mixed("a chain of twin-port cages", wanted)


def _mixed(where: str, kinds: Mapping[str, str]) -> NoReturn:
    raise InfeasibleError(
        f"{where} carries links that ask for mmf ({kinds['mmf']}) and smf ({kinds['smf']}); a "
        "twin-port module takes one fibre type, so give both links the same fibre"
    )


def _shape(runs: Sequence[LinkRun], members: Sequence[int], fibre: str) -> _Comp:
    index: dict[tuple[str, int], int] = {}
    cages: list[tuple[str, int]] = []
    shaped = []
    for i in members:
        run = runs[i]
        row = []
        for end in (run.a, run.b):
            if end.key not in index:
                index[end.key] = len(cages)
                cages.append((end.form_factor, end.ports_per_cage))
            row += [index[end.key], end.slot]
        shaped.append((row[0], row[1], row[2], row[3]))
    speeds = {runs[i].speed_gbps for i in members}
    if len(speeds) != 1:
        names = ", ".join(runs[i].link_id for i in members[:4])
        raise InfeasibleError(f"links {names} share a cage but run at different speeds")
    return _Comp(speeds.pop(), tuple(cages), tuple(shaped), fibre)


def assign_cages(catalog: Catalog, runs: Sequence[LinkRun]) -> Assignment:
    """Media for every run, one decision per component of runs tied by multi-port cages.

    Pass every link that shares a multi-port cage in one call (simplest: all links of the
    design). Raises InfeasibleError naming the link and length when nothing reaches it, or the
    cage when its links ask for two fibre types.
    """
    _validate_runs(runs)
    idx = _index(catalog)
    choices: dict[str, MediaChoice] = {}
    stretched: list[tuple[str, float, float]] = []
    for members in components(runs):
        fibre = _fibre_demand(runs, members)
        comp = _shape(runs, members, fibre)
        longest = max(members, key=lambda i: (runs[i].length_m, -i))
        length = runs[longest].length_m
        plans = _plans(idx, comp)
        best = _cheapest(plans, length)
        if best is None:
            run = runs[longest]
            what = _describe(
                run.speed_gbps,
                run.a.form_factor,
                run.a.ports_per_cage,
                run.b.form_factor,
                run.b.ports_per_cage,
            )
            if len(members) > 1 and plans:
                what += f" with the {len(members) - 1} other link(s) on its cages"
            raise InfeasibleError(
                f"link {run.link_id} ({run.a.device} to {run.b.device}): "
                + _unreachable(plans, length, what + (f", {fibre} fibre" if fibre else ""))
            )
        for i, choice in zip(members, _per_run(comp, best), strict=True):
            choices[runs[i].link_id] = choice
        shortest = min(runs[i].length_m for i in members)
        if len(members) > 1:
            own = best.cables[0][0].stocked(shortest)
            if own is not None and own < best.cables[0][1]:
                stretched.append((runs[longest].link_id, shortest, length))
    notes = []
    if stretched:
        link, lo, hi = stretched[0]
        notes.append(
            f"{len(stretched)} group(s) of links sharing twin-port cages were cut to their "
            f"longest member so both fibres of a module match (e.g. {lo:.1f} m and {hi:.1f} m "
            f"at link {link})"
        )
    return Assignment(choices=choices, notes=tuple(notes))


# -- from a Design ----------------------------------------------------------------------------


def link_ends(design: Design, catalog: Catalog) -> dict[str, tuple[CageEnd, CageEnd]]:
    """The cage ends of every link: nodes from the node shape, switches from their model."""
    switches = design.switch_by_id()
    shape = design.shape
    ff_of: dict[str, str] = {}
    out = {}
    for link in design.links:
        ends = []
        for device, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
            sw = switches.get(device)
            if sw is None:
                ff, ppc = shape.form_factor, shape.ports_per_cage
            else:
                if sw.model not in ff_of:
                    ff_of[sw.model] = catalog.switch(sw.model).form_factor
                ff, ppc = ff_of[sw.model], sw.ports_per_cage
            ends.append(CageEnd(device, port // ppc, port % ppc, ff, ppc))
        out[link.id] = (ends[0], ends[1])
    return out


def design_runs(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float] | None = None,
    fibre: Mapping[str, str] | None = None,
) -> list[LinkRun]:
    """A LinkRun per design link; ``lengths_m`` by link id (routed lengths), 0 when None."""
    ends = link_ends(design, catalog)
    runs = []
    for link in design.links:
        if lengths_m is None:
            length = 0.0
        elif link.id in lengths_m:
            length = float(lengths_m[link.id])
        else:
            raise InfeasibleError(f"link {link.id} has no routed length; route every link first")
        a, b = ends[link.id]
        runs.append(LinkRun(link.id, link.rate_gbps, length, a, b, (fibre or {}).get(link.id, "")))
    return runs


def assign_design(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float],
    fibre: Mapping[str, str] | None = None,
) -> Assignment:
    """Media for every link of ``design`` at its routed length (see ``assign_cages``)."""
    return assign_cages(catalog, design_runs(design, catalog, lengths_m, fibre))


class DesignCoster:
    """Prices links of a design by length for a placement objective.

    ``key(link)`` is the shape of the link's component (links in alike components price
    alike); ``cost(key, length_m, link)`` is the component's cheapest cost at that length
    divided over its links (``objective="power"``: the power of that cheapest media), or
    UNREACHABLE_USD when nothing in the catalog reaches.
    """

    def __init__(self, design: Design, catalog: Catalog, objective: str = "cost") -> None:
        if objective not in ("cost", "power"):
            raise ValueError(f"objective {objective!r} is not cost or power")
        self._power = objective == "power"
        self._idx = _index(catalog)
        runs = design_runs(design, catalog)
        self._key: dict[str, _Comp] = {}
        for members in components(runs):
            comp = _shape(runs, members, "")
            for i in members:
                self._key[runs[i].link_id] = comp
        self._memo: dict[tuple[_Comp, float], float] = {}

    def key(self, link: Link) -> Hashable:
        return self._key[link.id]

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        assert isinstance(key, _Comp)
        memo = (key, round(length_m, 6))
        hit = self._memo.get(memo)
        if hit is None:
            best = _cheapest(_plans(self._idx, key), length_m)
            if best is None:
                hit = UNREACHABLE_USD
            else:
                hit = (best.power_w if self._power else best.cost_usd) / len(key.runs)
            self._memo[memo] = hit
        return hit


# -- checking a finished design ---------------------------------------------------------------


def check_cables(design: Design, catalog: Catalog) -> list[str]:
    """Every cable rule re-derived from Design.cables, as sentences (empty: sound)."""
    out: list[str] = []
    if not design.cables:
        return out
    ends = link_ends(design, catalog)
    links = {lk.id: lk for lk in design.links}
    module_of: dict[tuple[str, int], tuple[str, str]] = {}
    for cab in design.cables:
        if cab.link_id not in links:
            out.append(f"cable {cab.id} belongs to unknown link {cab.link_id}")
            continue
        part = catalog.cables.get(cab.media)
        if part is None:
            out.append(f"cable {cab.id} uses {cab.media!r}, which is not in the catalog")
            continue
        if part.stocked(cab.length_m) is None:
            out.append(
                f"cable {cab.id} ({cab.media}) is {cab.length_m:g} m, beyond its longest "
                f"stocked length {part.lengths_m[-1]:g} m"
            )
        a, b = ends[cab.link_id]
        names = (cab.transceiver_a, cab.transceiver_b)
        if part.kind != "fibre":
            if any(names):
                out.append(f"cable {cab.id} is a {part.kind} with built-in ends but lists optics")
            continue
        mods = []
        for end, name in zip((a, b), names, strict=True):
            t = catalog.transceivers.get(name)
            if t is None:
                out.append(f"cable {cab.id}: fibre needs a transceiver at {end.name()}")
                continue
            mods.append(t)
            if t.ports != end.ports_per_cage or not _accepts(end.form_factor, t.form_factor):
                out.append(
                    f"cable {cab.id}: {t.id} ({t.ports} port(s), {t.form_factor}) does not fit "
                    f"{end.name()} ({end.ports_per_cage} port(s), {end.form_factor})"
                )
            held = module_of.setdefault(end.key, (t.id, cab.link_id))
            if held[0] != t.id:
                other = catalog.transceivers.get(held[0])
                kinds = (
                    f" ({other.fibre} and {t.fibre})" if other and other.fibre != t.fibre else ""
                )
                out.append(
                    f"{end.name()} holds {held[0]} for link {held[1]} and {t.id} for link "
                    f"{cab.link_id}{kinds}; one module serves the whole cage, so its links "
                    "need the same optic and fibre type"
                )
            if t.fibre != part.fibre:
                out.append(f"cable {cab.id}: {part.fibre} cord on the {t.fibre} module {t.id}")
            elif cab.length_m > t.reach_m.value + LENGTH_EPS_M:
                out.append(
                    f"cable {cab.id}: {cab.length_m:g} m is beyond the {t.reach_m.value:g} m "
                    f"reach of {t.id}"
                )
        if len(mods) == 2 and mods[0].interface != mods[1].interface:
            out.append(
                f"cable {cab.id}: {mods[0].id} ({mods[0].interface}) and {mods[1].id} "
                f"({mods[1].interface}) do not talk to each other"
            )
    return out
