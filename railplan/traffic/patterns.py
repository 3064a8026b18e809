"""Traffic patterns as node pairs: pair tests, ring, all-to-all, prefill->decode, permutation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from railplan.errors import RailplanError
from railplan.traffic.index import FabricIndex

PATTERNS = ("pairs", "ring", "alltoall", "pd", "permutation")

Int = NDArray[np.int64]


class PatternError(RailplanError):
    """A traffic pattern or one of its options is invalid for this design."""


def node_indices(ix: FabricIndex, nodes: Sequence[Any], what: str) -> Int:
    """Node indices from ids (``node0007``) or integer positions in design order."""
    out = []
    for n in nodes:
        if isinstance(n, (int, np.integer)) and not isinstance(n, bool):
            if not 0 <= int(n) < ix.n_nodes:
                raise PatternError(f"{what}: node index {n} is outside 0..{ix.n_nodes - 1}")
            out.append(int(n))
        elif isinstance(n, str) and n in ix.node_pos:
            out.append(ix.node_pos[n])
        else:
            raise PatternError(f"{what}: {n!r} is not a node of this design")
    return np.asarray(out, dtype=np.int64)


# -- node pairs per pattern -------------------------------------------------------------------


def pair_list(
    ix: FabricIndex,
    partners: int | None = None,
    sample: int | None = None,
    pairs: Sequence[tuple[Any, Any]] | None = None,
    seed: int = 0,
) -> tuple[Int, str]:
    """Node pairs (a < b) for two-node tests and a note saying how they were chosen.

    Every pair by default; ``partners`` K: each node against K partners at offsets spread over
    the node order (so partners land on other leaves and racks); ``sample`` M: M distinct pairs
    drawn at random (seeded); ``pairs``: the given pairs.
    """
    n = ix.n_nodes
    if n < 2:
        raise PatternError("pattern pairs: the design needs at least two nodes")
    if pairs is not None:
        flat = node_indices(ix, [x for p in pairs for x in p], "pairs")
        arr = flat.reshape(-1, 2)
        if (arr[:, 0] == arr[:, 1]).any():
            raise PatternError("pairs: a node cannot be tested against itself")
        return np.sort(arr, axis=1), f"{len(arr)} given pair(s)"
    if partners is not None:
        if not 1 <= partners <= n - 1:
            raise PatternError(f"partners: give 1..{n - 1} partners per node for {n} nodes")
        offsets = np.unique(1 + (np.arange(partners) * (n - 1)) // partners)
        a = np.repeat(np.arange(n), offsets.size)
        b = (a + np.tile(offsets, n)) % n
        arr = np.unique(np.sort(np.stack([a, b], axis=1), axis=1), axis=0)
        return arr, f"each node against {partners} partner(s) at offsets {offsets.tolist()}"
    total = n * (n - 1) // 2
    if sample is not None and sample < total:
        if sample < 1:
            raise PatternError("sample: give a positive number of pairs")
        rng = np.random.default_rng(seed)
        picks = np.unique(rng.choice(total, size=sample, replace=False))
        return _unrank_pairs(picks, n), f"{sample} of {total} node pairs sampled (seed {seed})"
    a, b = np.triu_indices(n, k=1)
    return np.stack([a, b], axis=1).astype(np.int64), f"all {total} node pairs"


def _unrank_pairs(k: Int, n: int) -> Int:
    """The k-th pair (a < b) in row-major order of the upper triangle."""
    # rows before a hold (n-1) + (n-2) + ... ; solve for a with the quadratic formula
    kk = k.astype(np.float64)
    a = np.floor((2 * n - 1 - np.sqrt((2 * n - 1) ** 2 - 8 * kk)) / 2).astype(np.int64)
    start = a * (2 * n - a - 1) // 2
    fix = k < start
    a[fix] -= 1
    start = a * (2 * n - a - 1) // 2
    over = k - start >= n - 1 - a
    a[over] += 1
    start = a * (2 * n - a - 1) // 2
    b = a + 1 + (k - start)
    return np.stack([a, b], axis=1)


def pair_chunks(pairs: Int, flows_per_pair: int, max_flows: int = 2_000_000) -> Iterator[Int]:
    """Slices of pair tests small enough to solve together (each test is independent)."""
    step = max(1, max_flows // max(1, flows_per_pair))
    for start in range(0, len(pairs), step):
        yield pairs[start : start + step]


def ring_pairs(ix: FabricIndex, order: Sequence[Any] | None = None) -> tuple[Int, str]:
    """Ring neighbours (k -> k+1) over ``order`` (default: design order).

    With rack-scale NVLink domains (NVL72: 18 trays per domain) the ring's steps inside a
    domain run over NVLink; in design order the fabric carries one ring per tray position
    and rail, from each domain's tray t to tray t of the next domain."""
    if ix.domain_nodes > 1 and order is None:
        return _domain_ring(ix)
    nodes = node_indices(ix, order, "order") if order is not None else np.arange(ix.n_nodes)
    if nodes.size < 2 or np.unique(nodes).size != nodes.size:
        raise PatternError("ring: give at least two distinct nodes in the ring order")
    pairs = np.stack([nodes, np.roll(nodes, -1)], axis=1)
    how = "design order" if order is None else "the given order"
    if ix.domain_nodes > 1:
        pairs = _across_domains(ix, pairs, "ring")
        how += ", steps inside an NVLink domain left to NVLink"
    return pairs, f"ring over {nodes.size} nodes in {how}, one ring per rail"


def _domain_ring(ix: FabricIndex) -> tuple[Int, str]:
    """Tray t of every NVLink domain to tray t of the next domain, for every tray position."""
    domains = np.unique(ix.node_domain)
    if domains.size < 2:
        raise PatternError(
            "ring: every node is in one NVLink domain, so the ring stays on NVLink and never "
            "touches the fabric; plan more than one rack-scale domain"
        )
    pos = {
        (int(d), int(i) % ix.domain_nodes): k
        for k, (d, i) in enumerate(
            zip(ix.node_domain, [n.index for n in ix.design.nodes], strict=True)
        )
    }
    out = []
    for t in range(ix.domain_nodes):
        ring = [pos[(int(d), t)] for d in domains if (int(d), t) in pos]
        if len(ring) > 1:
            out += [(ring[k], ring[(k + 1) % len(ring)]) for k in range(len(ring))]
    pairs = np.asarray(out, dtype=np.int64).reshape(-1, 2)
    return pairs, (
        f"ring over {domains.size} NVLink domains of {ix.domain_nodes} nodes: inside a domain "
        "over NVLink, across domains tray t to tray t, one ring per tray position and rail"
    )


def _across_domains(ix: FabricIndex, pairs: Int, what: str) -> Int:
    """The pairs whose two nodes sit in different NVLink domains (the rest use NVLink)."""
    keep = ix.node_domain[pairs[:, 0]] != ix.node_domain[pairs[:, 1]]
    if not keep.any():
        raise PatternError(
            f"{what}: every pair is inside one NVLink domain, so no traffic touches the fabric; "
            "give nodes of different rack-scale domains"
        )
    return pairs[keep]


def alltoall_pairs(ix: FabricIndex, nodes: Sequence[Any] | None = None) -> tuple[Int, str]:
    """Every ordered pair of distinct nodes (of ``nodes``, default all); with rack-scale
    NVLink domains only the pairs across domains, the rest going over NVLink."""
    sel = node_indices(ix, nodes, "nodes") if nodes is not None else np.arange(ix.n_nodes)
    if sel.size < 2:
        raise PatternError("alltoall: give at least two nodes")
    a, b = np.nonzero(~np.eye(sel.size, dtype=bool))
    who = f"{sel.size} nodes" if nodes is not None else f"all {sel.size} nodes"
    pairs = np.stack([sel[a], sel[b]], axis=1)
    if ix.domain_nodes > 1:
        pairs = _across_domains(ix, pairs, "alltoall")
        return pairs, (
            f"every GPU to every other across {who}; pairs inside one {ix.domain_nodes}-node "
            "NVLink domain stay on NVLink"
        )
    return pairs, f"every GPU to every other across {who}"


PD_RULES = ("spread", "split", "interleave")


def leaf_groups(ix: FabricIndex) -> tuple[Int, int]:
    """Group of every node: nodes cabled to the same leaves share one (a Matrix B leaf and its
    A leaves, a ROFT scalable unit, a rack's ToRs), numbered in node order; and the count."""
    if not ix.n_nodes:
        return np.zeros(0, dtype=np.int64), 0
    _, first, inverse = np.unique(ix.ep_leaf, axis=0, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.ravel()], int(first.size)


def _spread(ix: FabricIndex, idx: Int, fraction: float) -> Int:
    """Prefill nodes of ``idx`` evenly spaced inside every leaf group (``fraction`` of each)."""
    group, n_groups = leaf_groups(ix)
    g = group[idx]
    order = np.argsort(g, kind="stable")
    size = np.bincount(g, minlength=n_groups)
    starts = np.r_[0, np.cumsum(size)[:-1]]
    slot = np.empty(idx.size, dtype=np.int64)
    slot[order] = np.arange(idx.size) - np.repeat(starts, size)
    # Bresenham inside each group: node at slot i is prefill when floor((i+1)f) > floor(i f)
    pick = np.floor((slot + 1) * fraction + 1e-9) > np.floor(slot * fraction + 1e-9)
    return idx[pick]


def _placed(ix: FabricIndex, idx: Int, rule: str, fraction: float) -> tuple[Int, str]:
    """Prefill nodes among ``idx`` by placement ``rule``, and how they were chosen."""
    n = idx.size
    if not 0 < fraction < 1:
        raise PatternError("prefill_fraction: give a fraction between 0 and 1")
    k = min(n - 1, max(1, round(n * fraction)))
    even = idx[np.unique(np.floor(np.arange(k) * (n / k)).astype(np.int64))]
    if rule == "spread":
        p = _spread(ix, idx, fraction)
        groups = np.unique(leaf_groups(ix)[0][idx]).size
        if 0 < p.size < n:
            return p, f"rule spread over {groups} leaf group(s)"
        return even, f"rule spread (leaf groups of one node: evenly over the {n} nodes)"
    if rule == "split":
        return idx[:k], "rule split"
    if rule == "interleave":
        return even, "rule interleave"
    raise PatternError(f"rule: {rule!r} is not a placement rule; use {', '.join(PD_RULES)}")


def pd_pairs(
    ix: FabricIndex,
    prefill: Sequence[Any] | None = None,
    decode: Sequence[Any] | None = None,
    rule: str = "spread",
    prefill_fraction: float = 0.5,
    mapping: str = "all",
    nodes: Sequence[Any] | None = None,
) -> tuple[Int, str]:
    """Prefill -> decode node pairs: sets given, or placed on ``nodes`` (default all) by ``rule``.

    ``spread`` (default): inside every group of nodes on the same leaves (on a Matrix every B
    leaf, so every A_i-B_j bundle carries its share; on a ROFT every scalable unit) the
    prefill nodes are evenly spaced and the rest decode, as a Matrix deployment intends;
    ``split``: the first nodes prefill, the rest decode; ``interleave``: prefill evenly spaced
    over the node order. ``mapping`` ``all``: every prefill node sends KV cache to every decode
    node at once; ``one``: each prefill node to one decode node, round-robin (elephant flows).
    """
    if prefill is not None or decode is not None:
        if prefill is None or decode is None:
            raise PatternError("pd: give both prefill and decode node sets, or neither")
        p = node_indices(ix, prefill, "prefill")
        d = node_indices(ix, decode, "decode")
        how = "given node sets"
    else:
        idx = node_indices(ix, nodes, "nodes") if nodes is not None else np.arange(ix.n_nodes)
        idx = np.unique(idx)
        if idx.size < 2:
            raise PatternError("pd: place prefill and decode on at least two nodes")
        p, how = _placed(ix, idx, rule, prefill_fraction)
        d = np.setdiff1d(idx, p)
    if np.intersect1d(p, d).size:
        raise PatternError("pd: a node cannot be both prefill and decode")
    if not p.size or not d.size:
        raise PatternError("pd: both the prefill and the decode set need at least one node")
    if mapping == "all":
        pairs = np.stack([np.repeat(p, d.size), np.tile(d, p.size)], axis=1)
    elif mapping == "one":
        pairs = np.stack([p, d[np.arange(p.size) % d.size]], axis=1)
    else:
        raise PatternError(f"mapping: {mapping!r} is not a mapping; use all or one")
    note = f"{p.size} prefill -> {d.size} decode nodes ({how}, mapping {mapping})"
    return pairs.astype(np.int64), note


def permutation_pairs(ix: FabricIndex, seed: int = 0, shift: int | None = None) -> tuple[Int, str]:
    """Node i sends to node pi(i): a random permutation with no fixed point (seeded), or the
    shift pi(i) = (i + shift) mod n in design (rank) order.
    """
    n = ix.n_nodes
    if n < 2:
        raise PatternError("permutation: the design needs at least two nodes")
    if shift is not None:
        if shift % n == 0:
            raise PatternError(f"shift: {shift} maps every node onto itself; use 1..{n - 1}")
        idx = np.arange(n, dtype=np.int64)
        return np.stack([idx, (idx + shift) % n], axis=1), f"shift by {shift} of {n} nodes"
    rng = np.random.default_rng(seed)
    pi = rng.permutation(n)
    fixed = np.nonzero(pi == np.arange(n))[0]
    for i in fixed:  # swap each fixed point with its neighbour's target
        if pi[i] == i:
            j = (i + 1) % n
            pi[i], pi[j] = pi[j], pi[i]
    pairs = np.stack([np.arange(n), pi], axis=1).astype(np.int64)
    return pairs, f"random permutation of {n} nodes (seed {seed})"
