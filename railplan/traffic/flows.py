"""Flows from traffic patterns: pair tests, ring, all-to-all, prefill->decode, permutation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from railplan.errors import RailplanError
from railplan.traffic.routing import FabricIndex, matrix_connection_ports, rail_ports

PATTERNS = ("pairs", "ring", "alltoall", "pd", "permutation")

#: NCCL_IB_QPS_PER_CONNECTION defaults to 1 (one QP, so one RoCEv2 5-tuple, per connection).
DEFAULT_QPS_PER_CONNECTION = 1
#: Channels whose connections share one NIC pair in a two-node ring, as in the nccl-tests pair
#: runs in "Why Your GPU Fabric Runs at Half Speed" (NCCL may open 2 per NIC on some systems: pass flows_per_nic=2).
DEFAULT_CHANNELS_PER_NIC = 1
#: Flows (QPs, each its own 5-tuple) per NIC connection = channels x QPs per connection.
DEFAULT_FLOWS_PER_NIC = DEFAULT_CHANNELS_PER_NIC * DEFAULT_QPS_PER_CONNECTION

Int = NDArray[np.int64]


class PatternError(RailplanError):
    """A traffic pattern or one of its options is invalid for this design."""


@dataclass
class FlowSet:
    """Flows as parallel arrays; ``group`` numbers the reported node pair (contiguous runs).

    ``exp`` numbers independent experiments (each pair test runs alone), or is None when every
    flow runs at once. ``ideal`` is each flow's rate on a non-blocking fabric (Gbps): the NIC
    port's line rate over the flows it sends (or receives, whichever is more).
    """

    src_node: Int
    src_port: Int
    dst_node: Int
    dst_port: Int
    group: Int
    group_nodes: Int
    exp: Int | None
    ideal: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.src_node)


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


def connections(
    ix: FabricIndex, src: Int, dst: Int, pxn: bool = True
) -> tuple[Int, Int, Int, Int, Int]:
    """(pair, src_node, src_port, dst_node, dst_port) of every NIC connection of node pairs.

    Rail-aligned (``pxn``): NIC k of the source to NIC k of the destination, as NCCL does
    (PXN moves cross-rail data over NVLink first). Without PXN: every NIC to every NIC of the
    same plane. Matrix: out of the A port, into the B port of the paired NIC.
    """
    nics = np.asarray(list(rail_ports(ix)), dtype=np.int64)
    if not nics.size:
        raise PatternError(f"design {ix.design.name} has no NIC port cabled on every node")
    if pxn:
        s_nic = d_nic = nics
    else:
        plane = np.asarray(ix.design.shape.port_plane)
        key = plane[np.asarray(ix.a_ports)[nics]] if ix.is_matrix else plane[nics]
        ii, jj = np.nonzero(key[:, None] == key[None, :])
        s_nic, d_nic = nics[ii], nics[jj]
    k = s_nic.size
    pair = np.repeat(np.arange(src.size, dtype=np.int64), k)
    s = np.repeat(src, k)
    d = np.repeat(dst, k)
    sn = np.tile(s_nic, src.size)
    dn = np.tile(d_nic, src.size)
    if ix.is_matrix:
        sp, _ = matrix_connection_ports(ix, s, d, sn)
        _, dp = matrix_connection_ports(ix, s, d, dn)
        if not pxn:  # cross-NIC: out of the source's A port into the destination's B port
            a = np.asarray(ix.a_ports, dtype=np.int64)
            b = np.asarray(ix.b_ports, dtype=np.int64)
            cross = sn != dn
            sp = np.where(cross, a[sn], sp)
            dp = np.where(cross, b[dn], dp)
        return pair, s, sp, d, dp
    return pair, s, sn, d, dn


def flow_set(
    ix: FabricIndex,
    src: Int,
    dst: Int,
    flows_per_nic: int,
    *,
    both_ways: bool = False,
    experiments: bool = False,
    pxn: bool = True,
) -> FlowSet:
    """Flows of node pairs (src[i] -> dst[i]); ``both_ways`` adds dst -> src in the same group."""
    if both_ways:
        s2 = np.stack([src, dst], axis=1).ravel()
        d2 = np.stack([dst, src], axis=1).ravel()
        pair, s, sp, d, dp = connections(ix, s2, d2, pxn)
        pair //= 2
    else:
        pair, s, sp, d, dp = connections(ix, src, dst, pxn)
    f = flows_per_nic
    rep = [np.repeat(a, f) for a in (pair, s, sp, d, dp)]
    pair, s, sp, d, dp = rep
    exp = pair if experiments else None
    ideal = _ideal_rates(ix, s, sp, d, dp, exp)
    return FlowSet(s, sp, d, dp, pair, np.stack([src, dst], axis=1), exp, ideal)


def _ideal_rates(ix: FabricIndex, s: Int, sp: Int, d: Int, dp: Int, exp: Int | None) -> NDArray:
    """Line rate over the flows sharing each flow's busier NIC port (in its experiment)."""
    width = ix.n_nodes * ix.n_ports
    base = exp * width if exp is not None else 0
    out_key = base + s * ix.n_ports + sp
    in_key = base + d * ix.n_ports + dp
    _, out_inv, out_cnt = np.unique(out_key, return_inverse=True, return_counts=True)
    _, in_inv, in_cnt = np.unique(in_key, return_inverse=True, return_counts=True)
    share = np.maximum(out_cnt[out_inv.ravel()], in_cnt[in_inv.ravel()])
    return ix.port_speed / share.astype(np.float64)


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
    """Ring neighbours (k -> k+1) over ``order`` (default: design order)."""
    nodes = node_indices(ix, order, "order") if order is not None else np.arange(ix.n_nodes)
    if nodes.size < 2 or np.unique(nodes).size != nodes.size:
        raise PatternError("ring: give at least two distinct nodes in the ring order")
    pairs = np.stack([nodes, np.roll(nodes, -1)], axis=1)
    how = "design order" if order is None else "the given order"
    return pairs, f"ring over {nodes.size} nodes in {how}, one ring per rail"


def alltoall_pairs(ix: FabricIndex, nodes: Sequence[Any] | None = None) -> tuple[Int, str]:
    """Every ordered pair of distinct nodes (of ``nodes``, default all)."""
    sel = node_indices(ix, nodes, "nodes") if nodes is not None else np.arange(ix.n_nodes)
    if sel.size < 2:
        raise PatternError("alltoall: give at least two nodes")
    a, b = np.nonzero(~np.eye(sel.size, dtype=bool))
    who = f"{sel.size} nodes" if nodes is not None else f"all {sel.size} nodes"
    return np.stack([sel[a], sel[b]], axis=1), f"every GPU to every other across {who}"


def pd_pairs(
    ix: FabricIndex,
    prefill: Sequence[Any] | None = None,
    decode: Sequence[Any] | None = None,
    rule: str = "split",
    prefill_fraction: float = 0.5,
    mapping: str = "all",
) -> tuple[Int, str]:
    """Prefill -> decode node pairs: sets given, or placed by ``rule`` (split, interleave).

    ``mapping`` ``all``: every prefill node sends KV cache to every decode node at once;
    ``one``: each prefill node to one decode node, round-robin.
    """
    n = ix.n_nodes
    if prefill is not None or decode is not None:
        if prefill is None or decode is None:
            raise PatternError("pd: give both prefill and decode node sets, or neither")
        p = node_indices(ix, prefill, "prefill")
        d = node_indices(ix, decode, "decode")
        how = "given node sets"
    else:
        if not 0 < prefill_fraction < 1:
            raise PatternError("prefill_fraction: give a fraction between 0 and 1")
        k = min(n - 1, max(1, round(n * prefill_fraction)))
        idx = np.arange(n)
        if rule == "split":
            p, d = idx[:k], idx[k:]
        elif rule == "interleave":
            step = n / k
            p = np.unique(np.floor(np.arange(k) * step).astype(np.int64))
            d = np.setdiff1d(idx, p)
        else:
            raise PatternError(f"rule: {rule!r} is not a placement rule; use split or interleave")
        how = f"rule {rule}"
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
