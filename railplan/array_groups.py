"""Rows of numpy columns grouped by sorting: the one way the array passes over links group.

numpy 2's ``np.unique`` without inverse or counts hashes, some 100 times slower than sorting on
many distinct values here, so the passes group by a stable sort of their key columns instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def sort_groups(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, starts)``: the row indices sorted by ``columns`` (the first most significant;
    equal rows keep their row order) and where each run of equal rows begins in ``order``."""
    n = len(columns[0])
    order = np.lexsort(columns[::-1]) if n else np.zeros(0, np.int64)
    new = np.zeros(n, bool)
    if n:
        new[0] = True
        for column in columns:
            ranked = column[order]
            new[1:] |= ranked[1:] != ranked[:-1]
    return order, np.flatnonzero(new)


def numbers_of(order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each row's group number from ``sort_groups``'s answer (0, 1, ... in sorted order)."""
    new = np.zeros(len(order), np.int64)
    new[starts] = 1
    out = np.empty(len(order), np.int64)
    out[order] = np.cumsum(new) - 1
    return out


def group_numbers(*columns: np.ndarray) -> np.ndarray:
    """Each row's group: equal rows share a number, groups numbered 0, 1, ... in sorted order."""
    return numbers_of(*sort_groups(*columns))


def object_array(values: Sequence[object]) -> np.ndarray:
    """``values`` as a one-dimensional object array, each value one element (a tuple too),
    filled in C; indexing it with rows reads the values without a call per row."""
    return np.fromiter(values, dtype=object, count=len(values))


def string_codes(values: list[str]) -> np.ndarray:
    """Each value's number among the distinct values, in sorted order."""
    code = {v: i for i, v in enumerate(sorted(set(values)))}
    return np.fromiter(map(code.__getitem__, values), np.int64, len(values))
