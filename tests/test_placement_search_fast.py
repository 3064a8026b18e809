"""Placement search's round of moves and the partner slices against what they replaced.

The moves must be the very same steps in the same order: the placement, hence design.json,
may not change by a byte.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.solve.placement import search
from railplan.solve.placement.search import State
from railplan.solve.placement.tables import UNUSED, as_slice
from tests.test_placement_fast_paths import random_state, same_state

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def dense_moves(state: State) -> int:
    """The round of moves as it was: the room of every group in every rack, masked."""
    at, rows = state.at, state.rows
    here = rows[np.arange(len(at)), at]
    room = (state.room_u[None, :] >= state.units[:, None]) & (
        state.room_w[None, :] + 1e-9 >= state.power_w[:, None]
    )
    room &= rows < UNUSED
    best = np.argmin(np.where(room, rows, UNUSED), axis=1)
    delta = rows[np.arange(len(at)), best] - here
    delta[~room[np.arange(len(at)), best]] = 0
    done = 0
    for g in np.argsort(delta, kind="stable").tolist():
        if delta[g] >= 0:
            break
        r = int(best[g])
        if state.fits(g, r) and rows[g, r] < rows[g, at[g]]:
            state.move(g, r)
            done += 1
    return done


@FAST
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 2, 16, 1000]), st.booleans())
def test_moves_take_the_same_steps_as_the_dense_pass(seed, max_runs, sort_kinds):
    fast, classes = random_state(seed)
    if sort_kinds:  # groups role by role, as placement lists them: few runs of alike groups
        order = np.argsort(fast.units, kind="stable")
        fast.units, fast.power_w = fast.units[order], fast.power_w[order]
        fast.room_u[:] = 10**6
        fast.room_w[:] = 1e9
    rng = np.random.default_rng(seed)
    fast.room_u[rng.random(len(fast.room_u)) < 0.3] = 0  # some racks full
    slow = copy.deepcopy(fast)
    saved = search.MAX_RUNS
    search.MAX_RUNS = max_runs
    try:
        for _ in range(3):
            assert search._moves(fast) == dense_moves(slow)
            same_state(fast, slow)
            assert search._swaps(fast, classes) == search._swaps(slow, classes)
            same_state(fast, slow)
    finally:
        search.MAX_RUNS = saved


@given(st.lists(st.integers(0, 50), max_size=12, unique=True))
def test_a_run_selects_the_same_rows(ids):
    ids = np.array(sorted(ids), dtype=np.intp)
    run = as_slice(ids)
    rows = np.arange(60 * 3).reshape(60, 3)
    assert rows[run].tolist() == rows[ids].tolist()
    if len(ids) and (len(ids) < 3 or len(set(np.diff(ids).tolist())) == 1):
        assert isinstance(run, slice)  # evenly stepped: a view, updated in place


@pytest.mark.parametrize("ids", [[3, 4, 5], [0, 4, 8, 12], [7], [1, 2, 4]])
def test_evenly_stepped_partners_are_a_slice(ids):
    run = as_slice(np.array(ids))
    assert isinstance(run, slice) == (ids != [1, 2, 4])
