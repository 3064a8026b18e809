"""Switch placement with CP-SAT: which network rack (and U) each switch goes in, at least cable cost."""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from ortools.sat.python import cp_model

from railplan.catalog import Catalog
from railplan.design import Design, Link, Switch
from railplan.errors import InfeasibleError, SpecError
from railplan.physical.costers import LinkCoster
from railplan.physical.floor import (
    End,
    Floor,
    in_compute_rack,
    node_slots,
    switch_power_w,
    switch_units,
    tor_slots,
)
from railplan.spec import PlacementRulesSpec

#: joint model size (pair-of-group x rack-pair products) above which placement goes role by role
JOINT_LIMIT = 40_000
#: stop the role-by-role passes when a pass gains less than this share of the cost
PASS_TOLERANCE = 1e-4
MAX_PASSES = 4
#: smallest CP-SAT budget (deterministic seconds) one role of one pass gets
MIN_STAGE_S = 0.2
#: share of the time limit the role-by-role start gets when a joint model follows
ROLE_SHARE = 0.3
CENTS = 100
#: catalog lengths and reaches lie on this grid (metres): lengths are rounded up to it before
#: pricing, which changes no price and lets one lookup serve many lengths
LENGTH_GRID_M = 0.05
#: cost entry of a rack a group may not use
UNUSED = 2**40

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Group:
    """Like switches placed together in one rack (members of one SU, pod or tier block)."""

    id: str
    role: str
    tier: int
    su: int
    members: tuple[str, ...]
    units: int
    power_w: float
    #: class id: groups of one class are interchangeable (used to break symmetry)
    klass: str


@dataclass(frozen=True)
class PlacementReport:
    """What the solver did: estimated cable cost, proven bound and gap, status and effort."""

    method: str
    status: str
    objective_usd: float
    best_bound_usd: float
    gap: float
    bound_kind: str
    naive_objective_usd: float
    wall_time_s: float
    groups: int
    racks: int
    passes: int
    time_limit_s: float
    random_seed: int
    num_workers: int
    notes: tuple[str, ...] = ()
    #: filled in after cabling: the media actually chosen for every link (per-link shares)
    cable_cost_usd: float = float("nan")
    cable_power_w: float = float("nan")
    cables: int = 0

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class SwitchPlacement:
    """Rack and lowest U of every switch, with the report of how it was found."""

    rack: dict[str, str]
    u: dict[str, int]
    report: PlacementReport


# -- groups ---------------------------------------------------------------------------------


def usable_units(floor: Floor) -> int:
    return floor.layout.rack_height_u - floor.layout.network_rack_reserved_u


def make_groups(design: Design, floor: Floor, catalog: Catalog, size: int) -> list[Group]:
    """Aggregate switches into blocks: leaves per (plane, SU), spines per (plane, pod), cores
    per plane; each class is cut into chunks of at most ``size`` that fit one rack."""
    classes: dict[tuple[int, int, str, int, int, str], list[Switch]] = defaultdict(list)
    for sw in design.switches:
        if in_compute_rack(sw):
            continue
        su = sw.su if sw.tier == 1 else -1
        classes[(sw.tier, sw.plane, sw.role, su, sw.pod, sw.group)].append(sw)
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    groups: list[Group] = []
    for key in sorted(classes):
        tier, plane, role, su, pod, tag = key
        members = sorted(classes[key], key=lambda s: s.id)
        unit_u = max(switch_units(s, catalog) for s in members)
        unit_w = max(switch_power_w(s, catalog, floor.layout.switch_power) for s in members)
        chunk = max(1, min(size, usable // unit_u, int(budget // unit_w)))
        klass = f"{role}.p{plane}" + (f".su{su + 1}" if su >= 0 else "")
        klass += (f".pod{pod + 1}" if pod >= 0 else "") + (f".{tag}" if tag else "")
        for c in range(0, len(members), chunk):
            part = members[c : c + chunk]
            groups.append(
                Group(
                    id=f"{klass}#{c // chunk + 1}",
                    role=role,
                    tier=tier,
                    su=su,
                    members=tuple(s.id for s in part),
                    units=sum(switch_units(s, catalog) for s in part),
                    power_w=sum(
                        switch_power_w(s, catalog, floor.layout.switch_power) for s in part
                    ),
                    klass=klass,
                )
            )
    return groups


# -- cost tables ----------------------------------------------------------------------------


@dataclass
class CostTables:
    """Cable cost (integer cents) of every group in every network rack, and of group pairs.

    ``fixed[g][r]``: the group's links to nodes with the group in rack r. ``pairs[(a, b)][ra,
    rb]``: every link between groups a and b with a in rack ra and b in rack rb. Pairs with
    the same bundle of links share one matrix.
    """

    racks: list[str]
    candidates: dict[str, list[int]]
    fixed: dict[str, np.ndarray]
    pairs: dict[tuple[str, str], np.ndarray]


def estimated_height_m(floor: Floor, groups: Sequence[Group]) -> float:
    """Port height assumed for a switch before its U is known: racks are stacked from the top,
    so the middle of an average rack's stack."""
    usable = usable_units(floor)
    fill = sum(g.units for g in groups) / max(1, len(floor.network_racks))
    return floor.port_height_m(max(1, round(usable - min(usable, fill) / 2)), 1)


def cost_tables(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    groups: Sequence[Group],
    coster: LinkCoster,
    candidates: dict[str, list[int]],
) -> CostTables:
    racks = list(floor.network_racks)
    n = len(racks)
    group_of = {m: g.id for g in groups for m in g.members}
    node_end = {
        node: End(rack, floor.port_height_m(u, floor.layout.node_height_u))
        for node, (rack, u) in node_slots(design, floor).items()
    }
    switches = design.switch_by_id()
    for sw_id, (rack, u) in tor_slots(design, floor, catalog).items():
        node_end[sw_id] = End(rack, floor.port_height_m(u, switch_units(switches[sw_id], catalog)))
    h_sw = estimated_height_m(floor, groups)
    node_links: dict[str, Counter[tuple[End, Hashable]]] = defaultdict(Counter)
    sample: dict[Hashable, Link] = {}
    pair_links: dict[tuple[str, str], Counter[Hashable]] = defaultdict(Counter)
    for link in design.links:
        key = coster.key(link)
        sample.setdefault(key, link)
        ga, gb = group_of.get(link.a_device), group_of.get(link.b_device)
        if ga is None and gb is None:
            continue
        if ga is None and gb is not None:
            node_links[gb][(node_end[link.a_device], key)] += 1
        elif gb is None and ga is not None:
            node_links[ga][(node_end[link.b_device], key)] += 1
        elif ga is not None and gb is not None:
            pair = (ga, gb) if ga <= gb else (gb, ga)
            pair_links[pair][key] += 1
    memo: dict[tuple[Hashable, float], int] = {}

    def prices(key: Hashable, lengths: np.ndarray) -> np.ndarray:
        """Cost in cents of one link of ``key`` at each length (priced once per grid step)."""
        grid = np.round(np.ceil(lengths / LENGTH_GRID_M - 1e-9) * LENGTH_GRID_M, 3)
        values, inverse = np.unique(grid, return_inverse=True)
        out = np.empty(len(values), dtype=np.int64)
        for i, q in enumerate(values.tolist()):
            hit = memo.get((key, q))
            if hit is None:
                hit = round(coster.cost(key, q, sample[key]) * CENTS)
                memo[(key, q)] = hit
            out[i] = hit
        return out[inverse.reshape(lengths.shape)]

    tray = floor.layout.trays.height_m
    lift = (tray - h_sw) + floor.layout.slack_m
    dist_of: dict[str, np.ndarray] = {}
    fixed: dict[str, np.ndarray] = {}
    for g in groups:
        row = np.zeros(n, dtype=np.int64)
        for (end, key), c in sorted(
            node_links[g.id].items(), key=lambda kv: (kv[0][0].rack, kv[0][0].height_m)
        ):
            if end.rack not in dist_of:
                dist_of[end.rack] = np.array(floor.tray_distances_m(end.rack, racks))
            lengths = (tray - end.height_m) + lift + dist_of[end.rack]
            row += c * prices(key, lengths)
        mask = np.full(n, True)
        mask[candidates[g.id]] = False
        row[mask] = UNUSED
        fixed[g.id] = row
    lengths = np.zeros((n, n))
    for i in range(n):
        lengths[i, :] = floor.tray_distances_m(racks[i], racks)
    lengths += 2 * (tray - h_sw) + floor.layout.slack_m
    np.fill_diagonal(lengths, floor.layout.slack_m)  # same rack: both at the assumed height
    per_key: dict[Hashable, np.ndarray] = {}
    bundles: dict[tuple[tuple[int, str], ...], np.ndarray] = {}
    pairs: dict[tuple[str, str], np.ndarray] = {}
    for pair, counter in pair_links.items():
        items = sorted(counter.items(), key=lambda kv: repr(kv[0]))
        sig = tuple((c, repr(k)) for k, c in items)
        matrix = bundles.get(sig)
        if matrix is None:
            matrix = np.zeros((n, n), dtype=np.int64)
            for key, c in items:
                if key not in per_key:
                    per_key[key] = prices(key, lengths)
                matrix += c * per_key[key]
            bundles[sig] = matrix
        pairs[pair] = matrix
    return CostTables(racks, candidates, fixed, pairs)


# -- candidate racks and rules --------------------------------------------------------------


def candidate_racks(
    design: Design, floor: Floor, groups: Sequence[Group], rules: PlacementRulesSpec
) -> dict[str, list[int]]:
    """Racks each group may use: every network rack unless a rule narrows it."""
    racks = list(floor.network_racks)
    index = {r: i for i, r in enumerate(racks)}
    every = list(range(len(racks)))
    out: dict[str, list[int]] = {}
    row_racks = floor.network_row_racks()
    if rules.spines_in_network_row and not row_racks:
        raise SpecError(
            "layout.placement.spines_in_network_row: the layout has no network row; set "
            "layout.network_racks: network-row or drop the rule"
        )
    su_home = _su_home_racks(design, floor) if rules.leaves_in_su_rack else {}
    for g in groups:
        allowed = every
        if g.tier >= 2 and rules.spines_in_network_row:
            allowed = [index[r] for r in row_racks]
        if g.tier == 1 and rules.leaves_in_su_rack and g.su >= 0:
            allowed = [index[r] for r in su_home[g.su]]
        out[g.id] = allowed
    return out


def _su_home_racks(design: Design, floor: Floor) -> dict[int, tuple[str, ...]]:
    """The SU's own network racks (in-row), else the network rack nearest its compute racks."""
    homes: dict[int, tuple[str, ...]] = {}
    racks_of_su: dict[int, set[str]] = defaultdict(set)
    for node in design.nodes:
        racks_of_su[node.su].add(floor.compute_racks[node.rack])
    for su, members in sorted(racks_of_su.items()):
        if su in floor.su_racks:
            homes[su] = floor.su_racks[su]
            continue
        best = min(
            floor.network_racks,
            key=lambda r: (sum(floor.tray_distance_m(r, c) for c in sorted(members)), r),
        )
        homes[su] = (best,)
    return homes


# -- the CP-SAT model -----------------------------------------------------------------------


@dataclass
class _Solved:
    assign: dict[str, int]
    objective: int
    bound: int
    status: str
    deterministic_s: float


def _solve(
    groups: Sequence[Group],
    free: set[str],
    fixed_at: dict[str, int],
    tables: CostTables,
    floor: Floor,
    *,
    time_limit_s: float,
    rules: PlacementRulesSpec,
    hint: dict[str, int] | None = None,
) -> _Solved:
    """One CP-SAT model: place the ``free`` groups; groups in ``fixed_at`` stay where they are.

    Pairs of free groups are linearised with one boolean per rack pair (row and column sums
    equal the two placements); a pair with one fixed end adds to the free group's rack cost.
    """
    model = cp_model.CpModel()
    n_racks = len(tables.racks)
    by_id = {g.id: g for g in groups}
    x: dict[str, dict[int, cp_model.IntVar]] = {}
    for g in groups:
        if g.id in free:
            x[g.id] = {r: model.new_bool_var(f"x[{g.id},{r}]") for r in tables.candidates[g.id]}
            model.add_exactly_one(x[g.id].values())
    _capacity(model, groups, x, fixed_at, floor, n_racks)
    _symmetry(model, groups, x)
    terms: list[tuple[cp_model.IntVar, int]] = []
    constant = 0
    linear = {gid: tables.fixed[gid].copy() for gid in x}
    for gid, r in fixed_at.items():
        constant += int(tables.fixed[gid][r])
    for (ga, gb), matrix in tables.pairs.items():
        a_free, b_free = ga in x, gb in x
        if not a_free and not b_free:
            if ga in fixed_at and gb in fixed_at:
                constant += int(matrix[fixed_at[ga], fixed_at[gb]])
            continue
        if a_free != b_free:
            other = gb if a_free else ga
            if other in fixed_at:
                ro = fixed_at[other]
                if a_free:
                    linear[ga] += matrix[:, ro]
                else:
                    linear[gb] += matrix[ro, :]
            continue
        y: dict[tuple[int, int], cp_model.IntVar] = {}
        for ra in x[ga]:
            for rb in x[gb]:
                var = model.new_bool_var(f"y[{ga},{gb},{ra},{rb}]")
                y[(ra, rb)] = var
                terms.append((var, int(matrix[ra, rb])))
        for ra, var in x[ga].items():
            model.add(sum(y[(ra, rb)] for rb in x[gb]) == var)
        for rb, var in x[gb].items():
            model.add(sum(y[(ra, rb)] for ra in x[ga]) == var)
    for gid, row in linear.items():
        terms += [(var, int(row[r])) for r, var in x[gid].items()]
    model.minimize(sum(c * v for v, c in terms if c) + constant)
    if hint:
        for gid, r in hint.items():
            if gid in x:
                for rr, var in x[gid].items():
                    model.add_hint(var, rr == r)
    solver = cp_model.CpSolver()
    p = solver.parameters
    p.catch_sigint_signal = False  # keep the caller's Ctrl-C handling (the CLI's signal thread)
    p.random_seed = rules.random_seed
    p.num_workers = rules.num_workers
    # several workers are deterministic only when interleaved (one worker always is)
    p.interleave_search = rules.num_workers > 1
    p.max_deterministic_time = time_limit_s
    # the wall clock is only a safety net: hitting it would make the answer timing-dependent
    p.max_time_in_seconds = time_limit_s * 20 + 30
    status = solver.solve(model)
    name = solver.status_name(status)
    if status == cp_model.INFEASIBLE:
        raise InfeasibleError(_infeasible_reason(groups, free, tables, floor, rules, name, by_id))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return _Solved(
            {}, -1, math.floor(solver.best_objective_bound + 1e-6), name, solver.deterministic_time
        )
    assign = {gid: next(r for r, v in row.items() if solver.value(v)) for gid, row in x.items()}
    return _Solved(
        assign=assign,
        objective=round(solver.objective_value),
        bound=math.floor(solver.best_objective_bound + 1e-6),
        status=name,
        deterministic_s=solver.deterministic_time,
    )


def _capacity(
    model: cp_model.CpModel,
    groups: Sequence[Group],
    x: dict[str, dict[int, cp_model.IntVar]],
    fixed_at: dict[str, int],
    floor: Floor,
    n_racks: int,
) -> None:
    """Rack units and power: what the free groups add to a rack fits beside the fixed ones."""
    usable = usable_units(floor)
    budget = math.floor(floor.layout.network_rack_power_w)
    used_u = [0] * n_racks
    used_w = [0] * n_racks
    by_id = {g.id: g for g in groups}
    for gid, r in fixed_at.items():
        used_u[r] += by_id[gid].units
        used_w[r] += math.ceil(by_id[gid].power_w)
    for r in range(n_racks):
        here = [(by_id[gid], row[r]) for gid, row in x.items() if r in row]
        if not here:
            continue
        model.add(sum(g.units * v for g, v in here) <= usable - used_u[r])
        model.add(sum(math.ceil(g.power_w) * v for g, v in here) <= budget - used_w[r])


def _symmetry(
    model: cp_model.CpModel, groups: Sequence[Group], x: dict[str, dict[int, cp_model.IntVar]]
) -> None:
    """Interchangeable groups of one class take racks in non-decreasing order."""
    by_class: dict[str, list[Group]] = defaultdict(list)
    for g in groups:
        if g.id in x:
            by_class[g.klass].append(g)
    for members in by_class.values():
        for a, b in itertools.pairwise(members):
            if a.units == b.units and a.power_w == b.power_w and set(x[a.id]) == set(x[b.id]):
                model.add(
                    sum(r * v for r, v in x[a.id].items()) <= sum(r * v for r, v in x[b.id].items())
                )


def _infeasible_reason(
    groups: Sequence[Group],
    free: set[str],
    tables: CostTables,
    floor: Floor,
    rules: PlacementRulesSpec,
    status: str,
    by_id: dict[str, Group],
) -> str:
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    every = len(tables.racks)
    sharing: dict[tuple[int, ...], list[Group]] = defaultdict(list)
    for gid in sorted(free):
        cands = tuple(tables.candidates[gid])
        if len(cands) < every:
            sharing[cands].append(by_id[gid])
    for cands, members in sharing.items():
        need_u = sum(g.units for g in members)
        need_w = sum(g.power_w for g in members)
        if need_u > usable * len(cands) or need_w > budget * len(cands) + 1e-9:
            rule = "leaves_in_su_rack" if members[0].tier == 1 else "spines_in_network_row"
            names = sorted({g.klass.split("#")[0] for g in members})
            return (
                f"layout.placement.{rule}: {', '.join(names)} need {need_u}U and {need_w:g} W, "
                f"more than rack(s) {', '.join(tables.racks[r] for r in cands)} hold "
                f"({usable}U and {budget:g} W each); add network racks "
                "(layout.network_rack_count), raise layout.network_rack_power_w or drop the rule"
            )
    extra = ""
    if rules.leaves_in_su_rack or rules.spines_in_network_row:
        extra = " or relax layout.placement rules"
    return (
        f"layout.network_rack_count: the switches do not fit the {len(tables.racks)} network "
        f"racks by rack units and power (solver status {status}); add network racks, raise "
        f"layout.network_rack_power_w{extra}"
    )


# -- drivers --------------------------------------------------------------------------------


def relaxation_bound(groups: Sequence[Group], tables: CostTables, floor: Floor) -> int:
    """A valid lower bound: each group's links to nodes at its cheapest rack, and each pair of
    groups at its cheapest pair of distinct racks, less what sharing a rack could save.

    Groups sharing a rack: a rack holds at most ``k`` groups (by units and power), so each
    group shares a rack with at most ``k - 1`` partners; summing every group's ``k - 1``
    largest savings counts each shared pair from both ends, so half of it bounds what all
    shared racks together can save.
    """
    total = sum(int(tables.fixed[g.id][tables.candidates[g.id]].min()) for g in groups)
    k = _max_groups_per_rack(groups, floor)
    savings: dict[str, list[int]] = defaultdict(list)
    for (ga, gb), matrix in tables.pairs.items():
        ca, cb = tables.candidates[ga], tables.candidates[gb]
        sub = matrix[np.ix_(ca, cb)]
        same = [int(matrix[r, r]) for r in set(ca) & set(cb)]
        apart = sub.astype(float)
        for i, r in enumerate(ca):
            if r in cb:
                apart[i, cb.index(r)] = np.inf
        best_apart = float(apart.min())
        if not same or min(same) >= best_apart:
            total += int(sub.min())
            continue
        if not math.isfinite(best_apart):
            total += min(same)
            continue
        total += int(best_apart)
        saving = int(best_apart) - min(same)
        savings[ga].append(saving)
        savings[gb].append(saving)
    shared = sum(sum(sorted(v, reverse=True)[: max(0, k - 1)]) for v in savings.values())
    return total - shared // 2


def _max_groups_per_rack(groups: Sequence[Group], floor: Floor) -> int:
    """Most groups any rack can hold: the smallest ones first, by units and power."""
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    count, used_u, used_w = 0, 0, 0.0
    for g in sorted(groups, key=lambda g: (g.units, g.power_w)):
        if used_u + g.units > usable or used_w + g.power_w > budget + 1e-9:
            break
        count, used_u, used_w = count + 1, used_u + g.units, used_w + g.power_w
    return max(1, count)


def placement_cost(groups: Sequence[Group], tables: CostTables, at: dict[str, int]) -> int:
    """Estimated cable cost (cents) of a complete group placement, from the tables."""
    total = sum(int(tables.fixed[g.id][at[g.id]]) for g in groups)
    for (ga, gb), matrix in tables.pairs.items():
        total += int(matrix[at[ga], at[gb]])
    return total


def joint_size(groups: Sequence[Group], tables: CostTables) -> int:
    return sum(len(tables.candidates[a]) * len(tables.candidates[b]) for a, b in tables.pairs)


def place_switches(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    coster: LinkCoster,
    rules: PlacementRulesSpec,
    *,
    time_limit_s: float | None = None,
    progress: Progress | None = None,
) -> SwitchPlacement:
    """Place every switch in a network rack minimising the estimated total cable cost.

    Switches are placed in blocks (``make_groups``). First role by role (leaves, then spines,
    then cores, repeated while it pays), each role optimal given the others; then, when the
    joint model is small enough (``JOINT_LIMIT``), CP-SAT solves all roles together from that
    start and proves its bound. The gap is against the better of CP-SAT's bound and
    ``relaxation_bound``. Deterministic: budgets are CP-SAT deterministic time, with a fixed
    seed and worker count. If blocks cannot be packed, smaller blocks are tried before failing.
    """
    size = rules.group_size
    while True:
        try:
            return _place(design, floor, catalog, coster, rules, size, time_limit_s, progress)
        except InfeasibleError:
            if size == 1:
                raise
            size = max(1, size // 2)  # smaller blocks pack racks tighter: never a false "no"


def _place(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    coster: LinkCoster,
    rules: PlacementRulesSpec,
    group_size: int,
    time_limit_s: float | None,
    progress: Progress | None,
) -> SwitchPlacement:
    start = time.perf_counter()
    limit = time_limit_s if time_limit_s is not None else rules.time_limit_s
    say = progress or (lambda _msg: None)
    groups = make_groups(design, floor, catalog, group_size)
    if not groups:
        return _result(design, floor, catalog, groups, {}, _empty_report(floor, rules, limit))
    cands = candidate_racks(design, floor, groups, rules)
    tables = cost_tables(design, floor, catalog, groups, coster, cands)
    naive_at = naive_groups(groups, floor)
    naive = placement_cost(groups, tables, naive_at) if naive_at else -1
    size = joint_size(groups, tables)
    say(f"placement: {len(groups)} switch groups, {len(tables.racks)} racks, joint size {size}")
    notes: list[str] = []
    joint = size <= JOINT_LIMIT
    # role by role first: quick and good; then, when the model is small enough, the joint
    # model starts from that answer and improves it or proves how far it is from optimal
    role_limit = limit * ROLE_SHARE if joint else limit
    at, passes, status = _by_role(groups, tables, floor, rules, role_limit, say)
    objective = placement_cost(groups, tables, at)
    bound = relaxation_bound(groups, tables, floor)
    method, bound_kind = "cp-sat by role", "relaxation"
    if joint:
        solved = _solve(
            groups,
            {g.id for g in groups},
            {},
            tables,
            floor,
            time_limit_s=limit - role_limit,
            rules=rules,
            hint=at,
        )
        method = "cp-sat joint"
        if solved.bound > bound:
            bound, bound_kind = solved.bound, "solver"
        if solved.assign and solved.objective <= objective:
            at, objective, status = solved.assign, solved.objective, solved.status
        elif solved.status == "OPTIMAL":
            status = "OPTIMAL"
        else:
            status = "FEASIBLE"
            notes.append("the joint model found nothing better than the role-by-role placement")
    else:
        notes.append(
            f"joint model too large ({size} rack-pair terms); solved role by role in "
            f"{passes} pass(es), each role optimal or time-limited given the others"
        )
    gap = (objective - bound) / objective if objective > 0 else 0.0
    report = PlacementReport(
        method=method,
        status=status,
        objective_usd=objective / CENTS,
        best_bound_usd=bound / CENTS,
        gap=round(max(0.0, gap), 6),
        bound_kind=bound_kind,
        naive_objective_usd=naive / CENTS if naive >= 0 else float("nan"),
        wall_time_s=round(time.perf_counter() - start, 3),
        groups=len(groups),
        racks=len(tables.racks),
        passes=passes,
        time_limit_s=limit,
        random_seed=rules.random_seed,
        num_workers=rules.num_workers,
        notes=tuple(notes),
    )
    say(f"placement: {status}, estimated ${objective / CENTS:,.0f}, gap {gap:.2%}")
    return _result(design, floor, catalog, groups, at, report)


def _by_role(
    groups: Sequence[Group],
    tables: CostTables,
    floor: Floor,
    rules: PlacementRulesSpec,
    limit: float,
    say: Progress,
) -> tuple[dict[str, int], int, str]:
    """Block coordinate descent: each role re-placed optimally given every other role.

    Pass 1 places the roles bottom-up (roles not yet placed take no room and cost nothing);
    later passes start from the incumbent, so the cost never rises.  Budgets are counted in
    CP-SAT's deterministic time, never the wall clock, so a spec gives the same answer every run.
    """
    roles = sorted({(g.tier, g.role) for g in groups})
    at: dict[str, int] = {}
    statuses: list[str] = []
    best = -1
    passes = 0
    steps_total = len(roles) * MAX_PASSES
    spent = 0.0
    step = 0
    for passes in range(1, MAX_PASSES + 1):
        for tier, role in roles:
            free = {g.id for g in groups if (g.tier, g.role) == (tier, role)}
            fixed_at = {gid: r for gid, r in at.items() if gid not in free}
            share = max(MIN_STAGE_S, (limit - spent) / max(1, steps_total - step))
            step += 1
            before = {gid: at[gid] for gid in free if gid in at}
            solved = _solve(
                groups,
                free,
                fixed_at,
                tables,
                floor,
                time_limit_s=share,
                rules=rules,
                hint=before or None,
            )
            spent += solved.deterministic_s
            statuses.append(solved.status)
            if not solved.assign:
                solved.assign = before or _greedy(groups, free, fixed_at, tables, floor, rules)
            elif before:
                old = placement_cost(groups, tables, at)
                trial = {**at, **solved.assign}
                if placement_cost(groups, tables, trial) > old:
                    solved.assign = before
            at.update(solved.assign)
            say(f"placement: pass {passes} {role}: {solved.status}")
        cost = placement_cost(groups, tables, at)
        improved = best < 0 or best - cost > PASS_TOLERANCE * best
        best = cost if best < 0 else min(best, cost)
        if not improved or spent >= limit:
            break
    status = "OPTIMAL per role" if all(s == "OPTIMAL" for s in statuses) else "FEASIBLE"
    return at, passes, status


def _greedy(
    groups: Sequence[Group],
    free: set[str],
    fixed_at: dict[str, int],
    tables: CostTables,
    floor: Floor,
    rules: PlacementRulesSpec,
) -> dict[str, int]:
    """Cheapest rack with room for each free group in turn (used when CP-SAT finds nothing)."""
    by_id = {g.id: g for g in groups}
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    used_u = [0] * len(tables.racks)
    used_w = [0.0] * len(tables.racks)
    for gid, r in fixed_at.items():
        used_u[r] += by_id[gid].units
        used_w[r] += by_id[gid].power_w
    out: dict[str, int] = {}
    for gid in sorted(free):
        g = by_id[gid]
        order = sorted(tables.candidates[gid], key=lambda r: (int(tables.fixed[gid][r]), r))
        for r in order:
            if used_u[r] + g.units <= usable and used_w[r] + g.power_w <= budget + 1e-9:
                used_u[r] += g.units
                used_w[r] += g.power_w
                out[gid] = r
                break
        else:
            raise InfeasibleError(
                _infeasible_reason(groups, free, tables, floor, rules, "UNKNOWN", by_id)
            )
    return out


def naive_groups(groups: Sequence[Group], floor: Floor) -> dict[str, int]:
    """First fit in network-rack order (the first stands at the end of row 1); {} if it fails."""
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    free_u = [usable] * len(floor.network_racks)
    free_w = [budget] * len(floor.network_racks)
    at: dict[str, int] = {}
    for g in groups:
        for r in range(len(free_u)):
            if g.units <= free_u[r] and g.power_w <= free_w[r] + 1e-9:
                free_u[r] -= g.units
                free_w[r] -= g.power_w
                at[g.id] = r
                break
        else:
            return {}
    return at


def naive_placement(design: Design, floor: Floor, catalog: Catalog) -> SwitchPlacement:
    """Every switch, in design order, first fit into the network racks from the row end."""
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    racks = list(floor.network_racks)
    free_u = [usable] * len(racks)
    free_w = [budget] * len(racks)
    singles: list[Group] = []
    at: dict[str, int] = {}
    for sw in design.switches:
        if in_compute_rack(sw):
            continue
        units = switch_units(sw, catalog)
        watts = switch_power_w(sw, catalog, floor.layout.switch_power)
        g = Group(sw.id, sw.role, sw.tier, sw.su, (sw.id,), units, watts, sw.id)
        singles.append(g)
        for r in range(len(racks)):
            if units <= free_u[r] and watts <= free_w[r] + 1e-9:
                free_u[r] -= units
                free_w[r] -= watts
                at[g.id] = r
                break
        else:
            raise InfeasibleError(
                f"layout.network_rack_count: switch {sw.id} does not fit any of the "
                f"{len(racks)} network racks; add network racks"
            )
    report = _empty_report(floor, PlacementRulesSpec(), 0.0, method="naive first fit")
    report = dataclasses.replace(report, status="FIRST FIT", groups=len(singles))
    return _result(design, floor, catalog, singles, at, report)


def _empty_report(
    floor: Floor, rules: PlacementRulesSpec, limit: float, method: str = "none"
) -> PlacementReport:
    return PlacementReport(
        method=method,
        status="NOT SOLVED",
        objective_usd=float("nan"),
        best_bound_usd=float("nan"),
        gap=float("nan"),
        bound_kind="none",
        naive_objective_usd=float("nan"),
        wall_time_s=0.0,
        groups=0,
        racks=len(floor.network_racks),
        passes=0,
        time_limit_s=limit,
        random_seed=rules.random_seed,
        num_workers=rules.num_workers,
    )


def _result(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    groups: Iterable[Group],
    at: dict[str, int],
    report: PlacementReport,
) -> SwitchPlacement:
    """Stack each rack's switches from the top (below the reserved units) in group order."""
    racks = list(floor.network_racks)
    models = {sw.id: sw for sw in design.switches}
    top = usable_units(floor)
    next_top = [top] * len(racks)
    rack_of: dict[str, str] = {}
    u_of: dict[str, int] = {}
    for sid, (rack, u) in tor_slots(design, floor, catalog).items():
        rack_of[sid], u_of[sid] = rack, u
    for g in sorted(groups, key=lambda g: (at[g.id], g.tier, g.id)):
        r = at[g.id]
        for sid in g.members:
            units = switch_units(models[sid], catalog)
            u = next_top[r] - units + 1
            if u < 1:
                raise InfeasibleError(
                    f"layout.network_rack_count: rack {racks[r]} overflows while stacking "
                    f"{sid}; add network racks"
                )
            next_top[r] = u - 1
            rack_of[sid] = racks[r]
            u_of[sid] = u
    return SwitchPlacement(rack=rack_of, u=u_of, report=report)
