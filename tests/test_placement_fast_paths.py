"""Placement's fast paths against the slower code they replaced (kept here as oracles).

Moves, swaps and role moves must take the very same steps in the same order, and the tables
the very same integers: the placement, hence design.json, may not change by a byte.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import plan
from railplan.catalog import LENGTH_EPS_M
from railplan.physical.costers import DesignCoster, LengthCoster, PowerCoster, StepPrices
from railplan.physical.floor import build_floor
from railplan.solve.placement import bounds, search, tables
from railplan.solve.placement.groups import Group, candidate_racks, make_groups, usable_units
from railplan.solve.placement.report import naive_groups
from railplan.solve.placement.search import State
from railplan.solve.placement.tables import UNUSED, CostTables, _partner_lists
from railplan.spec import PlacementRulesSpec, spec_from_dict

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- the replaced implementations -----------------------------------------------------------


def old_move(state: State, g: int, r: int) -> None:
    old = int(state.at[g])
    if old == r:
        return
    others, mats = state.tables.partners[g]
    if old >= 0:
        state.room_u[old] += state.units[g]
        state.room_w[old] += state.power_w[g]
    if r >= 0:
        state.room_u[r] -= state.units[g]
        state.room_w[r] -= state.power_w[g]
    if old >= 0 and r >= 0:
        state.rows[others] += state.tables.matrices[mats, r] - state.tables.matrices[mats, old]
    elif old >= 0:
        state.rows[others] -= state.tables.matrices[mats, old]
    else:
        state.rows[others] += state.tables.matrices[mats, r]
    state.at[g] = r


def old_moves(state: State) -> int:
    at, rows = state.at, state.rows
    here = rows[np.arange(len(at)), at]
    room = (state.room_u[None, :] >= state.units[:, None]) & (
        state.room_w[None, :] + 1e-9 >= state.power_w[:, None]
    )
    gain = np.where(room & (rows < UNUSED), rows - here[:, None], 0)
    best = np.argmin(gain, axis=1)
    delta = gain[np.arange(len(at)), best]
    done = 0
    for g in np.argsort(delta, kind="stable").tolist():
        if delta[g] >= 0:
            break
        r = int(best[g])
        if state.fits(g, r) and rows[g, r] < rows[g, at[g]]:
            old_move(state, g, r)
            done += 1
    return done


def old_swap_gain(state: State, a: int, b: int) -> int:
    ra, rb = int(state.at[a]), int(state.at[b])
    if ra == rb:
        return 0
    rows = state.rows
    gain = int(rows[a, rb] - rows[a, ra] + rows[b, ra] - rows[b, rb])
    m = state.tables.pair_of.get((a, b) if a < b else (b, a))
    if m is not None:
        matrix = state.tables.matrices[m]
        gain += int(2 * matrix[ra, rb] - matrix[ra, ra] - matrix[rb, rb])
    return gain


def old_swaps(state: State, classes: np.ndarray) -> int:
    done = 0
    for c in np.unique(classes).tolist():
        members = np.flatnonzero(classes == c)
        if len(members) < 2:
            continue
        racks = state.at[members]
        sub = state.rows[members].take(racks, axis=1)
        gain = sub - np.diagonal(sub)[:, None]
        gain = gain + gain.T
        better = gain < 0
        better &= racks[:, None] != racks[None, :]
        i, j = np.nonzero(np.triu(better, 1))
        for k in np.argsort(gain[i, j], kind="stable").tolist():
            a, b = int(members[i[k]]), int(members[j[k]])
            if old_swap_gain(state, a, b) < 0:
                ra, rb = int(state.at[a]), int(state.at[b])
                old_move(state, b, ra)
                old_move(state, a, rb)
                done += 1
    return done


def old_fixed_costs(
    floor, coster, keys, node_rows, end_racks, end_heights, racks, n_groups, tray, h_sw
):
    n = len(racks)
    fixed = np.zeros((n_groups, n), dtype=np.int64)
    if not len(node_rows):
        return fixed
    rows, counts = tables._counted(node_rows, (n_groups, len(end_racks), len(keys)))
    rows, counts, same = tables._alike_groups(rows, counts)
    ends = np.unique(rows[:, 1])
    spot_racks = sorted({end_racks[e] for e in ends.tolist()})
    runs = floor.tray_table_m(spot_racks, racks)
    run_row = {r: i for i, r in enumerate(spot_racks)}
    end_row = np.zeros(len(end_racks), dtype=np.intp)
    for e in ends.tolist():
        end_row[e] = run_row[end_racks[e]]
    lift = (tray - h_sw) + floor.layout.slack_m
    step = max(1, tables.BLOCK // max(1, n))
    for start in range(0, len(rows), step):
        block, c = rows[start : start + step], counts[start : start + step]
        lengths = ((tray - end_heights[block[:, 1]]) + lift)[:, None] + runs[end_row[block[:, 1]]]
        cents = np.empty(lengths.shape, dtype=np.int64)
        for k in np.unique(block[:, 2]).tolist():
            sel = block[:, 2] == k
            cents[sel] = np.rint(old_costs(coster, keys[k], lengths[sel]) * 100).astype(np.int64)
        starts = np.flatnonzero(np.r_[True, block[1:, 0] != block[:-1, 0]])
        fixed[block[starts, 0]] += np.add.reduceat(cents * c[:, None], starts, axis=0)
    if len(same):
        fixed[same[:, 0]] = fixed[same[:, 1]]
    return fixed


def old_pair_costs(coster, keys, pair_rows, lengths, fixed):
    n = lengths.shape[0]
    empty = np.zeros(0, dtype=np.intp)
    if not len(pair_rows):
        return empty, empty, empty, np.zeros((0, n, n), dtype=np.int64)
    n_groups = fixed.shape[0]
    rows, counts = tables._counted(pair_rows, (n_groups, n_groups, len(keys)))
    per_key: dict[int, np.ndarray] = {}
    bundles: dict[tuple[tuple[int, int], ...], int] = {}
    matrices: list[np.ndarray] = []
    pairs: list[tuple[int, int, int]] = []
    starts = np.flatnonzero(np.r_[True, np.any(rows[1:, :2] != rows[:-1, :2], axis=1)])
    for s, e in zip(starts.tolist(), [*starts[1:].tolist(), len(rows)], strict=True):
        a, b = int(rows[s, 0]), int(rows[s, 1])
        sig = tuple((int(rows[i, 2]), int(counts[i])) for i in range(s, e))
        m = bundles.get(sig)
        if m is None:
            matrix = np.zeros((n, n), dtype=np.int64)
            for k, c in sig:
                if k not in per_key:
                    per_key[k] = np.rint(old_costs(coster, keys[k], lengths) * 100).astype(np.int64)
                matrix += c * per_key[k]
            m = bundles[sig] = len(matrices)
            matrices.append(matrix)
        if a == b:
            fixed[a] += np.diagonal(matrices[m])
        else:
            pairs.append((a, b, m))
    arr = np.array(pairs, dtype=np.intp).reshape(-1, 3)
    return arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), np.stack(matrices)


def old_steps(steps: StepPrices, lengths: np.ndarray) -> np.ndarray:
    return steps.values[np.searchsorted(steps.marks, lengths - LENGTH_EPS_M)]


def old_costs(coster, key, lengths: np.ndarray) -> np.ndarray:
    if isinstance(coster, DesignCoster):
        return old_steps(coster.steps(key), lengths)
    return coster.costs(key, lengths)


# --- random states --------------------------------------------------------------------------


def random_state(seed: int) -> tuple[State, np.ndarray]:
    """Groups of a few sizes and classes in racks with some room, pairs over a few matrices
    (some within a class), some racks unusable; every group placed."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 12)), int(rng.integers(2, 40))
    fixed = rng.integers(0, 50, size=(k, n)).astype(np.int64) * int(rng.choice([1, 1000]))
    fixed[rng.random((k, n)) < 0.1] = UNUSED
    fixed[np.arange(k), rng.integers(0, n, size=k)] = 5  # every group has a rack
    pairs = sorted({(a, b) for a in range(k) for b in range(a + 1, k) if rng.random() < 0.2})
    n_mats = int(rng.integers(1, 4))
    halves = rng.integers(0, 40, size=(n_mats, n, n))
    matrices = (halves + halves.transpose(0, 2, 1)).astype(np.int64)
    pair_a = np.array([a for a, _ in pairs], dtype=np.intp)
    pair_b = np.array([b for _, b in pairs], dtype=np.intp)
    pair_m = rng.integers(0, n_mats, size=len(pairs)).astype(np.intp)
    t = CostTables(
        racks=[f"R{r}" for r in range(n)],
        ids=[f"g{g}" for g in range(k)],
        candidates={f"g{g}": np.flatnonzero(fixed[g] < UNUSED).tolist() for g in range(k)},
        fixed=fixed,
        pair_a=pair_a,
        pair_b=pair_b,
        pair_m=pair_m,
        matrices=matrices,
        partners=_partner_lists(k, pair_a, pair_b, pair_m),
        pair_of={(a, b): int(m) for (a, b), m in zip(pairs, pair_m.tolist(), strict=True)},
    )
    classes = rng.integers(0, 3, size=k)
    state = State(
        tables=t,
        at=np.full(k, -1, dtype=np.intp),
        units=(1 + classes).astype(np.int64),
        power_w=100.0 * (1 + classes),
        room_u=np.full(n, 4 * k // n + 4, dtype=np.int64),
        room_w=np.full(n, 400.0 * k / n + 400, dtype=float),
        rows=tables.cost_rows(t, np.full(k, -1, dtype=np.intp)),
    )
    for g in range(k):
        allowed = [r for r in t.candidates[t.ids[g]] if state.fits(g, r)]
        state.move(g, int(rng.choice(allowed)) if allowed else t.candidates[t.ids[g]][0])
    return state, classes


def same_state(a: State, b: State) -> None:
    assert a.at.tolist() == b.at.tolist()
    assert a.rows.tolist() == b.rows.tolist()
    assert a.room_u.tolist() == b.room_u.tolist()
    assert a.room_w.tolist() == b.room_w.tolist()


@FAST
@given(st.integers(0, 2**32 - 1), st.lists(st.tuples(st.integers(0, 99), st.integers(-1, 99))))
def test_move_takes_the_same_rows_as_the_gathering_move(seed, steps):
    fast, _ = random_state(seed)
    slow = copy.deepcopy(fast)
    k, n = len(fast.at), fast.tables.n_racks
    for g, r in steps:
        fast.move(g % k, r % n if r >= 0 else -1)
        old_move(slow, g % k, r % n if r >= 0 else -1)
        same_state(fast, slow)
    assert fast.rows.tolist() == tables.cost_rows(fast.tables, fast.at).tolist()


@FAST
@given(st.integers(0, 2**32 - 1))
def test_moves_and_swaps_take_the_same_steps(seed):
    fast, classes = random_state(seed)
    slow = copy.deepcopy(fast)
    for _ in range(4):
        assert search._moves(fast) == old_moves(slow)
        same_state(fast, slow)
        assert search._swaps(fast, classes) == old_swaps(slow, classes)
        same_state(fast, slow)


@FAST
@given(st.integers(0, 2**32 - 1))
def test_improving_pairs_are_the_dense_sums_below_zero(seed):
    state, classes = random_state(seed)
    for c in np.unique(classes).tolist():
        members = np.flatnonzero(classes == c)
        racks = state.at[members]
        sub = state.rows[members].take(racks, axis=1)
        gain = sub - np.diagonal(sub)[:, None]
        gain = gain + gain.T
        i, j = np.nonzero(np.triu((gain < 0) & (racks[:, None] != racks[None, :]), 1))
        order = np.argsort(gain[i, j], kind="stable")
        want = (members[i[order]].tolist(), members[j[order]].tolist())
        assert search.improving_pairs(state, members) == want


@FAST
@given(
    st.lists(st.floats(0, 200, allow_nan=False), max_size=30),
    st.lists(st.floats(-5, 250, allow_nan=False), max_size=60),
)
def test_step_index_equals_the_shifted_search(marks, lengths):
    marks = sorted(set(marks))
    steps = StepPrices(marks, [float(i) for i in range(len(marks))], -1.0)
    probe = np.array(
        [*lengths, *marks, np.inf, -np.inf, np.nan]
        + [m + LENGTH_EPS_M for m in marks]
        + [float(np.nextafter(m + LENGTH_EPS_M, d)) for m in marks for d in (-np.inf, np.inf)]
    )
    assert steps(probe).tolist() == pytest.approx(old_steps(steps, probe).tolist(), nan_ok=True)
    assert (steps.index(probe) == np.searchsorted(steps.marks, probe - LENGTH_EPS_M)).all()


@FAST
@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.sampled_from([0.0, -0.0, 1.5, 2.0, np.inf, np.nan, -3.0]), min_size=1, max_size=6),
)
def test_unique_rows_equals_numpy_unique(seed, values):
    rng = np.random.default_rng(seed)
    kinds = rng.choice(np.array(values), size=(int(rng.integers(1, 5)), int(rng.integers(1, 4))))
    x = kinds[rng.integers(0, len(kinds), size=int(rng.integers(1, 30)))]
    want, counts = np.unique(x, axis=0, return_counts=True)
    got, weight = bounds.unique_rows(x)
    assert got.tobytes() == want.tobytes()
    assert weight.dtype == counts.dtype and weight.tolist() == counts.tolist()


@pytest.mark.parametrize(
    ("gpus", "switch", "planes"), [(1024, "qm9700", 1), (2048, "qm9700", 2), (512, "cx864e-n", 1)]
)
@pytest.mark.parametrize("costed", ["design", "length", "power"])
def test_fixed_costs_equal_the_masked_pass(catalog, monkeypatch, gpus, switch, planes, costed):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": [switch], "planes": planes, "topology": "roft"},
        }
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    groups = make_groups(design, floor, catalog, PlacementRulesSpec().group_size)
    cands = candidate_racks(design, floor, groups, PlacementRulesSpec())

    def built(coster):
        return tables.cost_tables(design, floor, catalog, groups, coster, cands)

    def coster():
        if costed == "design":
            return DesignCoster(design, catalog)
        return PowerCoster(design, catalog) if costed == "power" else LengthCoster()

    fast = built(coster())
    monkeypatch.setattr(tables, "_fixed_costs", old_fixed_costs)
    monkeypatch.setattr(tables, "_pair_costs", old_pair_costs)
    slow = built(coster())
    assert fast.fixed.tolist() == slow.fixed.tolist()
    assert fast.matrices.tolist() == slow.matrices.tolist()
    for name in ("pair_a", "pair_b", "pair_m"):
        assert getattr(fast, name).tolist() == getattr(slow, name).tolist()
    assert fast.pair_of == slow.pair_of


def old_cost_rows(t: CostTables, at: np.ndarray) -> np.ndarray:
    rows = t.fixed.astype(np.float64)
    n_groups, n = rows.shape
    for m in range(len(t.matrices)):
        sel = t.pair_m == m
        counts = np.zeros((n_groups, n))
        for mine, theirs in ((t.pair_a[sel], t.pair_b[sel]), (t.pair_b[sel], t.pair_a[sel])):
            placed = at[theirs] >= 0
            np.add.at(counts, (mine[placed], at[theirs[placed]]), 1.0)
        rows += counts @ t.matrices[m].astype(np.float64)
    return np.rint(rows).astype(np.int64)


@FAST
@given(st.integers(0, 2**32 - 1), st.floats(0, 1))
def test_cost_rows_equal_the_product_for_every_matrix(seed, share):
    state, _ = random_state(seed)
    rng = np.random.default_rng(seed)
    at = np.where(rng.random(len(state.at)) < share, state.at, -1)
    assert tables.cost_rows(state.tables, at).tolist() == old_cost_rows(state.tables, at).tolist()


def old_naive_groups(groups, floor) -> np.ndarray | None:
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    free_u = [usable] * len(floor.network_racks)
    free_w = [budget] * len(floor.network_racks)
    at = np.zeros(len(groups), dtype=np.intp)
    first = 0
    for i, g in enumerate(groups):
        for r in range(first, len(free_u)):
            if g.units <= free_u[r] and g.power_w <= free_w[r] + 1e-9:
                free_u[r] -= g.units
                free_w[r] -= g.power_w
                at[i] = r
                break
        else:
            return None
        while first < len(free_u) and free_u[first] < 1:
            first += 1
    return at


@FAST
@given(
    st.lists(st.tuples(st.integers(1, 12), st.sampled_from([0.1, 0.3, 250.0, 1000.0, 3333.3]))),
    st.integers(0, 12),
    st.integers(1, 24),
    st.sampled_from([0.3, 0.6, 1000.0, 5000.0, 9999.9]),
)
def test_naive_groups_equal_rack_by_rack_first_fit(sizes, n_racks, height, budget):
    floor = SimpleNamespace(
        layout=SimpleNamespace(
            rack_height_u=height, network_rack_reserved_u=0, network_rack_power_w=budget
        ),
        network_racks=[f"N{r}" for r in range(n_racks)],
    )
    groups = [
        Group(f"g{i}", "leaf", 1, 0, (f"s{i}",), u, w, "leaf") for i, (u, w) in enumerate(sizes)
    ]
    want = old_naive_groups(groups, floor)
    got = naive_groups(groups, floor)  # type: ignore[arg-type]
    assert (got is None) == (want is None)
    if got is not None and want is not None:
        assert got.tolist() == want.tolist()


@FAST
@given(st.integers(0, 2**32 - 1), st.booleans(), st.integers(1, 60))
def test_arcs_are_the_nonzero_of_the_kept_mask(seed, pruned, keep):
    rng = np.random.default_rng(seed)
    k, n = int(rng.integers(0, 30)), int(rng.integers(1, 90))
    costs = rng.integers(0, 20, size=(k, n)).astype(np.int64)
    costs[rng.random((k, n)) < 0.2] = UNUSED
    before = rng.integers(-1, n, size=k)
    full, kept = search.FULL_ARCS, search.KEEP_RACKS
    search.FULL_ARCS, search.KEEP_RACKS = 0, keep
    try:
        g, r = search._arcs(costs, before, pruned)
    finally:
        search.FULL_ARCS, search.KEEP_RACKS = full, kept
    allowed = costs < UNUSED
    if pruned and k * n > 0:
        mask = np.zeros_like(allowed)
        order = np.argsort(costs, axis=1, kind="stable")[:, :keep]
        np.put_along_axis(mask, order, True, axis=1)
        placed = before >= 0
        mask[np.flatnonzero(placed), before[placed]] = True
        allowed &= mask
    want_g, want_r = np.nonzero(allowed)
    assert g.dtype == np.int64 and r.dtype == np.int64
    assert g.tolist() == want_g.tolist() and r.tolist() == want_r.tolist()
