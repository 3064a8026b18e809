"""place_switches: groups, cost tables, search, bounds and (when small) the joint CP-SAT model."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.physical.costers import LinkCoster, dearest_usd
from railplan.physical.floor import Floor
from railplan.physical.media import UNREACHABLE_USD
from railplan.solve.placement import cpsat, exhaustive
from railplan.solve.placement.bounds import capacity_bound, relaxation_bound
from railplan.solve.placement.groups import (
    Group,
    candidate_racks,
    make_groups,
    swap_classes,
    usable_units,
)
from railplan.solve.placement.kicks import MAX_KICKS, kick
from railplan.solve.placement.report import (
    PlacementReport,
    SwitchPlacement,
    empty_report,
    infeasible_reason,
    naive_groups,
    stacked,
)
from railplan.solve.placement.search import (
    RoleSolver,
    State,
    alike,
    flow_role,
    improve,
    place_roles,
    remembered_flows,
)
from railplan.solve.placement.tables import CENTS, CostTables, cost_tables, placement_cost
from railplan.spec import PlacementRulesSpec

#: joint model size (pair-of-group x rack-pair products) up to which CP-SAT solves all groups
#: together from the search's answer, to improve it or prove how far it is from optimal
JOINT_LIMIT = 40_000
#: what the kicks may spend, in switch groups x racks: each kick settles the whole model
#: again, about 1 us a group-rack here, so a model of G groups in R racks gets
#: ``KICK_CELLS // (G * R)`` kicks, at most ``kicks.MAX_KICKS``: about a tenth of a second
#: of kicks beyond the models small enough for all 64. Measured (cable estimate, bill):
#: 8,192 GPUs of sn5600 in two planes $297,944 and $116,056 cheaper for 0.11 s; 8,192 of
#: cx732q-n (12 kicks) $24,760 and $48,937; 16,384 of qm9700 (8 kicks) $45,120 and $43,732.
#: Twice as much (2**19) also found $357,000 of bill on 16,384 GPUs of four planes (15
#: kicks, 0.48 s) but left that job as slow as 32,768 GPUs of four planes
KICK_CELLS = 2**17
#: fewer kicks than this are not tried: they cover too few blocks to pay (on 65,536 GPUs, 1
#: to 4 kicks on four fabrics took at most $11,168 off a $693M bill for up to half a second)
MIN_KICKS = 5
#: stop role passes, then passes of moves and swaps, when one gains less than this share
ROLE_TOLERANCE = 1e-4
PASS_TOLERANCE = 1e-4
MAX_PASSES = 12
#: the default CP-SAT budget: deterministic seconds per switch group, within these limits
AUTO_S_PER_GROUP = 0.05
AUTO_MIN_S, AUTO_MAX_S = 0.5, 30.0
#: racks a CP-SAT role model keeps per group (roles of unlike groups only)
ROLE_RACKS = 24

Progress = Callable[[str], None]


def deterministic_budget_s(rules: PlacementRulesSpec, groups: int, given: float | None) -> float:
    """CP-SAT's budget in deterministic seconds: the one given, the spec's, or one that grows
    with the number of switch groups."""
    if given is not None:
        return given
    if rules.deterministic_time_s is not None:
        return rules.deterministic_time_s
    return round(min(AUTO_MAX_S, max(AUTO_MIN_S, AUTO_S_PER_GROUP * groups)), 3)


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

    Switches are placed in blocks (``make_groups``). Each role is placed optimally given the
    others (a min-cost flow; a large role over each block's ``search.KEEP_RACKS`` cheapest
    racks and its own), then groups move into free room and like groups trade racks
    while that lowers the cost, repeated while a pass gains; then, while the answer is not
    within the gap limit, single upper-tier blocks are kicked to other racks and everything
    settled again, as many kicks as the model's size allows (``kick_budget``). The answer's
    gap is against the best valid lower bound (``relaxation_bound``, ``capacity_bound``);
    when that gap exceeds ``rules.relative_gap_limit``, the joint model is small
    (``JOINT_LIMIT``) and a budget is given (``time_limit_s``, in deterministic seconds, else
    the spec's ``deterministic_time_s``), CP-SAT solves all groups together from the answer
    and stops once optimal or within the requested gap. Every step is deterministic. If blocks
    cannot be packed, smaller blocks are tried before failing.
    """
    size = rules.group_size
    while True:
        try:
            return _place(design, floor, catalog, coster, rules, size, time_limit_s, progress)
        except InfeasibleError:
            if size == 1:
                raise
            size = max(1, size // 2)  # smaller blocks pack racks tighter: never a false "no"


@dataclass
class Answer:
    """A placement (rack index per group), its cost and the best bound, in cents."""

    at: np.ndarray
    objective: int
    bound: int
    bound_kind: str
    status: str
    method: str
    passes: int
    notes: list[str]
    #: the search's own placement and its cost when kicks replaced it
    descent: tuple[np.ndarray, int] | None = None


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
    say = progress or (lambda _msg: None)
    groups = make_groups(design, floor, catalog, group_size)
    budget_s = deterministic_budget_s(rules, len(groups), time_limit_s)
    if not groups:
        report = empty_report(floor, rules, budget_s)
        return stacked(design, floor, catalog, groups, np.zeros(0, dtype=np.intp), report)
    tables = cost_tables(
        design, floor, catalog, groups, coster, candidate_racks(design, floor, groups, rules)
    )
    naive_at = naive_groups(groups, floor)
    naive = placement_cost(tables, naive_at) if naive_at is not None else -1
    size = joint_size(tables)
    say(f"placement: {len(groups)} switch groups, {tables.n_racks} racks, joint size {size}")
    room = (usable_units(floor), floor.layout.network_rack_power_w)
    priced_whole = exhaustive.placements(tables) <= exhaustive.EXHAUSTIVE_LIMIT
    # CP-SAT's joint model runs when a budget is asked for (on the call or in the spec)
    asked = time_limit_s is not None or rules.deterministic_time_s is not None
    kicks = 0 if priced_whole else kick_budget(len(groups), tables.n_racks)
    answer = search(groups, tables, room, rules, budget_s, say, max_kicks=kicks)
    if _gap(answer.objective, answer.bound) > rules.relative_gap_limit:
        if priced_whole:
            enumerated(answer, groups, tables, room)
        elif size <= JOINT_LIMIT and asked:
            joint(answer, groups, tables, room, rules, budget_s)
        elif size <= JOINT_LIMIT:
            # measured on 2,048 to 4,096 GPUs of 1 to 8 planes and six switches: from the
            # kicked answer the joint model found nothing cheaper in 0.2 to 14.5 s, so it
            # runs only when a budget is given for it
            answer.notes.append(
                "the gap is against the lower bound; give layout.placement."
                "deterministic_time_s (or --time-limit) to have CP-SAT's joint model try "
                "to close it"
            )
        else:
            answer.notes.append(
                f"joint model too large ({size} rack-pair terms) for CP-SAT; the gap is "
                "against the lower bound"
            )
    dearest = dearest_usd(coster)
    if dearest is not None and naive > len(design.links) * (dearest * CENTS + 1):
        # beyond what every link at its dearest reachable price could cost (a cent more for
        # rounding): some link of first fit must be priced at the unreachable price
        answer.notes.append(
            "first fit would leave links beyond the reach of every catalog part (each counted "
            f"at the ${UNREACHABLE_USD:,.0f} unreachable price in naive_objective_usd, so that "
            "figure is no price): it could not be cabled"
        )
    gap = _gap(answer.objective, answer.bound)
    report = PlacementReport(
        method=answer.method,
        status=answer.status,
        objective_usd=answer.objective / CENTS,
        best_bound_usd=answer.bound / CENTS,
        gap=round(max(0.0, gap), 6),
        bound_kind=answer.bound_kind,
        naive_objective_usd=naive / CENTS if naive >= 0 else float("nan"),
        wall_time_s=round(time.perf_counter() - start, 3),
        groups=len(groups),
        racks=tables.n_racks,
        passes=answer.passes,
        time_limit_s=budget_s,
        random_seed=rules.random_seed,
        num_workers=rules.num_workers,
        notes=tuple(answer.notes),
    )
    say(f"placement: {answer.status}, estimated ${answer.objective / CENTS:,.0f}, gap {gap:.2%}")
    placed = stacked(design, floor, catalog, groups, answer.at, report)
    if answer.descent is None:
        return placed
    at, objective = answer.descent
    own = dataclasses.replace(
        report,
        method="flow and swaps",
        status="OPTIMAL" if objective <= answer.bound else "FEASIBLE",
        objective_usd=objective / CENTS,
        gap=round(max(0.0, _gap(objective, answer.bound)), 6),
    )
    return dataclasses.replace(placed, fallback=stacked(design, floor, catalog, groups, at, own))


def kick_budget(groups: int, racks: int) -> int:
    """Kicks a model of ``groups`` switch groups in ``racks`` racks may take (``KICK_CELLS``,
    ``MIN_KICKS``)."""
    budget = min(MAX_KICKS, KICK_CELLS // max(1, groups * racks))
    return budget if budget >= MIN_KICKS else 0


def joint_size(tables: CostTables) -> int:
    cands = [len(tables.candidates[g]) for g in tables.ids]
    return sum(
        cands[a] * cands[b]
        for a, b in zip(tables.pair_a.tolist(), tables.pair_b.tolist(), strict=True)
    )


def _gap(objective: int, bound: int) -> float:
    """How far above the bound the objective is, as a share of the objective."""
    return (objective - bound) / objective if objective > 0 else 0.0


def search(
    groups: Sequence[Group],
    tables: CostTables,
    room: tuple[int, float],
    rules: PlacementRulesSpec,
    budget_s: float,
    say: Progress,
    max_kicks: int = 0,
) -> Answer:
    """Roles bottom-up, then moves, swaps and role passes while a pass gains; ``room`` is
    what one rack holds (units, watts). The answer carries the best valid lower bound.
    ``max_kicks``: when the answer is not within the gap limit of that bound, up to that many
    kicks of single upper-tier groups to other racks, each settled again (``kicks``)."""
    usable, power = room
    state = State.empty(groups, tables, usable, power)
    classes = np.array(swap_classes(groups, tables.candidates))
    roles = sorted({(g.tier, g.role) for g in groups})
    order = [np.array([i for i, g in enumerate(groups) if (g.tier, g.role) == r]) for r in roles]
    limits = cpsat.Limits(
        max(0.05, budget_s / (2 * len(order))), 0.0, rules.random_seed, rules.num_workers
    )

    # kicks re-solve many roles unchanged: their answers are remembered
    flow = remembered_flows() if max_kicks else flow_role

    def solve_role(st: State, members: np.ndarray, before: np.ndarray) -> np.ndarray | None:
        if alike(st, members):
            return flow(st, members, before)
        racks_of = cpsat.candidate_racks_of(st, members, before, ROLE_RACKS)
        hint = before if (before >= 0).all() else None
        solved = cpsat.solve(st, members, racks_of, classes, limits, hint)
        if (solved is None or solved.assign is None) and hint is None:
            # a model cut to each group's cheapest racks may miss room: try every rack
            racks_of = cpsat.candidate_racks_of(st, members, before, 0)
            solved = cpsat.solve(st, members, racks_of, classes, limits, None)
        return None if solved is None else solved.assign

    if not place_roles(state, order, solve_role) or (state.at < 0).any():
        # the roles placed first took room the later ones needed: start from any packing
        whole = cpsat.Limits(budget_s, 0.0, rules.random_seed, rules.num_workers)
        start = _packing(groups, tables, room, classes, whole)
        if start is None:
            raise InfeasibleError(infeasible_reason(groups, tables, room, rules))
        if isinstance(start, str):
            raise InfeasibleError(
                f"layout.placement.deterministic_time_s: CP-SAT found no way to fit the "
                f"switches in the {tables.n_racks} network racks within {budget_s:g} "
                f"deterministic seconds (status {start}); raise it or add network racks"
            )
        state = State.empty(groups, tables, usable, power)
        for g, r in enumerate(start.tolist()):
            state.move(g, r)
    best, passes = _settle(state, order, classes, solve_role, say)
    bound, kind = _bound(groups, tables, room, best)
    method, notes = "flow and swaps", []
    descent: tuple[np.ndarray, int] | None = None
    if max_kicks and _gap(best, bound) > rules.relative_gap_limit:
        kicked = kick(
            state,
            order,
            [tables.candidates[g] for g in tables.ids],
            solve_role,
            lambda trial: _settle(trial, order, classes, solve_role, None)[0],
            max_kicks=max_kicks,
        )
        method += ", kicks"
        notes.append(
            f"{kicked.kicks} kick(s) of single upper-tier groups, {kicked.gained} kept "
            f"(${(best - kicked.cost) / CENTS:,.0f} less)"
        )
        if kicked.cost < best:
            descent = (state.at.copy(), best)
            state, best = kicked.state, kicked.cost
            tighter = _bound(groups, tables, room, best)
            if tighter[0] > bound:
                bound, kind = tighter
    status = "OPTIMAL" if best <= bound else "FEASIBLE"
    return Answer(
        state.at.copy(), best, min(bound, best), kind, status, method, passes, notes, descent
    )


def _bound(
    groups: Sequence[Group], tables: CostTables, room: tuple[int, float], best: int
) -> tuple[int, str]:
    """The best valid lower bound and its kind: the relaxation's, or the capacity bound's
    (which steps towards ``best``) when higher."""
    relaxed = relaxation_bound(groups, tables, *room)
    lagrange = capacity_bound(groups, tables, *room, best)
    return (lagrange, "capacity") if lagrange > relaxed else (relaxed, "relaxation")


def _settle(
    state: State,
    order: Sequence[np.ndarray],
    classes: np.ndarray,
    solve_role: RoleSolver,
    say: Progress | None,
) -> tuple[int, int]:
    """Role by role while it gains, then moves and swaps between role passes; the cost and
    the passes taken (the first, placing the roles, counted)."""
    best, passes = state.cost(), 1
    for tolerance, step in ((ROLE_TOLERANCE, None), (PASS_TOLERANCE, classes)):
        for _ in range(MAX_PASSES):
            passes += 1
            if step is not None:
                improve(state, step)
            place_roles(state, order, solve_role)
            cost = state.cost()
            if say is not None:
                say(f"placement: pass {passes}: ${cost / CENTS:,.0f}")
            gained, best = best - cost, min(best, cost)
            if gained <= tolerance * best:
                break
    return best, passes


def _packing(
    groups: Sequence[Group],
    tables: CostTables,
    room: tuple[int, float],
    classes: np.ndarray,
    limits: cpsat.Limits,
) -> np.ndarray | str | None:
    """Some placement that fits: first fit, largest groups first, else CP-SAT on rack room
    (links to nodes as its objective, pairs left out). None when CP-SAT proves there is none,
    CP-SAT's status when it found none within its budget."""
    usable, power = room
    state = State.empty(groups, tables, usable, power)
    for g in sorted(range(len(groups)), key=lambda i: (-groups[i].units, -groups[i].power_w, i)):
        r = next((r for r in tables.candidates[tables.ids[g]] if state.fits(g, r)), None)
        if r is None:
            break
        state.move(g, r)
    else:
        return state.at.copy()
    state = State.empty(groups, tables, usable, power)
    free = np.arange(len(groups))
    racks_of = [np.array(tables.candidates[g], dtype=np.intp) for g in tables.ids]
    solved = cpsat.solve(state, free, racks_of, classes, limits, pairs=False)
    if solved is None:
        return None
    return solved.status if solved.assign is None else solved.assign


def enumerated(
    answer: Answer, groups: Sequence[Group], tables: CostTables, room: tuple[int, float]
) -> None:
    """Every placement priced (``exhaustive``): the optimum, proven, in place of CP-SAT."""
    units = np.array([g.units for g in groups], dtype=np.int64)
    power_w = np.array([g.power_w for g in groups], dtype=float)
    found = exhaustive.best_placement(tables, units, power_w, room)
    answer.method = "flow and swaps, every placement priced"
    if found is None:  # cannot happen: the search's answer fits
        return
    at, objective = found
    if objective < answer.objective:  # equal: keep the search's answer
        answer.at, answer.objective = at, objective
    answer.bound, answer.bound_kind, answer.status = answer.objective, "exhaustive", "OPTIMAL"


def joint(
    answer: Answer,
    groups: Sequence[Group],
    tables: CostTables,
    room: tuple[int, float],
    rules: PlacementRulesSpec,
    budget_s: float,
) -> None:
    """Every group in one CP-SAT model from the search's answer; keeps the better answer and
    the better bound."""
    state = State.empty(groups, tables, *room)
    free = np.arange(len(groups))
    racks_of = [np.array(tables.candidates[g], dtype=np.intp) for g in tables.ids]
    classes = np.array(swap_classes(groups, tables.candidates))
    limits = cpsat.Limits(budget_s, rules.relative_gap_limit, rules.random_seed, rules.num_workers)
    solved = cpsat.solve(state, free, racks_of, classes, limits, answer.at)
    answer.method += ", cp-sat joint"
    if solved is None:  # cannot happen: the search's answer fits
        return
    if solved.bound > answer.bound:
        answer.bound, answer.bound_kind = min(solved.bound, answer.objective), "solver"
    if solved.assign is not None and solved.objective < answer.objective:
        answer.at, answer.objective = solved.assign, solved.objective
    # proven only by the bound: with a gap limit CP-SAT also says OPTIMAL when within it
    answer.status = "OPTIMAL" if answer.objective <= answer.bound else "FEASIBLE"
    answer.bound = min(answer.bound, answer.objective)
