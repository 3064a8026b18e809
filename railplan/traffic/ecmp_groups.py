"""Equal-cost next-hop groups of a fabric, in bulk: leaf distances by twin class, groups by
sorting bit sets of next hops (``FabricIndex``'s routing tables)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

UNREACHABLE = np.iinfo(np.int16).max


def equal_cost_groups(
    dist: NDArray, out_dl: NDArray, out_from: NDArray, out_to: NDArray, n_switches: int
) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray]:
    """(group_of, g_start, g_size, g_nbrs, g_members) of ``FabricIndex``.

    ``dist``: (switch, leaf column) hops; ``out_dl``, ``out_from``, ``out_to``: every
    switch-to-switch directed link with its tail and head, sorted by (tail, head, link).
    ``group_of[s, c]`` is the group of switch ``s``'s next hops toward leaf column ``c`` (-1
    where none: the leaf itself, or out of reach), numbered switch by switch and, in a
    switch, in the byte order of its next-hop neighbours as bits; group ``g``'s links are
    ``g_members[g_start[g] : g_start[g] + g_size[g]]`` over ``g_nbrs[g]`` neighbours.
    """
    # the bundles: one per (switch, neighbour) pair, its links in link order
    new = np.ones(out_dl.size, dtype=bool)
    new[1:] = (out_from[1:] != out_from[:-1]) | (out_to[1:] != out_to[:-1])
    first = np.flatnonzero(new)
    bundles = _Bundles(
        dl=out_dl,
        first=first,
        size=np.diff(np.r_[first, out_dl.size]),
        to=out_to[first].astype(np.int64),
        start=np.r_[0, np.cumsum(np.bincount(out_from[first], minlength=n_switches))],
    )
    group_of = np.full((n_switches, dist.shape[1]), -1, dtype=np.int32)
    sizes, nbrs, members = [], [], []
    count = 0
    columns: dict[bytes, NDArray] = {}
    for lo, hi in _chunks(bundles.start, dist.shape[1]):
        found = _chunk_groups(dist, columns, bundles, lo, hi)
        if found is None:
            continue
        rows, cols, ids, size, n_nbrs, chunk_members = found
        group_of[rows, cols] = count + ids
        count += size.size
        sizes.append(size)
        nbrs.append(n_nbrs)
        members.append(chunk_members)
    none = np.zeros(0, dtype=np.int64)
    g_size = np.concatenate(sizes) if sizes else none
    g_start = np.cumsum(g_size) - g_size
    g_nbrs = np.concatenate(nbrs) if nbrs else none
    g_members = np.concatenate(members) if members else none
    return group_of, g_start, g_size, g_nbrs, g_members


def leaf_distances(graph: csr_matrix, leaves: NDArray) -> NDArray:
    """Switch hops from every leaf (row) to every switch (column), int16, UNREACHABLE where
    no path joins them.

    Leaves with the same neighbours (the leaves under one set of spines) are twins: a leaf's
    distance to any other switch is one more than its nearest neighbour's, so a twin's row is
    its class's first leaf's with two entries swapped (0 to itself, 2 to that leaf, or
    UNREACHABLE when the class has no neighbours). One breadth-first search per class.
    """
    n = graph.shape[0]
    if not leaves.size:
        return np.zeros((0, n), dtype=np.int16)
    both = (graph + graph.T).tocsr()
    both.sort_indices()
    first_of: dict[bytes, int] = {}
    rep = np.empty(leaves.size, dtype=np.int64)
    for col, leaf in enumerate(leaves.tolist()):
        nbrs = both.indices[both.indptr[leaf] : both.indptr[leaf + 1]]
        key = nbrs.tobytes() if leaf not in nbrs else b"self" + col.to_bytes(8, "little")
        rep[col] = first_of.setdefault(key, col)
    reps = np.unique(rep)
    found = shortest_path(both, directed=False, unweighted=True, indices=leaves[reps])
    found[~np.isfinite(found)] = UNREACHABLE
    found = found.astype(np.int16)
    dist = found[np.searchsorted(reps, rep)]
    twin = np.flatnonzero(rep != np.arange(leaves.size))
    if twin.size:
        lonely = both.indptr[leaves[twin] + 1] == both.indptr[leaves[twin]]
        dist[twin, leaves[twin]] = 0
        dist[twin, leaves[rep[twin]]] = np.where(lonely, UNREACHABLE, 2)
    return dist


#: boolean cells (switch x neighbour x leaf column) one pass of ``_chunk_groups`` compares
_CHUNK_CELLS = 1 << 25


@dataclass(frozen=True)
class _Bundles:
    """The switch-to-switch bundles: the outgoing directed links ``dl`` sorted by (switch,
    neighbour, link); bundle ``b`` is ``dl[first[b] : first[b] + size[b]]`` toward switch
    ``to[b]``, and switch ``s``'s bundles are ``start[s]`` to ``start[s + 1]``."""

    dl: NDArray
    first: NDArray
    size: NDArray
    to: NDArray
    start: NDArray


def _chunks(start: NDArray, n_cols: int) -> list[tuple[int, int]]:
    """Runs of switches ``[lo, hi)`` whose padded comparison stays near ``_CHUNK_CELLS``."""
    deg = np.diff(start)
    out: list[tuple[int, int]] = []
    lo, width = 0, 0
    for s, d in enumerate(deg.tolist()):
        w = max(width, d)
        if s > lo and w * (s + 1 - lo) * n_cols > _CHUNK_CELLS:
            out.append((lo, s))
            lo, w = s, d
        width = w
    if deg.size:
        out.append((lo, int(deg.size)))
    return out


def _chunk_groups(
    dist: NDArray, columns: dict[bytes, NDArray], bundles: _Bundles, lo: int, hi: int
) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray, NDArray] | None:
    """The equal-cost groups of switches ``lo`` to ``hi``, numbered from 0 in (switch, set of
    next-hop neighbours as bits, neighbour order first) order: (switch rows, leaf columns,
    group of each, group sizes, neighbours per group, members).

    A switch's next hops toward a leaf column are its neighbours one hop closer to it; the
    columns with the same set share a group, whose members interleave the bundles to those
    neighbours: the first link to each neighbour, then the second, ... ``columns`` caches
    ``dist`` cut to the leaf columns the chunk reaches (a plane's, on a multi-plane fabric).
    """
    deg = np.diff(bundles.start[lo : hi + 1])
    width = int(deg.max()) if deg.size else 0
    if width == 0:
        return None
    ds = dist[lo:hi]
    cols = np.flatnonzero(((ds > 0) & (ds < UNREACHABLE)).any(axis=0))
    if not cols.size:
        return None
    sub = columns.get(cols.tobytes())
    if sub is None:
        cut = slice(cols[0], cols[-1] + 1) if cols[-1] - cols[0] + 1 == cols.size else cols
        sub = columns.setdefault(cols.tobytes(), np.ascontiguousarray(dist[:, cut]))
    n = hi - lo
    b_lo = int(bundles.start[lo])
    b = np.arange(b_lo, int(bundles.start[hi]))
    b_sw = np.repeat(np.arange(n), deg)
    b_k = b - b_lo - np.repeat(bundles.start[lo:hi] - b_lo, deg)
    # neighbour k of each switch; a switch without a k-th neighbour stands in for it (never
    # one hop closer to anything than itself)
    nbr = np.repeat(np.arange(lo, hi, dtype=np.int64)[:, None], width, axis=1)
    nbr[b_sw, b_k] = bundles.to[b]
    # one hop short of each switch's distance (a leaf's own column and the columns it does
    # not reach match no neighbour: -1, and UNREACHABLE - 1 no distance reaches)
    closer = sub[lo:hi] - 1
    # the set of next hops toward each column as bits, neighbour 0 the highest bit of byte 0
    # (the byte order the sets are numbered in), padded to whole 64-bit words
    n_words = -(-width // 64)
    bits = np.zeros((n, cols.size, 8 * n_words), dtype=np.uint8)
    for k in range(width):
        hit = (sub[nbr[:, k]] == closer).view(np.uint8)
        bits[:, :, k // 8] |= hit << np.uint8(7 - k % 8)
    words = bits.view(">u8")  # (switch, column, word)
    useful = words.any(axis=2)
    rows, rc = np.nonzero(useful)
    if not rows.size:
        return None
    key_words = words[rows, rc]
    keys = [key_words[:, w] for w in range(n_words - 1, -1, -1)]
    order = np.lexsort([*keys, rows])
    new = np.zeros(rows.size, dtype=bool)
    new[0] = True
    new[1:] = rows[order][1:] != rows[order][:-1]
    for key in keys:
        new[1:] |= key[order][1:] != key[order][:-1]
    starts = np.flatnonzero(new)
    ids = np.empty(rows.size, dtype=np.int32)
    ids[order] = np.cumsum(new) - 1
    rep = order[starts]
    chosen_bits = np.unpackbits(bits[rows[rep], rc[rep]], axis=1)[:, :width]
    g, g_k = np.nonzero(chosen_bits)  # each group's neighbours, in neighbour order
    n_groups = rep.size
    g_nbrs = np.bincount(g, minlength=n_groups).astype(np.int64)
    chosen = bundles.start[lo + rows[rep][g]] + g_k
    size = bundles.size[chosen]
    pick = np.repeat(np.arange(chosen.size), size)
    r = np.arange(pick.size) - np.repeat(np.cumsum(size) - size, size)
    member = bundles.dl[bundles.first[chosen][pick] + r]
    m_group = g[pick]
    m_order = np.lexsort((pick, r, m_group))
    g_size = np.bincount(m_group, minlength=n_groups).astype(np.int64)
    return lo + rows, cols[rc], ids, g_size, g_nbrs, member[m_order].astype(np.int64)
