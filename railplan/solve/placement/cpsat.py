"""The CP-SAT placement model: the free groups' racks, with the other groups where they are.

One boolean per (free group, candidate rack); a pair of free groups adds one boolean per pair
of their racks whose row and column sums equal the two placements (so the model grows with
groups and their pairs, never with links); rack units and power are linear constraints.
OR-Tools is imported here, when a model is built.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from railplan.solve.placement.search import State
from railplan.solve.placement.tables import UNUSED

if TYPE_CHECKING:
    from ortools.sat.python import cp_model

    Row = dict[int, cp_model.IntVar]


@dataclass(frozen=True)
class Limits:
    """What one solve may spend and when it may stop (CP-SAT parameters)."""

    deterministic_s: float
    relative_gap: float
    random_seed: int
    num_workers: int


@dataclass
class Solved:
    """CP-SAT's answer for the free groups (empty when it found none) and the whole cost."""

    assign: np.ndarray | None
    objective: int
    bound: int
    status: str
    deterministic_s: float


def solve(
    state: State,
    free: np.ndarray,
    racks_of: list[np.ndarray],
    classes: np.ndarray,
    limits: Limits,
    hint: np.ndarray | None = None,
    pairs: bool = True,
) -> Solved | None:
    """Place the ``free`` groups (taken out of ``state``), each in one of ``racks_of[i]``.

    Objective and bound include what the placed groups cost (``pairs=False``: pairs of free
    groups are left out of the objective, a model to find room). None when CP-SAT proves
    that the free groups cannot fit.
    """
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    tables = state.tables
    x = [
        {r: model.new_bool_var(f"x{g}_{r}") for r in rs.tolist()}
        for g, rs in zip(free, racks_of, strict=True)
    ]
    for row in x:
        model.add_exactly_one(row.values())
    _capacity(model, state, free, x)
    pos = {int(g): i for i, g in enumerate(free.tolist())}
    terms: list[tuple[cp_model.IntVar, int]] = []
    free_pairs: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for e in range(len(tables.pair_m)):
        a, b = int(tables.pair_a[e]), int(tables.pair_b[e])
        if pairs and a in pos and b in pos:
            # both groups of the pair: _symmetry may only order groups whose partners match
            free_pairs[pos[a]].append((pos[b], int(tables.pair_m[e])))
            free_pairs[pos[b]].append((pos[a], int(tables.pair_m[e])))
            terms += _pair_terms(
                model, x[pos[a]], x[pos[b]], tables.matrices[int(tables.pair_m[e])]
            )
    for i, g in enumerate(free.tolist()):
        terms += [(var, int(state.rows[g, r])) for r, var in x[i].items()]
    _symmetry(model, state, free, x, classes, free_pairs)
    constant = _placed_cost(state)
    model.minimize(sum(c * v for v, c in terms if c))
    if hint is not None:
        for i, r in enumerate(hint.tolist()):
            for rr, var in x[i].items():
                model.add_hint(var, rr == r)
    solver = cp_model.CpSolver()
    solver.parameters.catch_sigint_signal = False  # keep the caller's Ctrl-C handling
    p = solver.parameters
    p.random_seed = limits.random_seed
    p.num_workers = limits.num_workers
    # several workers are deterministic only when interleaved (one worker always is)
    p.interleave_search = limits.num_workers > 1
    p.max_deterministic_time = limits.deterministic_s
    p.relative_gap_limit = limits.relative_gap
    # the wall clock is only a safety net: hitting it would make the answer timing-dependent
    p.max_time_in_seconds = limits.deterministic_s * 20 + 30
    status = solver.solve(model)
    name = solver.status_name(status)
    bound = constant + math.floor(solver.best_objective_bound + 1e-6)
    if status == cp_model.INFEASIBLE:
        return None
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Solved(None, -1, bound, name, solver.deterministic_time)
    assign = np.array([next(r for r, v in row.items() if solver.value(v)) for row in x])
    return Solved(
        assign=assign,
        objective=constant + round(solver.objective_value),
        bound=bound,
        status=name,
        deterministic_s=solver.deterministic_time,
    )


def _pair_terms(
    model: cp_model.CpModel, xa: Row, xb: Row, matrix: np.ndarray
) -> list[tuple[cp_model.IntVar, int]]:
    """Linearise one pair of free groups: y[ra, rb] sums to x[a, ra] by rows, x[b, rb] by columns."""
    y = {(ra, rb): model.new_bool_var("") for ra in xa for rb in xb}
    for ra, var in xa.items():
        model.add(sum(y[(ra, rb)] for rb in xb) == var)
    for rb, var in xb.items():
        model.add(sum(y[(ra, rb)] for ra in xa) == var)
    return [(v, int(matrix[ra, rb])) for (ra, rb), v in y.items()]


def _capacity(model: cp_model.CpModel, state: State, free: np.ndarray, x: list[Row]) -> None:
    """Rack units and power: what the free groups add fits in the room the others leave."""
    per_rack: dict[int, list[tuple[int, cp_model.IntVar]]] = defaultdict(list)
    for i, row in enumerate(x):
        for r, var in row.items():
            per_rack[r].append((i, var))
    for r, here in sorted(per_rack.items()):
        model.add(sum(int(state.units[free[i]]) * v for i, v in here) <= int(state.room_u[r]))
        watts = [math.ceil(float(state.power_w[free[i]])) * v for i, v in here]
        model.add(sum(watts) <= math.floor(float(state.room_w[r]) + 1e-9))


def _symmetry(
    model: cp_model.CpModel,
    state: State,
    free: np.ndarray,
    x: list[Row],
    classes: np.ndarray,
    free_pairs: dict[int, list[tuple[int, int]]],
) -> None:
    """Interchangeable free groups take racks in non-decreasing order: same room and racks,
    same costs in every rack, the same free partners, and not partners of each other."""
    alike: dict[tuple[object, ...], list[int]] = defaultdict(list)
    for i, g in enumerate(free.tolist()):
        sig = (int(classes[g]), tuple(x[i]), state.rows[g].tobytes(), tuple(sorted(free_pairs[i])))
        alike[sig].append(i)
    for members in alike.values():
        for i, j in itertools.pairwise(members):
            if any(p == j for p, _ in free_pairs[i]):
                continue
            model.add(sum(r * v for r, v in x[i].items()) <= sum(r * v for r, v in x[j].items()))


def _placed_cost(state: State) -> int:
    """What the placed groups cost among themselves and to their nodes (cents)."""
    t, at = state.tables, state.at
    placed = np.flatnonzero(at >= 0)
    total = int(t.fixed[placed, at[placed]].sum())
    both = (at[t.pair_a] >= 0) & (at[t.pair_b] >= 0)
    if both.any():
        total += int(t.matrices[t.pair_m[both], at[t.pair_a[both]], at[t.pair_b[both]]].sum())
    return total


def candidate_racks_of(
    state: State, free: np.ndarray, before: np.ndarray, keep: int
) -> list[np.ndarray]:
    """Each free group's allowed racks, cut to its ``keep`` cheapest (and its current one)."""
    out = []
    for g, r0 in zip(free.tolist(), before.tolist(), strict=True):
        row = state.rows[g]
        allowed = np.flatnonzero(row < UNUSED)
        if keep and len(allowed) > keep:
            order = allowed[np.argsort(row[allowed], kind="stable")[:keep]]
            allowed = np.unique(np.r_[order, [r0] if r0 >= 0 else []].astype(np.intp))
        out.append(allowed)
    return out
