"""Placement by search: whole roles re-placed by min-cost flow, then moves and swaps.

The state is a rack per group and, for every group and rack, what the group would cost there
given where its partners are (``cost_rows``); a move updates only its partners' rows. Every
step is counted, never timed, so the same tables give the same placement on any machine.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from railplan.solve.placement.groups import Group
from railplan.solve.placement.tables import (
    UNUSED,
    CostTables,
    as_slice,
    cost_rows,
    placement_cost,
)

#: role subproblems with more group-rack arcs than this keep each group's cheapest racks only
FULL_ARCS = 50_000
#: racks kept per group when a role subproblem is pruned (its current rack is always kept)
KEEP_RACKS = 48
#: rounds of moves and swaps between two role passes
MAX_ROUNDS = 20
#: runs of groups alike in units and power priced one by one in a round of moves (more: all at once)
MAX_RUNS = 16


@dataclass
class State:
    """Rack of every group (-1: not placed), per-rack room left, and the cost rows."""

    tables: CostTables
    at: np.ndarray
    units: np.ndarray
    power_w: np.ndarray
    room_u: np.ndarray
    room_w: np.ndarray
    rows: np.ndarray

    @classmethod
    def empty(
        cls, groups: Sequence[Group], tables: CostTables, usable: int, budget: float
    ) -> State:
        n = tables.n_racks
        at = np.full(len(groups), -1, dtype=np.intp)
        return cls(
            tables=tables,
            at=at,
            units=np.array([g.units for g in groups], dtype=np.int64),
            power_w=np.array([g.power_w for g in groups], dtype=float),
            room_u=np.full(n, usable, dtype=np.int64),
            room_w=np.full(n, budget, dtype=float),
            rows=cost_rows(tables, at),
        )

    def cost(self) -> int:
        return placement_cost(self.tables, self.at)

    def fits(self, g: int, r: int) -> bool:
        return bool(self.room_u[r] >= self.units[g] and self.room_w[r] + 1e-9 >= self.power_w[g])

    def move(self, g: int, r: int) -> None:
        """Put group g in rack r (-1: take it out) and update its partners' rows."""
        old = int(self.at[g])
        if old == r:
            return
        if old >= 0:
            self.room_u[old] += self.units[g]
            self.room_w[old] += self.power_w[g]
        if r >= 0:
            self.room_u[r] -= self.units[g]
            self.room_w[r] -= self.power_w[g]
        # the pair matrices are symmetric: the partners' column of a rack is its row; the rows
        # are integers, so a move from one rack to another updates them in one pass, exactly
        # (one row per matrix, broadcast to its partners: a group's pairs share few matrices)
        rows, matrices = self.rows, self.tables.matrices
        for others, m in self.tables.partners_by_matrix[g]:
            if old >= 0 and r >= 0:
                rows[others] += matrices[m, r] - matrices[m, old]
            elif old >= 0:
                rows[others] -= matrices[m, old]
            else:
                rows[others] += matrices[m, r]
        self.at[g] = r


#: answers a role subproblem: the rack of each member (``before``: their racks, -1 if none)
RoleSolver = Callable[["State", np.ndarray, np.ndarray], "np.ndarray | None"]


def place_roles(state: State, order: Sequence[np.ndarray], solve_role: RoleSolver) -> bool:
    """Re-place each role in turn, each optimal given the others (roles not yet placed take
    no room and cost nothing); a role answer that costs more than before is not taken.
    Returns False when a role found no racks (it stays where it was, or unplaced)."""
    for members in order:
        before = state.at[members].copy()
        if (before >= 0).all() and not _pairs_within(state.tables, members):
            answer = _lifted(state, members, before, solve_role)
            if answer is None:
                return False
            moved = np.flatnonzero(answer != before)
            gain = (
                state.rows[members[moved], answer[moved]]
                - state.rows[members[moved], before[moved]]
            )
            if gain.sum() < 0:
                for i in moved.tolist():
                    state.move(int(members[i]), int(answer[i]))
            continue
        old = state.cost() if (before >= 0).all() else None
        for g in members.tolist():
            state.move(g, -1)
        answer = solve_role(state, members, before)
        if answer is None:
            for g, r in zip(members.tolist(), before.tolist(), strict=True):
                state.move(g, r)
            return False
        for g, r in zip(members.tolist(), answer.tolist(), strict=True):
            state.move(g, r)
        if old is not None and state.cost() > old:
            for g in members.tolist():
                state.move(g, -1)
            for g, r in zip(members.tolist(), before.tolist(), strict=True):
                state.move(g, r)
    return True


def _pairs_within(tables: CostTables, members: np.ndarray) -> bool:
    inside = np.zeros(len(tables.ids), dtype=bool)
    inside[members] = True
    return bool((inside[tables.pair_a] & inside[tables.pair_b]).any())


def _lifted(
    state: State, members: np.ndarray, before: np.ndarray, solve_role: RoleSolver
) -> np.ndarray | None:
    """Solve a placed role with its own room handed back (its cost rows do not depend on
    each other when no pair joins two of its groups), then restore the room."""
    n = state.tables.n_racks
    lift_u = np.bincount(before, weights=state.units[members], minlength=n).astype(np.int64)
    lift_w = np.bincount(before, weights=state.power_w[members], minlength=n)
    state.room_u += lift_u
    state.room_w += lift_w
    try:
        return solve_role(state, members, before)
    finally:
        state.room_u -= lift_u
        state.room_w -= lift_w


def alike(state: State, members: np.ndarray) -> bool:
    """True when every group of ``members`` takes the same units and power."""
    units, power = state.units[members], state.power_w[members]
    return bool((units == units[0]).all() and (power == power[0]).all())


def flow_role(state: State, members: np.ndarray, before: np.ndarray) -> np.ndarray | None:
    """The cheapest racks for a role of like groups (``alike``) given everything else: a
    transportation problem (racks hold whole groups), solved exactly by OR-Tools' min-cost
    flow. Large roles keep each group's ``KEEP_RACKS`` cheapest racks and its current one;
    None when the role does not fit even on every rack."""
    from ortools.graph.python import min_cost_flow

    unit_u, unit_w = int(state.units[members[0]]), float(state.power_w[members[0]])
    slots = np.minimum(state.room_u // unit_u, np.floor((state.room_w + 1e-9) / unit_w))
    slots = np.maximum(slots, 0).astype(np.int64)
    costs = state.rows[as_slice(members)]  # read only: a role's consecutive rows as a view
    k, n = costs.shape
    for pruned in (True, False):
        arcs_g, arcs_r = _arcs(costs, before, pruned)
        flow = min_cost_flow.SimpleMinCostFlow()
        arcs = flow.add_arcs_with_capacity_and_unit_cost(
            arcs_g, k + arcs_r, np.ones(len(arcs_g), dtype=np.int64), costs[arcs_g, arcs_r]
        )
        flow.add_arcs_with_capacity_and_unit_cost(
            k + np.arange(n), np.full(n, k + n), slots, np.zeros(n, dtype=np.int64)
        )
        supplies = np.zeros(k + n + 1, dtype=np.int64)
        supplies[:k], supplies[-1] = 1, -k
        flow.set_nodes_supplies(np.arange(k + n + 1), supplies)
        if flow.solve() == flow.OPTIMAL:
            used = flow.flows(arcs) > 0
            out = np.full(k, -1, dtype=np.intp)
            out[arcs_g[used]] = arcs_r[used]
            return out
        if not pruned:
            break
    return None


def remembered_flows() -> RoleSolver:
    """``flow_role`` with each answer remembered by what it was given: the role, where its
    groups stand, their cost rows and every rack's room (the whole of its input, so a hit is
    the very answer a solve would give). Kicks and the passes that settle them re-solve many
    roles unchanged: 40% of the flows on 4,096 GPUs of eight planes, 42% on 2,048 of
    cx732q-n."""
    answers: dict[bytes, np.ndarray | None] = {}

    def solve(state: State, members: np.ndarray, before: np.ndarray) -> np.ndarray | None:
        digest = hashlib.blake2b(digest_size=20)
        for part in (members, before, state.rows[as_slice(members)], state.room_u, state.room_w):
            digest.update(np.ascontiguousarray(part).data)
        key = digest.digest()
        if key not in answers:
            answers[key] = flow_role(state, members, before)
        hit = answers[key]
        return None if hit is None else hit.copy()

    return solve


def _arcs(costs: np.ndarray, before: np.ndarray, pruned: bool) -> tuple[np.ndarray, np.ndarray]:
    """Group-rack arcs of a role subproblem: every candidate rack, or each group's cheapest
    ``KEEP_RACKS`` and the rack it had."""
    k, n = costs.shape
    allowed = costs < UNUSED
    if pruned and k * n > FULL_ARCS:
        keep = np.argsort(costs, axis=1, kind="stable")[:, :KEEP_RACKS]
        mask = np.zeros_like(allowed)
        np.put_along_axis(mask, keep, True, axis=1)
        placed = before >= 0
        mask[np.flatnonzero(placed), before[placed]] = True
        allowed &= mask
    g, r = np.divmod(np.flatnonzero(allowed), n)  # row-major, as np.nonzero: 1-D is faster
    return g.astype(np.int64, copy=False), r.astype(np.int64, copy=False)


def improve(state: State, classes: np.ndarray, max_rounds: int = MAX_ROUNDS) -> int:
    """Moves into free room and swaps between like groups while any lowers the cost; returns
    the rounds taken. Each round applies the improving steps best first, re-checking each."""
    for rounds in range(1, max_rounds + 1):
        changed = _moves(state) + _swaps(state, classes)
        if not changed:
            return rounds
    return max_rounds


def _moves(state: State) -> int:
    at, rows = state.at, state.rows
    best, cheapest = _cheapest_with_room(state)
    # only groups a rack with room would lower are moved: no such rack (UNUSED), no gain
    delta = np.where(cheapest < UNUSED, cheapest - rows[np.arange(len(at)), at], 0)
    done = 0
    for g in np.argsort(delta, kind="stable").tolist():
        if delta[g] >= 0:
            break
        r = int(best[g])
        if state.fits(g, r) and rows[g, r] < rows[g, at[g]]:
            state.move(g, r)
            done += 1
    return done


def _cheapest_with_room(state: State) -> tuple[np.ndarray, np.ndarray]:
    """The rack where each group costs least of those with room for it (the first on ties),
    and that cost: UNUSED or more where no rack with room costs less than UNUSED.

    Racks without room are priced at ``2 * UNUSED`` more, so any rack with room at less than
    UNUSED is cheaper. A run of groups alike in units and power shares one row of room
    (groups come role by role: few runs); many runs are priced together."""
    rows, units, power = state.rows, state.units, state.power_w
    k = len(units)
    change = np.flatnonzero((units[1:] != units[:-1]) | (power[1:] != power[:-1])) + 1
    bounds = [0, *change.tolist(), k] if len(change) < MAX_RUNS else [0, k]
    best = np.empty(k, dtype=np.intp)
    cheapest = np.empty(k, dtype=np.int64)
    for start, stop in itertools.pairwise(bounds):
        run = slice(start, stop)
        u, w = units[run, None], power[run, None]
        if (u == u[:1]).all() and (w == w[:1]).all():
            u, w = u[:1], w[:1]  # one row of room for the whole run
        room = (state.room_u >= u) & (state.room_w + 1e-9 >= w)
        cost = rows[run] + np.where(room, 0, 2 * UNUSED)
        best[run] = cost.argmin(axis=1)
        cheapest[run] = cost[np.arange(stop - start), best[run]]
    return best, cheapest


def _swaps(state: State, classes: np.ndarray) -> int:
    done = 0
    for c in np.unique(classes).tolist():
        members = np.flatnonzero(classes == c)
        if len(members) < 2:
            continue
        firsts, seconds = improving_pairs(state, members)
        for a, b in zip(firsts, seconds, strict=True):
            if _swap_gain(state, a, b) < 0:
                ra, rb = state.at.item(a), state.at.item(b)
                state.move(b, ra)  # rows are additive: the order of the two moves is free
                state.move(a, rb)
                done += 1
    return done


def improving_pairs(state: State, members: np.ndarray) -> tuple[list[int], list[int]]:
    """Pairs ``a < b`` of ``members`` whose trading racks lowers their rows' cost (their own
    pair left out), best first, ties in row-major order.

    A trade's gain is the sum of its two moves' (``a`` to ``b``'s rack and back), so only a
    pair with one move that gains can gain: those are few, and only they are summed."""
    k = len(members)
    racks = state.at[members]
    # a move's gain depends on the rack, not on whose rack it is: price each member's move
    # to each distinct rack of the class (fewer than the members), then list the pairs
    distinct, rack_of = np.unique(racks, return_inverse=True)
    rack_of = rack_of.reshape(-1)
    moves = state.rows[as_slice(members)].take(distinct, axis=1)
    moves -= moves[np.arange(k), rack_of][:, None]  # each move's gain; to its own rack: 0
    flat = np.flatnonzero(moves < 0)  # 1-D: ~10x np.nonzero of the 2-D mask
    i, to = np.divmod(flat, len(distinct))
    # each (i, rack) to every member j in that rack, j in increasing order
    by_rack = np.argsort(rack_of, kind="stable")
    starts = np.searchsorted(rack_of[by_rack], np.arange(len(distinct)))
    count = np.bincount(rack_of, minlength=len(distinct))[to]
    i = np.repeat(i, count)
    first = np.repeat(starts[to] - (np.cumsum(count) - count), count)
    j = by_rack[first + np.arange(len(i))]
    pairs = np.where(i < j, i * k + j, j * k + i)  # each pair once, as (lo, hi)
    pairs.sort()
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
    lo, hi = np.divmod(pairs, k)
    gain = moves[lo, rack_of[hi]] + moves[hi, rack_of[lo]]
    better = gain < 0
    lo, hi, gain = lo[better], hi[better], gain[better]
    order = np.lexsort((hi, lo, gain))
    return members[lo[order]].tolist(), members[hi[order]].tolist()


def _swap_gain(state: State, a: int, b: int) -> int:
    """Cost change of groups a and b trading racks (their own pair counted once)."""
    ra, rb = state.at.item(a), state.at.item(b)
    if ra == rb:
        return 0
    row = state.rows.item  # Python ints: exact, and no NumPy scalars in this hot loop
    gain: int = row(a, rb) - row(a, ra) + row(b, ra) - row(b, rb)
    m = state.tables.pair_of.get((a, b) if a < b else (b, a))
    if m is not None:
        cell = state.tables.matrices.item
        gain += 2 * cell(m, ra, rb) - cell(m, ra, ra) - cell(m, rb, rb)
    return gain
