"""Routed lengths over arrays round each distinct length once and give what ``route_length_m``
gives link by link (zeros keep their sign); link counts by kind counted in C are the loop's."""

from __future__ import annotations

import functools
import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan import load_spec, plan
from railplan.catalog import load_catalog
from railplan.physical.floor import End, Floor, build_floor
from tests.test_link_arrays import EXAMPLES


@functools.cache
def floor() -> Floor:
    spec = load_spec(EXAMPLES / "seed001-64gpu.yaml")
    catalog = load_catalog()
    return build_floor(plan(spec, catalog), spec.layout, catalog)


def same(x: float, y: float) -> bool:
    return (x == y and math.copysign(1, x) == math.copysign(1, y)) or (x != x and y != y)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_lengths_over_arrays_are_the_link_by_link_lengths(data: st.DataObject) -> None:
    f = floor()
    racks = [r.id for r in f.racks][:6]
    heights = st.sampled_from([0.0, 0.0445, 0.5, 1.0001, 1.23456, 2.0])
    spots = data.draw(
        st.lists(st.builds(End, st.sampled_from(racks), heights), min_size=1, max_size=8)
    )
    pairs = data.draw(
        st.lists(st.tuples(*(st.integers(0, len(spots) - 1),) * 2), min_size=1, max_size=30)
    )
    a = np.array([p[0] for p in pairs], np.int64)
    b = np.array([p[1] for p in pairs], np.int64)
    got = f.route_lengths_m(spots, a, b)
    want = [f.route_length_m(spots[i], spots[j]) for i, j in pairs]
    assert all(map(same, got, want)), (got, want)


def test_link_counts_are_the_loops() -> None:
    design = plan(load_spec(EXAMPLES / "h100-16k-3tier.yaml"), load_catalog())
    counted = Counter(lk.kind.replace("-", "_") for lk in design.links)
    got = design.link_counts()
    assert {k: v for k, v in got.items() if v} == dict(counted)
    assert list(got) == ["node_leaf", "leaf_spine", "spine_core", "leaf_leaf", "device_leaf"]
