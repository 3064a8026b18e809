"""Every placement of a tiny switch-group problem priced at once: exact, no solver to load.

Where the groups' candidate racks multiply to a few tens of thousands of placements (a 1k
cluster's six groups in four racks: 4,096), pricing each one with numpy proves the optimum in
milliseconds, while loading OR-Tools' CP-SAT alone takes a third of a second (it imports
pandas). CP-SAT keeps the models too large to enumerate and too small for the search alone.
"""

from __future__ import annotations

import math

import numpy as np

from railplan.solve.placement.tables import CostTables

#: placements (product of the groups' candidate-rack counts) up to which all are priced
EXHAUSTIVE_LIMIT = 65_536
#: placements priced per numpy batch (bounds memory: a batch is CHUNK x groups integers)
CHUNK = 8_192


def placements(tables: CostTables) -> int:
    """How many placements there are: the product of every group's candidate-rack count."""
    return math.prod(len(tables.candidates[g]) for g in tables.ids)


def best_placement(
    tables: CostTables,
    units: np.ndarray,
    power_w: np.ndarray,
    room: tuple[int, float],
) -> tuple[np.ndarray, int] | None:
    """The cheapest placement that fits every rack's units and power, and its cost in cents;
    ties go to the first in the order of the groups' candidate lists (deterministic). None when
    no placement fits."""
    cands = [np.array(tables.candidates[g], dtype=np.intp) for g in tables.ids]
    n_groups, n_racks = len(cands), tables.n_racks
    sizes = [len(c) for c in cands]
    total = math.prod(sizes)
    # mixed-radix digits of each placement index, most significant group first
    strides = np.array([math.prod(sizes[i + 1 :]) for i in range(n_groups)], dtype=np.int64)
    best: tuple[int, int] | None = None  # (cost, placement index)
    usable, budget = room
    for start in range(0, total, CHUNK):
        index = np.arange(start, min(total, start + CHUNK), dtype=np.int64)
        at = np.empty((len(index), n_groups), dtype=np.intp)
        for g in range(n_groups):
            at[:, g] = cands[g][(index // strides[g]) % sizes[g]]
        cost = tables.fixed[np.arange(n_groups), at].sum(axis=1)
        if len(tables.pair_m):
            pair = tables.matrices[tables.pair_m, at[:, tables.pair_a], at[:, tables.pair_b]]
            cost = cost + pair.sum(axis=1)
        used_u = np.zeros((len(index), n_racks), dtype=np.int64)
        used_w = np.zeros((len(index), n_racks), dtype=float)
        rows = np.arange(len(index))
        for g in range(n_groups):
            np.add.at(used_u, (rows, at[:, g]), units[g])
            np.add.at(used_w, (rows, at[:, g]), power_w[g])
        fits = (used_u <= usable).all(axis=1) & (used_w <= budget + 1e-9).all(axis=1)
        if not fits.any():
            continue
        ok = np.flatnonzero(fits)
        k = int(ok[np.argmin(cost[ok])])  # argmin: the first of equal costs
        if best is None or int(cost[k]) < best[0]:
            best = (int(cost[k]), int(index[k]))
    if best is None:
        return None
    cost_cents, k = best
    at_best = np.array(
        [cands[g][(k // int(strides[g])) % sizes[g]] for g in range(n_groups)], dtype=np.intp
    )
    return at_best, cost_cents
