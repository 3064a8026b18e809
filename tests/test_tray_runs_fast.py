"""TrayTable.runs_m and Floor.tray_table_m against the gathers they replaced (kept as oracles).

The run table feeds the placement's cost tables: every entry must be the very same float.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import plan
from railplan.physical import trays
from railplan.physical.floor import build_floor
from railplan.physical.trays import TrayTable
from railplan.spec import spec_from_dict
from tests.test_placement_tables import LAYOUTS

FAST = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def old_runs_m(table: TrayTable, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.intp), np.asarray(b, dtype=np.intp)
    best = np.where(
        table.segment[a][:, None] == table.segment[b][None, :],
        np.abs(table.along_m[a][:, None] - table.along_m[b][None, :]),
        np.inf,
    )
    for x in (0, 1):
        for y in (0, 1):
            via = table.between[np.ix_(table.ends[a, x], table.ends[b, y])]
            via += table.to_end_m[a, x][:, None]
            via += table.to_end_m[b, y][None, :]
            np.minimum(best, via, out=best)
    best += table.drop_m[a][:, None]
    best += table.drop_m[b][None, :]
    best[a[:, None] == b[None, :]] = 0.0
    return best


def random_table(rng: np.random.Generator) -> TrayTable:
    """Points, segments between them and racks dropped on the segments, all at random (runs
    with many digits, some points joined by no tray, zero drops or not)."""
    n_points, n_segments = int(rng.integers(2, 9)), int(rng.integers(1, 7))
    seg_ends = np.stack([rng.choice(n_points, 2, replace=False) for _ in range(n_segments)])
    lengths = rng.random(n_segments) * 40
    between = rng.random((n_points, n_points)) * 60
    between[rng.random((n_points, n_points)) < 0.15] = np.inf
    np.fill_diagonal(between, 0.0)
    n = int(rng.integers(1, 25))
    segment = rng.integers(0, n_segments, size=n).astype(np.intp)
    along = rng.random(n) * lengths[segment]
    drop = rng.random(n) * 2 if rng.random() < 0.5 else np.zeros(n)
    return TrayTable(
        index={f"r{i}": i for i in range(n)},
        drop_m=drop,
        segment=segment,
        along_m=along,
        ends=seg_ends[segment].astype(np.intp).reshape(-1, 2),
        to_end_m=np.stack([along, lengths[segment] - along], axis=1),
        between=between,
    )


@FAST
@given(st.integers(0, 2**32 - 1), st.integers(1, 40))
def test_runs_equal_the_dense_gathers(seed, block):
    rng = np.random.default_rng(seed)
    table = random_table(rng)
    n = len(table.index)
    a = rng.integers(0, n, size=int(rng.integers(0, 30)))
    b = rng.integers(0, n, size=int(rng.integers(0, 30)))
    saved = trays.RUNS_BLOCK
    trays.RUNS_BLOCK = block  # blocks of one row up to the whole table
    try:
        got = table.runs_m(a, b)
    finally:
        trays.RUNS_BLOCK = saved
    want = old_runs_m(table, a, b)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    for i, j in rng.integers(0, n, size=(5, 2)).tolist():
        one = table.runs_m(np.array([i]), np.array([j]))[0, 0]
        assert one == table.run_m(i, j) or (np.isinf(one) and np.isinf(table.run_m(i, j)))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_floor_tables_equal_the_dense_gathers(catalog, layout):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 2048, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"], "planes": 2},
            "layout": layout,
        }
    )
    floor = build_floor(plan(spec, catalog), spec.layout, catalog)
    ids = [r.id for r in floor.racks]
    net = list(floor.network_racks)
    ix = floor.trays.index
    for rows, cols in ((ids, ids), (net, net), (ids[::3], net)):
        a = np.array([ix[r] for r in rows])
        b = np.array([ix[r] for r in cols])
        want = old_runs_m(floor.trays, a, b)
        assert floor.trays.runs_m(a, b).tobytes() == want.tobytes()
        assert floor.tray_table_m(rows, cols).tobytes() == np.round(want, 6).tobytes()
