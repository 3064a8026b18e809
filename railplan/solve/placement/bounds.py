"""Lower bounds on the placement cost, from the cost tables alone (no solver trusted).

``relaxation_bound``: every group at its cheapest rack and every pair at its cheapest pair of
distinct racks, less what sharing racks could save. ``capacity_bound``: a Lagrangian bound
that also knows racks are finite: each pair's cost is split between its two groups, each
group's share bounded by its partners filling the nearest racks as densely as rack room
allows, and rack room priced by multipliers (any non-negative multipliers give a valid bound;
a subgradient ascent looks for good ones). Both are in integer cents.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from railplan.solve.placement.groups import Group
from railplan.solve.placement.tables import UNUSED, CostTables


def max_groups_per_rack(groups: Sequence[Group], usable: int, budget: float) -> int:
    """At least as many groups as any rack can hold: the count of the smallest ones that fit by
    units alone, or by power alone, whichever is fewer.

    Any set of ``k`` groups that fits a rack has units and watts no smaller than the ``k``
    smallest of each, so ``k`` is at most both counts. Packing the smallest groups by units and
    power together is not an upper bound: with room for 10 U and 10 kW, groups of (2 U, 3 kW),
    (2 U, 4 kW), (3 U, 4 kW) and (5 U, 2 kW) fit three at a time (the last three), while the
    first three by size already need 11 kW.
    """
    units = np.cumsum(sorted(g.units for g in groups))
    watts = np.cumsum(sorted(g.power_w for g in groups))
    by_u = int(np.searchsorted(units, usable, side="right"))
    by_w = int(np.searchsorted(watts, budget + 1e-9, side="right"))
    return max(1, min(by_u, by_w))


def relaxation_bound(
    groups: Sequence[Group], tables: CostTables, usable: int, budget: float
) -> int:
    """A valid lower bound: each group's links to nodes at its cheapest rack, and each pair of
    groups at its cheapest pair of distinct racks, less what sharing a rack could save.

    Groups sharing a rack: a rack holds at most ``k`` groups (by units and power), so each
    group shares a rack with at most ``k - 1`` partners; summing every group's ``k - 1``
    largest savings counts each shared pair from both ends, so half of it bounds what all
    shared racks together can save.
    """
    total = int(tables.fixed.min(axis=1).sum())
    if not len(tables.pair_m):
        return total
    k = max_groups_per_rack(groups, usable, budget)
    sets: dict[tuple[int, ...], int] = {}
    cand_id = [sets.setdefault(tuple(tables.candidates[g]), len(sets)) for g in tables.ids]
    cand_of = {i: list(c) for c, i in sets.items()}
    memo: dict[tuple[int, int, int], tuple[int, int]] = {}
    add = np.zeros(len(tables.pair_m), dtype=np.int64)
    save = np.zeros(len(tables.pair_m), dtype=np.int64)
    for e, (a, b, m) in enumerate(
        zip(tables.pair_a.tolist(), tables.pair_b.tolist(), tables.pair_m.tolist(), strict=True)
    ):
        key = (m, cand_id[a], cand_id[b])
        hit = memo.get(key)
        if hit is None:
            hit = memo[key] = _pair_floor(tables.matrices[m], cand_of[key[1]], cand_of[key[2]])
        add[e], save[e] = hit
    total += int(add.sum())
    if k <= 1 or not save.any():
        return total
    owner = np.r_[tables.pair_a, tables.pair_b]
    saving = np.r_[save, save]
    order = np.lexsort((-saving, owner))
    owner, saving = owner[order], saving[order]
    first = np.searchsorted(owner, owner, side="left")
    rank = np.arange(len(owner)) - first
    shared = int(saving[rank < k - 1].sum())
    return total - shared // 2


def _pair_floor(matrix: np.ndarray, ca: list[int], cb: list[int]) -> tuple[int, int]:
    """(what the pair costs at least, what sharing one rack could save below that)."""
    sub = matrix[np.ix_(ca, cb)].astype(float)
    both = sorted(set(ca) & set(cb))
    if not both:
        return int(sub.min()), 0
    same = int(min(int(matrix[r, r]) for r in both))
    pos_a = {r: i for i, r in enumerate(ca)}
    pos_b = {r: j for j, r in enumerate(cb)}
    sub[[pos_a[r] for r in both], [pos_b[r] for r in both]] = np.inf
    best_apart = float(sub.min())
    if same >= best_apart:
        return int(best_apart), 0
    if not math.isfinite(best_apart):
        return same, 0
    return int(best_apart), int(best_apart) - same


#: subgradient steps of the capacity bound, and steps without gain before the step shrinks
ITERATIONS = 30
PATIENCE = 4


def capacity_bound(
    groups: Sequence[Group], tables: CostTables, usable: int, budget: float, incumbent: int
) -> int:
    """A valid lower bound that knows racks are finite (Lagrangian relaxation).

    Each pair's cost is split half to each group; a group's half is at least what its
    partners of one kind would cost packed into the racks nearest it, as densely as rack room
    allows (``shares``). What is left is a generalised assignment of groups to racks; pricing
    rack units and watts with multipliers ``mu, lam >= 0`` gives the bound
    ``sum_g min_r (share[g, r] + lam_r w_g + mu_r u_g) - sum_r (lam_r W + mu_r U)`` for any
    multipliers. A deterministic subgradient ascent (Polyak steps towards ``incumbent``)
    picks them; sums are exact (``math.fsum``) and the result is rounded down a cent.
    """
    share = shares(groups, tables, usable, budget)
    w = np.array([g.power_w for g in groups], dtype=float)
    u = np.array([g.units for g in groups], dtype=float)
    # groups with the same row and size choose alike: solve each kind once, weighted
    kinds, weight = unique_rows(np.concatenate([share, w[:, None], u[:, None]], axis=1))
    share, w, u = kinds[:, :-2], kinds[:, -2], kinds[:, -1]
    weight = weight.astype(float)
    n = tables.n_racks
    lam, mu = np.zeros(n), np.zeros(n)
    best, theta, stale = -math.inf, 1.0, 0
    rows = np.arange(len(share))
    for _ in range(ITERATIONS):
        priced = share + w[:, None] * lam[None, :] + u[:, None] * mu[None, :]
        at = np.argmin(priced, axis=1)
        value = math.fsum((weight * priced[rows, at]).tolist())
        value -= budget * math.fsum(lam.tolist()) + usable * math.fsum(mu.tolist())
        if value > best + 1e-9 * abs(best if math.isfinite(best) else 1.0):
            best, stale = value, 0
        else:
            stale += 1
            if stale >= PATIENCE:
                theta, stale = theta / 2, 0
        over_w = np.bincount(at, weights=w * weight, minlength=n) - budget
        over_u = np.bincount(at, weights=u * weight, minlength=n) - usable
        over_w[(lam <= 0) & (over_w < 0)] = 0.0
        over_u[(mu <= 0) & (over_u < 0)] = 0.0
        norm = math.fsum((over_w * over_w).tolist()) + math.fsum((over_u * over_u).tolist())
        if norm <= 0 or not math.isfinite(value) or incumbent <= value:
            break
        step = theta * (incumbent - value) / norm
        lam = np.maximum(0.0, lam + step * over_w)
        mu = np.maximum(0.0, mu + step * over_u)
    if not math.isfinite(best):
        return 0
    return min(incumbent, math.floor(best) - 1)


def unique_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, axis=0, return_counts=True)`` of a float matrix with few distinct rows:
    rows told apart by their bytes, then only the distinct ones sorted by ``np.unique``."""
    x = np.ascontiguousarray(x, dtype=float)
    if not len(x) or np.isnan(x).any() or np.signbit(x[x == 0]).any():
        return np.unique(x, axis=0, return_counts=True)  # bytes differ where values are equal
    kind_of: dict[bytes, int] = {}
    firsts: list[int] = []
    seen: list[int] = []
    for i, row in enumerate(x):
        kind = kind_of.setdefault(row.tobytes(), len(firsts))
        if kind == len(firsts):
            firsts.append(i)
        seen.append(kind)
    kinds, inverse = np.unique(x[firsts], axis=0, return_inverse=True)
    weight = np.zeros(len(kinds), dtype=np.intp)
    weight[inverse.reshape(-1)] = np.bincount(np.array(seen, dtype=np.intp), minlength=len(firsts))
    return kinds, weight


def shares(groups: Sequence[Group], tables: CostTables, usable: int, budget: float) -> np.ndarray:
    """``share[g, r]``: group g's links to nodes in rack r plus half of the least its pairs can
    cost with g in r (``inf`` where g may not go)."""
    share = tables.fixed.astype(float)
    share[tables.fixed >= UNUSED] = np.inf
    sets: dict[tuple[int, ...], int] = {}
    cand_id = [sets.setdefault(tuple(tables.candidates[g]), len(sets)) for g in tables.ids]
    cand_of = {i: list(c) for c, i in sets.items()}
    memo: dict[tuple[int, int, float, int, int, int, float], np.ndarray] = {}
    for g, (others, mats) in enumerate(tables.partners):
        if not len(others):
            continue
        kinds: dict[tuple[int, int, float, int], int] = {}
        for p, m in zip(others.tolist(), mats.tolist(), strict=True):
            key = (m, groups[p].units, groups[p].power_w, cand_id[p])
            kinds[key] = kinds.get(key, 0) + 1
        for (m, units, watts, cand), q in kinds.items():
            full = (m, units, watts, cand, q, groups[g].units, groups[g].power_w)
            hit = memo.get(full)
            if hit is None:
                per = _per_rack(units, watts, usable, budget)
                own = _per_rack(units, watts, usable - groups[g].units, budget - groups[g].power_w)
                hit = memo[full] = _nearest_fill(tables.matrices[m], cand_of[cand], q, per, own)
            share[g] += 0.5 * hit
    return share


def _per_rack(units: int, watts: float, room_u: int, room_w: float) -> int:
    """How many groups of this size fit in the given room."""
    if room_u < 0 or room_w < -1e-9:
        return 0
    by_w = int((room_w + 1e-9) // watts) if watts > 0 else room_u
    return max(0, min(room_u // units, by_w))


def _nearest_fill(matrix: np.ndarray, cand: list[int], q: int, per: int, own: int) -> np.ndarray:
    """For each rack r: the least ``sum matrix[r, r_p]`` over ``q`` partners in racks ``cand``
    when a rack takes at most ``per`` of them (``own`` in r itself): nearest racks first."""
    n = matrix.shape[0]
    if per <= 0:
        return np.full(n, np.inf)
    sub = matrix[:, cand].astype(float)
    in_cand = np.zeros(n, dtype=bool)
    in_cand[cand] = True
    cols = np.full(n, -1)
    cols[cand] = np.arange(len(cand))
    diag = np.full(n, np.inf)
    diag[in_cand] = sub[np.flatnonzero(in_cand), cols[in_cand]]
    sub[np.flatnonzero(in_cand), cols[in_cand]] = np.inf
    t = min(len(cand), -(-q // per))
    near = np.sort(np.partition(sub, t - 1, axis=1)[:, :t], axis=1) if t else sub[:, :0]
    items = np.repeat(near, per, axis=1)
    items = np.concatenate([np.repeat(diag[:, None], min(own, q), axis=1), items], axis=1)
    items = np.sort(items, axis=1)[:, :q]
    if items.shape[1] < q:
        return np.full(n, np.inf)
    return items.sum(axis=1)
