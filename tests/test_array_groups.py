"""Grouping by sorting (``railplan.array_groups``) against Python's own sort and dict."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from railplan.array_groups import group_numbers, sort_groups, string_codes

ROWS = st.lists(st.tuples(st.integers(-3, 3), st.integers(0, 2)), max_size=40)


@given(ROWS)
def test_rows_sorted_stably_and_runs_of_equal_rows_found(rows: list[tuple[int, int]]) -> None:
    a = np.array([r[0] for r in rows], np.int64)
    b = np.array([r[1] for r in rows], np.int64)
    order, starts = sort_groups(a, b)
    assert order.tolist() == sorted(range(len(rows)), key=lambda i: rows[i])  # stable
    ranked = [rows[i] for i in order.tolist()]
    assert starts.tolist() == [
        i for i in range(len(ranked)) if i == 0 or ranked[i] != ranked[i - 1]
    ]
    distinct = sorted(set(rows))
    assert group_numbers(a, b).tolist() == [distinct.index(r) for r in rows]


@given(st.lists(st.sampled_from(["", "ib", "eth", "x"]), max_size=30))
def test_string_codes_number_the_sorted_distinct_values(values: list[str]) -> None:
    distinct = sorted(set(values))
    assert string_codes(values).tolist() == [distinct.index(v) for v in values]


def test_object_array_keeps_each_value_one_element() -> None:
    from railplan.array_groups import object_array

    values = ["a", (400, 200), (), "b"]
    out = object_array(values)
    assert out.shape == (4,) and out.dtype == object and out.tolist() == values
    assert object_array([]).shape == (0,)
