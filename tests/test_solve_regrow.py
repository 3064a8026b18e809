"""solve.regrow: the switch pairing that keeps the most cables, against brute force."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.solve.regrow import check_mapping, relaxed_bound, solve_regrow


def _brute(gain: list[dict[int, int]], n_new: int) -> int:
    best = 0
    slots = list(range(n_new)) + [None] * len(gain)
    for pick in itertools.permutations(slots, len(gain)):
        total = sum(gain[i].get(j, 0) for i, j in enumerate(pick) if j is not None)
        best = max(best, total)
    return best


@settings(max_examples=25, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n_old: st.integers(1, 4).flatmap(
            lambda n_new: st.tuples(
                st.just(n_new),
                st.lists(
                    st.dictionaries(st.integers(0, n_new - 1), st.integers(0, 9), max_size=n_new),
                    min_size=n_old,
                    max_size=n_old,
                ),
            )
        )
    )
)
def test_the_pairing_is_optimal_and_the_bound_holds(case):
    n_new, gain = case
    sol = solve_regrow(gain)
    best = _brute(gain, n_new)
    assert sol.kept == best == check_mapping(gain, sol.mapping)
    assert sol.upper_kept >= best and relaxed_bound(gain) >= best
    assert sol.gap == sol.upper_kept - sol.kept >= 0


def test_the_relaxation_counts_a_contested_switch_twice():
    # both installed switches keep most on new switch 0; only one can have it (10 beats 1 + 8)
    gain = [{0: 10, 1: 1}, {0: 8}]
    sol = solve_regrow(gain)
    assert relaxed_bound(gain) == 18
    assert sol.kept == 10 and sol.mapping == {0: 0}
    assert sol.status == "optimal" and sol.upper_kept == 10


def test_a_mapping_that_reuses_a_switch_is_refused():
    with pytest.raises(ValueError, match="same new switch"):
        check_mapping([{0: 1}, {0: 1}], {0: 0, 1: 0})
    with pytest.raises(ValueError, match="cannot become"):
        check_mapping([{0: 1}], {0: 3})
