"""Placement's fixed costs and pair matrices against the passes they replaced (oracles).

The tables must hold the very same integers, whichever way a block's runs of rows are summed
and however the pairs' bundles are numbered.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import plan
from railplan.design import Link
from railplan.physical.costers import DesignCoster, LengthCoster
from railplan.physical.floor import build_floor
from railplan.solve.placement import tables
from railplan.solve.placement.groups import candidate_racks, make_groups
from railplan.spec import PlacementRulesSpec, spec_from_dict
from tests.test_placement_fast_paths import old_fixed_costs, old_pair_costs, random_state

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(("gpus", "planes"), [(1024, 1), (4096, 2)])
@pytest.mark.parametrize("run_sum", [1, 1 << 30])  # every run alone; add.reduceat always
@pytest.mark.parametrize("block", [1 << 8, tables.BLOCK])
@pytest.mark.parametrize("costed", ["design", "length"])
def test_fixed_costs_equal_the_masked_pass(
    catalog, monkeypatch, gpus, planes, run_sum, block, costed
):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"], "planes": planes, "topology": "roft"},
        }
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    groups = make_groups(design, floor, catalog, PlacementRulesSpec().group_size)
    cands = candidate_racks(design, floor, groups, PlacementRulesSpec())
    coster = DesignCoster(design, catalog) if costed == "design" else LengthCoster()
    monkeypatch.setattr(tables, "RUN_SUM_ENTRIES", run_sum)
    monkeypatch.setattr(tables, "BLOCK", block)  # blocks that cut a group's rows in two
    fast = tables.cost_tables(design, floor, catalog, groups, coster, cands)
    monkeypatch.setattr(tables, "_fixed_costs", old_fixed_costs)
    slow = tables.cost_tables(design, floor, catalog, groups, coster, cands)
    assert fast.fixed.tolist() == slow.fixed.tolist()


class KeyedCoster:
    """Prices a link of key k at (k + 1) times its length, plus k cents' worth."""

    def key(self, link: Link) -> Hashable:
        raise NotImplementedError  # the tables are given their keys

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        return float(self.costs(key, np.array([length_m]))[0])

    def costs(self, key: Hashable, lengths_m: np.ndarray) -> np.ndarray:
        k = int(key)  # type: ignore[call-overload]
        return (k + 1) * np.asarray(lengths_m, dtype=float) + k / 100


@FAST
@given(st.integers(0, 2**32 - 1))
def test_pair_costs_equal_the_bundle_by_bundle_pass(seed):
    rng = np.random.default_rng(seed)
    n, n_groups, n_keys = int(rng.integers(1, 7)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
    lo = rng.integers(0, n_groups, size=int(rng.integers(1, 60)))
    hi = np.minimum(n_groups - 1, lo + rng.integers(0, 3, size=len(lo)))  # some within a group
    pair_rows = np.stack([lo, hi, rng.integers(0, n_keys, size=len(lo))], axis=1)
    lengths = np.round(rng.random((n, n)) * 30, 3)
    keys: list[Hashable] = list(range(n_keys))
    fast_fixed = rng.integers(0, 1000, size=(n_groups, n)).astype(np.int64)
    slow_fixed = fast_fixed.copy()
    fast = tables._pair_costs(KeyedCoster(), keys, pair_rows, lengths, fast_fixed)
    slow = old_pair_costs(KeyedCoster(), keys, pair_rows, lengths, slow_fixed)
    for got, want in zip(fast, slow, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tolist() == want.tolist()
    assert fast_fixed.tolist() == slow_fixed.tolist()


def unique_counted(rows: np.ndarray, sizes: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    """``_counted`` as it was: np.unique of the codes."""
    if not len(rows):
        return rows.reshape(0, 3), np.zeros(0, dtype=np.int64)
    _, n1, n2 = sizes
    code = (rows[:, 0] * n1 + rows[:, 1]) * n2 + rows[:, 2]
    codes, counts = np.unique(code, return_counts=True)
    return np.stack([codes // (n1 * n2), (codes // n2) % n1, codes % n2], axis=1), counts


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(0, 300), st.booleans())
def test_counted_rows_equal_numpy_unique(seed, size, in_runs):
    rng = np.random.default_rng(seed)
    sizes = (int(rng.integers(1, 50)), int(rng.integers(1, 50)), int(rng.integers(1, 4)))
    rows = np.stack([rng.integers(0, s, size=size) for s in sizes], axis=1).astype(np.int64)
    if in_runs:  # sorted runs, as links come
        cut = sorted(rng.integers(0, size + 1, size=3).tolist())
        for lo, hi in zip([0, *cut], [*cut, size], strict=True):
            rows[lo:hi] = rows[lo:hi][np.lexsort(rows[lo:hi].T[::-1])]
    got, counts = tables._counted(rows, sizes)
    want, want_counts = unique_counted(rows, sizes)
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert counts.dtype == want_counts.dtype and counts.tolist() == want_counts.tolist()


def split_partners(t: tables.CostTables) -> list[list[tuple[np.ndarray | slice, int]]]:
    """``partners_by_matrix`` as it was: each group's partner list split matrix by matrix."""
    out: list[list[tuple[np.ndarray | slice, int]]] = []
    for others, mats in t.partners:
        ms = np.unique(mats).tolist()
        out.append(
            [(tables.as_slice(others if len(ms) == 1 else others[mats == m]), m) for m in ms]
        )
    return out


def same_partners(got, want) -> None:
    assert len(got) == len(want)
    for g_list, w_list in zip(got, want, strict=True):
        assert [m for _, m in g_list] == [m for _, m in w_list]
        for (g_ids, _), (w_ids, _) in zip(g_list, w_list, strict=True):
            assert type(g_ids) is type(w_ids)
            if isinstance(g_ids, slice):
                assert g_ids == w_ids
            else:
                assert g_ids.dtype == w_ids.dtype and g_ids.tolist() == w_ids.tolist()


@FAST
@given(st.integers(0, 2**32 - 1))
def test_partners_by_matrix_equal_the_group_by_group_split(seed):
    state, _ = random_state(seed)
    t = state.tables
    t.__dict__.pop("partners_by_matrix", None)
    same_partners(t.partners_by_matrix, split_partners(t))
    if seed % 4 == 0:  # every 3rd group a partner of group 0: stepped runs
        k = len(t.ids)
        b = np.arange(1, k, 3, dtype=np.intp)
        t.pair_a, t.pair_b = np.zeros(len(b), dtype=np.intp), b
        t.pair_m = np.zeros(len(b), dtype=np.intp)
        t.partners = tables._partner_lists(k, t.pair_a, t.pair_b, t.pair_m)
        t.__dict__.pop("partners_by_matrix", None)
        same_partners(t.partners_by_matrix, split_partners(t))
