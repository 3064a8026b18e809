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


def _segment_min(values: NDArray, indptr: NDArray) -> NDArray:
    """Minimum of ``values`` over each CSR/CSC segment (``inf`` for an empty one)."""
    padded = np.append(values, np.inf)
    starts = indptr[:-1]
    out = np.minimum.reduceat(padded, starts) if starts.size else np.zeros(0)
    out[indptr[1:] == starts] = np.inf
    return out


class _Mins:
    """Per-flow minimum over its links and per-link minimum over its flows (direct + via)."""

    def __init__(self, inc: Incidence) -> None:
        self.d_col = inc.direct  # csc: flows are columns
        self.d_row = inc.direct.tocsr()
        self.comm: NDArray | None = None
        if inc.via is not None and inc.member is not None:
            member = inc.member.tocsc()
            if not (np.diff(member.indptr) == 1).all():
                raise MaxMinError("each flow must belong to exactly one commodity")
            self.comm = member.indices
            self.n_comm = member.shape[0]
            self.v_col = inc.via.tocsc()
            self.v_row = inc.via.tocsr()
            self.comm_order = np.argsort(self.comm, kind="stable")
            self.comm_ptr = np.searchsorted(self.comm[self.comm_order], np.arange(self.n_comm + 1))

    def per_flow(self, x: NDArray) -> NDArray:
        m = _segment_min(x[self.d_col.indices], self.d_col.indptr)
        if self.comm is not None:
            cm = _segment_min(x[self.v_col.indices], self.v_col.indptr)
            m = np.minimum(m, cm[self.comm])
        return m

    def per_link(self, m: NDArray) -> NDArray:
        out = _segment_min(m[self.d_row.indices], self.d_row.indptr)
        if self.comm is not None:
            cm = _segment_min(m[self.comm_order], self.comm_ptr)
            out = np.minimum(out, _segment_min(cm[self.v_row.indices], self.v_row.indptr))
        return out


def max_min_fair(
    matrix: Incidence | sparse.spmatrix | sparse.sparray | ArrayLike,
    capacity: ArrayLike,
    demand: ArrayLike | None = None,
    progress: Progress | None = None,
    rtol: float = 1e-9,
) -> NDArray[np.float64]:
    """Max-min fair rate of every flow (columns) over links (rows) of ``capacity``.

    The allocation progressive filling reaches (every flow grows at the same pace; a full link
    freezes its flows; a flow also stops at its ``demand``, None = unlimited), computed in
    rounds that freeze many bottlenecks at once: link l would fill at level
    x_l = residual / (weighted active flows); a flow can rise at most to
    m_f = min(demand_f, x_l over its links); a link whose x_l is the least m_f of its own flows
    fills exactly at x_l (levels only rise as other flows freeze), so all such links and every
    flow stopped by its demand are settled together, and the rest is solved again on the
    remaining capacity. Each round is a few passes over the sparse matrix; settled flows are
    dropped from it once they are half of those left.

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
    cols = np.arange(n_flows)
    active = np.ones(n_flows)
    mins = _Mins(inc)
    settled = 0
    while True:
        growth = inc.load(active)
        with np.errstate(divide="ignore", invalid="ignore"):
            x = np.where(growth > 1e-12, np.maximum(residual, 0.0) / growth, np.inf)
        m = np.minimum(mins.per_flow(x), dem)
        m[active == 0] = np.inf
        live = active > 0
        if not np.isfinite(m[live]).all():
            raise MaxMinError("a flow crosses no link and has no demand, so its rate is unbounded")
        lmin = mins.per_link(m)
        safe = (growth > 1e-12) & (x <= lmin * (1 + rtol))
        stop = (inc.touch(safe.astype(np.float64)) > 0) | (m >= dem * (1 - rtol))
        stop &= live
        new = np.where(stop, m, 0.0)
        rate[cols[stop]] = m[stop]
        residual -= inc.load(new)
        active[stop] = 0.0
        settled += int(stop.sum())
        if progress is not None:
            progress(settled, n_flows)
        remaining = int((active > 0).sum())
        if remaining == 0:
            break
        if remaining <= cols.size // 2:
            keep = np.nonzero(active > 0)[0]
            inc = inc.take(keep)
            cols, dem = cols[keep], dem[keep]
            active = np.ones(keep.size)
            mins = _Mins(inc)
    return rate
