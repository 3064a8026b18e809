"""Max-min fairness by progressive filling: textbook cases, theory, a reference solver."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from railplan.traffic.hashing import expected_permutation_throughput
from railplan.traffic.maxmin import Incidence, MaxMinError, max_min_fair


def reference_max_min(a: np.ndarray, cap: np.ndarray, demand: np.ndarray) -> np.ndarray:
    """Slow textbook water-filling, one bottleneck at a time (for cross-checking)."""
    n_links, n_flows = a.shape
    rate = np.zeros(n_flows)
    frozen = np.zeros(n_flows, dtype=bool)
    residual = cap.astype(float).copy()
    while not frozen.all():
        active = ~frozen
        growth = a[:, active].sum(axis=1)
        best, best_link = math.inf, -1
        for link in range(n_links):
            if growth[link] > 1e-12 and residual[link] / growth[link] < best:
                best, best_link = residual[link] / growth[link], link
        flow_best = (demand[active] - rate[active]).min()
        inc = min(best, flow_best)
        rate[active] += inc
        residual -= growth * inc
        hit = active & (demand - rate <= 1e-9)
        if best <= flow_best and best_link >= 0:
            full = residual <= 1e-9
            hit |= active & (a[full].sum(axis=0) > 0)
        frozen |= hit
    return rate


def test_one_link_capacity_10_demands_2_26_4_5() -> None:
    rates = max_min_fair([[1, 1, 1, 1]], [10], [2, 2.6, 4, 5])
    assert rates == pytest.approx([2, 2.6, 2.7, 2.7])


def test_parking_lot_one_long_three_short_flows_all_get_half() -> None:
    # flow 0 crosses links 0,1,2; flows 1,2,3 cross one link each; unit capacities
    a = [[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]]
    assert max_min_fair(a, [1, 1, 1]) == pytest.approx([0.5, 0.5, 0.5, 0.5])


def test_fluid_split_weights() -> None:
    # flow 0 sprayed half/half over links 0 and 1; flow 1 only on link 0 -> both 2/3
    a = [[0.5, 1.0], [0.5, 0.0]]
    assert max_min_fair(a, [1, 1]) == pytest.approx([2 / 3, 2 / 3])


def test_factored_incidence_equals_expanded() -> None:
    rng = np.random.default_rng(3)
    direct = sparse.random(6, 40, density=0.1, random_state=4, format="csc")
    direct.data[:] = 1.0
    via = sparse.csr_matrix(rng.random((6, 3)) * (rng.random((6, 3)) < 0.6))
    member = sparse.csc_matrix((np.ones(40), (rng.integers(0, 3, 40), np.arange(40))), (3, 40))
    cap = rng.uniform(1, 5, 6)
    factored = max_min_fair(Incidence(direct, via, member), cap, np.full(40, 10.0))
    expanded = max_min_fair(direct + via @ member, cap, np.full(40, 10.0))
    assert factored == pytest.approx(expanded)


@pytest.mark.parametrize("seed", range(6))
def test_matches_reference_solver_on_random_instances(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_links, n_flows = 12, 60
    a = (rng.random((n_links, n_flows)) < 0.2).astype(float)
    a[rng.integers(0, n_links, n_flows), np.arange(n_flows)] = 1.0  # every flow on a link
    cap = rng.integers(1, 6, n_links).astype(float)
    demand = rng.choice([np.inf, 0.3, 1.0], size=n_flows)
    got = max_min_fair(sparse.csr_matrix(a), cap, demand)
    assert got == pytest.approx(reference_max_min(a, cap, demand), rel=1e-6)
    assert (a @ got <= cap + 1e-9).all()


def test_progress_reports_every_flow_frozen() -> None:
    seen: list[tuple[int, int]] = []
    max_min_fair([[1, 1, 0], [0, 1, 1]], [1, 2], progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (3, 3)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_unbounded_flow_is_refused() -> None:
    with pytest.raises(MaxMinError):
        max_min_fair(sparse.csr_matrix((1, 1)), [1.0])


def test_random_permutation_on_n_links_keeps_one_minus_one_minus_1_over_n_to_the_n() -> None:
    """n unit flows hashed uniformly onto n unit links: mean throughput 1-(1-1/n)^n.

    All trials are solved at once as one block-diagonal problem (trial t owns links t*n..).
    Tolerance: 4 standard errors of the trial mean (per-trial s.d. < 0.2 for n = 8).
    """
    n, trials = 8, 2000
    rng = np.random.default_rng(5)
    link = rng.integers(0, n, size=(trials, n)) + n * np.arange(trials)[:, None]
    flows = np.arange(trials * n)
    a = sparse.csc_matrix((np.ones(flows.size), (link.ravel(), flows)), (trials * n, flows.size))
    rates = max_min_fair(a, np.ones(trials * n), np.ones(flows.size))
    throughput = rates.reshape(trials, n).sum(axis=1) / n
    tol = 4 * 0.2 / math.sqrt(trials)
    assert throughput.mean() == pytest.approx(expected_permutation_throughput(n), abs=tol)
