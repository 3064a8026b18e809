"""Max-min fair rates by progressive filling, vectorized over a sparse links x flows matrix."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from railplan.errors import RailplanError

Progress = Callable[[int, int], None]


class MaxMinError(RailplanError):
    """The max-min problem is malformed (a flow with no link and no demand, bad shapes)."""


@dataclass
class Incidence:
    """Which share of each flow crosses each link: ``direct + via @ member`` (links x flows).

    ``via`` (links x commodities) and ``member`` (commodities x flows) factor the part many
    flows share, e.g. the fabric split of adaptive routing, without expanding it per flow.
    """

    direct: sparse.csc_matrix
    via: sparse.csr_matrix | None = None
    member: sparse.csc_matrix | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return self.direct.shape

    def load(self, x: NDArray) -> NDArray:
        """Per-link load when flow f sends x[f]."""
        y = self.direct @ x
        if self.via is not None and self.member is not None:
            y = y + self.via @ (self.member @ x)
        return np.asarray(y)

    def touch(self, s: NDArray) -> NDArray:
        """Per-flow sum of s over the links the flow crosses (weighted)."""
        z = self.direct.T @ s
        if self.via is not None and self.member is not None:
            z = z + self.member.T @ (self.via.T @ s)
        return np.asarray(z)

    def take(self, cols: NDArray) -> Incidence:
        """The same links restricted to flows ``cols``."""
        member = self.member[:, cols] if self.member is not None else None
        return Incidence(self.direct[:, cols], self.via, member)


def as_incidence(matrix: Incidence | sparse.spmatrix | sparse.sparray | ArrayLike) -> Incidence:
    if isinstance(matrix, Incidence):
        return matrix
    if sparse.issparse(matrix):
        return Incidence(sparse.csc_matrix(matrix, dtype=np.float64))
    return Incidence(sparse.csc_matrix(np.asarray(matrix, dtype=np.float64)))


def max_min_fair(
    matrix: Incidence | sparse.spmatrix | sparse.sparray | ArrayLike,
    capacity: ArrayLike,
    demand: ArrayLike | None = None,
    progress: Progress | None = None,
    rtol: float = 1e-9,
) -> NDArray[np.float64]:
    """Max-min fair rate of every flow (columns) over links (rows) of ``capacity``.

    Progressive filling: every unfrozen flow grows at the same pace; when a link fills, the
    flows on it freeze at the current level; a flow also freezes when it reaches its
    ``demand`` (None = unlimited). Each round is two sparse matrix-vector products; frozen
    flows are dropped from the matrix once they are half of those left.

    >>> max_min_fair([[1, 1, 1, 1]], [10], [2, 2.6, 4, 5]).round(6).tolist()
    [2.0, 2.6, 2.7, 2.7]
    >>> max_min_fair([[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]], [1, 1, 1]).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    inc = as_incidence(matrix)
    n_links, n_flows = inc.shape
    cap = np.asarray(capacity, dtype=np.float64).ravel()
    if cap.size != n_links:
        raise MaxMinError(f"capacity has {cap.size} entries for {n_links} links")
    dem = (
        np.full(n_flows, np.inf)
        if demand is None
        else np.asarray(demand, dtype=np.float64).ravel().copy()
    )
    if dem.size != n_flows:
        raise MaxMinError(f"demand has {dem.size} entries for {n_flows} flows")
    rate = np.zeros(n_flows)
    if n_flows == 0:
        return rate
    residual = cap.copy()
    sat_tol = rtol * np.maximum(cap, 1e-300)
    cols = np.arange(n_flows)
    active = np.ones(n_flows)
    level = 0.0
    frozen_total = 0
    while cols.size:
        growth = inc.load(active)
        pos = growth > 1e-12
        if pos.any():
            share = residual[pos] / growth[pos]
            dt_link = float(share.min())
        else:
            dt_link = np.inf
        live = active > 0
        dt_dem = float((dem[live] - level).min()) if live.any() else np.inf
        dt = max(0.0, min(dt_link, dt_dem))
        if not np.isfinite(dt):
            raise MaxMinError("a flow crosses no link and has no demand, so its rate is unbounded")
        level += dt
        residual[pos] -= growth[pos] * dt
        np.maximum(residual, 0.0, out=residual)
        full = pos & (residual <= sat_tol)
        stop = (inc.touch(full.astype(np.float64)) > 0) | (dem - level <= rtol * max(level, 1.0))
        stop &= live
        rate[cols[stop]] = level
        active[stop] = 0.0
        frozen_total += int(stop.sum())
        if progress is not None:
            progress(frozen_total, n_flows)
        remaining = int((active > 0).sum())
        if remaining == 0:
            break
        if remaining <= cols.size // 2:
            keep = np.nonzero(active > 0)[0]
            inc = inc.take(keep)
            cols, dem = cols[keep], dem[keep]
            active = np.ones(keep.size)
    return rate
