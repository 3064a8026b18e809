"""What kicks remember: role flows by their whole input, and starts already settled.

Both only skip work whose answer is known: the placement, hence design.json, is the very one
the kicks found when they solved and settled everything afresh (the loop they replaced is
kept here as the oracle).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import plan
from railplan.design import design_to_json
from railplan.pipeline.layout import complete
from railplan.solve.placement import driver, kicks, search
from railplan.solve.placement.kicks import Kicked, _copy
from railplan.solve.placement.search import RoleSolver, State, place_roles
from railplan.spec import spec_from_dict
from tests.test_placement_fast_paths import random_state

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _alike(state: State) -> np.ndarray:
    """The largest run of groups of one size (a role ``flow_role`` can place)."""
    sizes = state.units.tolist()
    common = max(set(sizes), key=sizes.count)
    return np.flatnonzero(state.units == common)


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(0, 2))
def test_a_remembered_flow_is_the_flow_of_that_very_input(seed, change):
    state, _ = random_state(seed)
    members = _alike(state)
    before = state.at[members].copy()
    for g in members.tolist():
        state.move(g, -1)
    solved: list[int] = []
    real = search.flow_role

    def counted(st_: State, m: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        solved.append(1)
        return real(st_, m, b)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(search, "flow_role", counted)
        remembered = search.remembered_flows()
        first = remembered(state, members, before)
        again = remembered(state, members, before)
        assert len(solved) == 1  # the same input: no second solve
        fresh = real(state, members, before)
        assert (first is None) == (again is None) == (fresh is None)
        if first is not None and again is not None and fresh is not None:
            assert first.tolist() == again.tolist() == fresh.tolist()
            first[:] = -7  # answers are copies: spoiling one spoils no later hit
            hit = remembered(state, members, before)
            assert hit is not None and hit.tolist() == fresh.tolist()
        # any part of the input changed is solved afresh
        if change == 0:
            state.room_u[0] -= 1
        elif change == 1:
            state.rows[members[0], 0] += 1
        else:
            before = before.copy()
            before[0] = -1  # every member stood in a rack: now the first did not
        solved.clear()
        changed = remembered(state, members, before)
        assert len(solved) == 1
        fresh = real(state, members, before)
        assert (changed is None) == (fresh is None)
        if changed is not None and fresh is not None:
            assert changed.tolist() == fresh.tolist()


def reference_kick(
    state: State,
    order: Sequence[np.ndarray],
    candidates: Sequence[Sequence[int]],
    solve_role: RoleSolver,
    settle: Callable[[State], int],
    max_kicks: int = kicks.MAX_KICKS,
) -> Kicked:
    """The kicks as they were before starts were remembered: every start settled."""
    best, cost = state, state.cost()
    count = gained = 0
    swept_with_gain = True
    while swept_with_gain:
        swept_with_gain = False
        for role, members in enumerate(order):
            if role == 0:
                continue
            others = [m for i, m in enumerate(order) if i != role]
            for g in members.tolist():
                mine = np.asarray(candidates[g], dtype=np.intp)
                by_cost = mine[np.argsort(best.rows[g, mine], kind="stable")].tolist()
                for rack in by_cost:
                    if rack == best.at[g]:
                        continue
                    trial = _copy(best)
                    trial.move(g, -1)
                    if not trial.fits(g, rack):
                        continue
                    if count >= max_kicks:
                        return Kicked(best, cost, count, gained)
                    count += 1
                    trial.move(g, rack)
                    if not place_roles(trial, others, solve_role) or (trial.at < 0).any():
                        continue
                    found = settle(trial)
                    if found < cost:
                        best, cost = trial, found
                        gained += 1
                        swept_with_gain = True
    return Kicked(best, cost, count, gained)


@pytest.mark.parametrize(("gpus", "planes", "switch"), [(2048, 4, "qm9700"), (2048, 2, "qm9700")])
def test_kicks_that_remember_place_as_kicks_that_solve_everything(
    catalog, gpus, planes, switch, monkeypatch
):
    """2,048 GPUs of four planes start 11 of 31 kicks where an earlier one started."""
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": [switch], "planes": planes, "topology": "roft"},
        }
    )
    design = plan(spec, catalog)
    settled: list[int] = []
    real_kick = kicks.kick

    def counting(state, order, candidates, solve_role, settle, *rest, **kwargs):
        def counted(trial: State) -> int:
            settled.append(1)
            return settle(trial)

        return real_kick(state, order, candidates, solve_role, counted, *rest, **kwargs)

    monkeypatch.setattr(driver, "kick", counting)
    laid, report = complete(design, spec, catalog)
    remembered = len(settled)
    settled.clear()
    monkeypatch.setattr(driver, "kick", reference_kick)
    monkeypatch.setattr(driver, "remembered_flows", lambda: search.flow_role)
    fresh, fresh_report = complete(design, spec, catalog)
    assert design_to_json(laid) == design_to_json(fresh)
    assert dataclasses.replace(report, wall_time_s=0) == dataclasses.replace(
        fresh_report, wall_time_s=0
    )
    assert "kicks" in report.method
    if planes == 4:
        assert remembered < 31  # some starts were known
