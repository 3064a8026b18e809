"""Pricing every placement: the cheapest that fits, against a plain loop over all of them."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.solve.placement import exhaustive
from railplan.solve.placement.tables import UNUSED, CostTables


@st.composite
def problems(draw):
    n_racks = draw(st.integers(1, 4))
    n_groups = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    candidates = {
        f"g{g}": sorted(
            rng.choice(n_racks, size=rng.integers(1, n_racks + 1), replace=False).tolist()
        )
        for g in range(n_groups)
    }
    fixed = np.full((n_groups, n_racks), UNUSED, dtype=np.int64)
    for g in range(n_groups):
        fixed[g, candidates[f"g{g}"]] = rng.integers(0, 50, size=len(candidates[f"g{g}"]))
    pairs = [(a, b) for a in range(n_groups) for b in range(a + 1, n_groups) if rng.random() < 0.6]
    mats = []
    for _ in pairs:
        m = rng.integers(0, 40, size=(n_racks, n_racks))
        mats.append(m + m.T)
    tables = CostTables(
        racks=[f"R{r}" for r in range(n_racks)],
        ids=list(candidates),
        candidates=candidates,
        fixed=fixed,
        pair_a=np.array([a for a, _ in pairs], dtype=np.intp),
        pair_b=np.array([b for _, b in pairs], dtype=np.intp),
        pair_m=np.arange(len(pairs), dtype=np.intp),
        matrices=np.array(mats, dtype=np.int64).reshape(len(pairs), n_racks, n_racks),
        partners=[],
        pair_of={p: i for i, p in enumerate(pairs)},
    )
    units = rng.integers(1, 4, size=n_groups)
    power = rng.integers(100, 400, size=n_groups).astype(float)
    room = (int(rng.integers(2, 8)), float(rng.integers(300, 1200)))
    return tables, units, power, room


def _loop(tables, units, power, room):
    best = None
    for at in itertools.product(*(tables.candidates[g] for g in tables.ids)):
        used_u = np.zeros(tables.n_racks)
        used_w = np.zeros(tables.n_racks)
        for g, r in enumerate(at):
            used_u[r] += units[g]
            used_w[r] += power[g]
        if (used_u > room[0]).any() or (used_w > room[1] + 1e-9).any():
            continue
        cost = sum(int(tables.fixed[g, r]) for g, r in enumerate(at))
        for e, (a, b) in enumerate(zip(tables.pair_a, tables.pair_b, strict=True)):
            cost += int(tables.matrices[tables.pair_m[e], at[a], at[b]])
        if best is None or cost < best[1]:  # the first of equal costs, as the pricing keeps
            best = (list(at), cost)
    return best


@settings(max_examples=150, deadline=None)
@given(problems())
def test_the_cheapest_placement_that_fits_is_found(problem):
    tables, units, power, room = problem
    expected = _loop(*problem)
    found = exhaustive.best_placement(tables, units, power, room)
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert (found[0].tolist(), found[1]) == (expected[0], expected[1])


def test_batches_agree_with_one_batch(monkeypatch):
    """A problem cut into many batches gives the answer of one batch (ties included)."""
    rng = np.random.default_rng(7)
    n_racks, n_groups = 4, 6
    candidates = {f"g{g}": list(range(n_racks)) for g in range(n_groups)}
    fixed = rng.integers(0, 5, size=(n_groups, n_racks)).astype(np.int64)
    tables = CostTables(
        racks=[f"R{r}" for r in range(n_racks)],
        ids=list(candidates),
        candidates=candidates,
        fixed=fixed,
        pair_a=np.zeros(0, dtype=np.intp),
        pair_b=np.zeros(0, dtype=np.intp),
        pair_m=np.zeros(0, dtype=np.intp),
        matrices=np.zeros((0, n_racks, n_racks), dtype=np.int64),
        partners=[],
        pair_of={},
    )
    units = np.ones(n_groups, dtype=np.int64)
    power = np.full(n_groups, 10.0)
    whole = exhaustive.best_placement(tables, units, power, (2, 100.0))
    monkeypatch.setattr(exhaustive, "CHUNK", 7)
    cut = exhaustive.best_placement(tables, units, power, (2, 100.0))
    assert whole is not None and cut is not None
    assert (whole[0].tolist(), whole[1]) == (cut[0].tolist(), cut[1])
