"""Flows of node pairs: NIC connections, their QPs on bonded or independent ports, fair shares."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from railplan.traffic.index import UNREACHABLE, FabricIndex, RoutingError
from railplan.traffic.patterns import (
    PATTERNS,
    PatternError,
    alltoall_pairs,
    node_indices,
    pair_chunks,
    pair_list,
    pd_pairs,
    permutation_pairs,
    ring_pairs,
)

__all__ = [
    "PATTERNS",
    "FlowSet",
    "PatternError",
    "alltoall_pairs",
    "default_flows_per_nic",
    "flow_set",
    "node_indices",
    "pair_chunks",
    "pair_list",
    "pd_pairs",
    "permutation_pairs",
    "ring_pairs",
]

#: NCCL_IB_QPS_PER_CONNECTION defaults to 1 (one QP, so one RoCEv2 5-tuple, per connection).
DEFAULT_QPS_PER_CONNECTION = 1
#: Channels whose connections share one NIC pair in a two-node ring, as in the nccl-tests pair
#: runs in "Why Your GPU Fabric Runs at Half Speed" (NCCL may open 2 per NIC on some systems: pass flows_per_nic=2).
DEFAULT_CHANNELS_PER_NIC = 1
#: Flows (QPs, each its own 5-tuple) per NIC port and connection = channels x QPs.
DEFAULT_FLOWS_PER_NIC = DEFAULT_CHANNELS_PER_NIC * DEFAULT_QPS_PER_CONNECTION

Int = NDArray[np.int64]


def default_flows_per_nic(ix: FabricIndex) -> int:
    """Flows per NIC connection by default: ``DEFAULT_FLOWS_PER_NIC`` per port of the NIC.

    A bonded dual-port NIC needs two QPs to use both ports (github.com/NVIDIA/nccl/issues/1015
    advises NCCL_IB_QPS_PER_CONNECTION=2; ib_write_bw -q 2); the h20-4x2x200g node shares each
    NIC between two GPUs, whose connections RoCE LAG also puts on the two ports in turn.
    """
    return DEFAULT_FLOWS_PER_NIC * ix.endpoints.ports_per_endpoint


@dataclass
class FlowSet:
    """Flows as parallel arrays; ``group`` numbers the reported node pair (ascending).

    ``exp`` numbers independent experiments (each pair test runs alone), or is None when every
    flow runs at once. ``demand`` (Gbps) caps a flow at its port's line rate over the flows
    sharing its busier end port; ``target`` is what it needs for its connection to get its
    fair share of the logical NIC (both bonded ports, or the one independent port), so
    rate / target is the fraction of NIC line rate. ``lost`` lists the groups with a
    connection that cannot be routed (a dead port or no path); their flows are left out.
    """

    src_node: Int
    src_port: Int
    dst_node: Int
    dst_port: Int
    group: Int
    group_nodes: Int
    exp: Int | None
    demand: NDArray[np.float64]
    target: NDArray[np.float64]
    lost: Int

    def __len__(self) -> int:
        return len(self.src_node)

    @property
    def n_groups(self) -> int:
        return len(self.group_nodes)


@dataclass
class _Conns:
    """One row per NIC connection: node pair, nodes, endpoint groups, source member (-1: QPs
    spread over the bonded ports)."""

    pair: Int
    src: Int
    dst: Int
    s_group: Int
    d_group: Int
    s_member: Int


def _members(ix: FabricIndex) -> Int:
    """Endpoint groups as a (groups, most members) array padded with -1."""
    groups = ix.endpoints.groups
    width = max((len(g) for g in groups), default=1)
    out = np.full((len(groups), width), -1, dtype=np.int64)
    for i, g in enumerate(groups):
        out[i, : len(g)] = g
    return out


def _connections(ix: FabricIndex, src: Int, dst: Int, pxn: bool) -> _Conns:
    """Every NIC connection of the node pairs src[i] -> dst[i].

    Rail-aligned (``pxn``): endpoint k to endpoint k, as NCCL does (PXN moves cross-rail data
    over NVLink first). Without PXN: every endpoint to every endpoint of the same plane.
    Independent ports: one connection per port of the source endpoint.
    """
    ep = ix.endpoints
    n_groups = len(ep.groups)
    if not n_groups:
        raise PatternError(f"design {ix.design.name} has no cabled NIC port")
    if pxn:
        sg = dg = np.arange(n_groups, dtype=np.int64)
    else:
        plane = np.array([ix.design.shape.port_plane[g[0]] for g in ep.groups])
        sg, dg = (a.astype(np.int64) for a in np.nonzero(plane[:, None] == plane[None, :]))
    if ep.bonded:
        sm = np.full(sg.size, -1, dtype=np.int64)
    else:
        sizes = np.array([len(ep.groups[g]) for g in sg.tolist()], dtype=np.int64)
        sm = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        sg, dg = np.repeat(sg, sizes), np.repeat(dg, sizes)
    k = sg.size
    return _Conns(
        np.repeat(np.arange(src.size, dtype=np.int64), k),
        np.repeat(src, k),
        np.repeat(dst, k),
        np.tile(sg, src.size),
        np.tile(dg, src.size),
        np.tile(sm, src.size),
    )


def _rank_in_run(key: Int) -> Int:
    """Position of each entry among the earlier entries with the same key."""
    order = np.argsort(key, kind="stable")
    sk = key[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    run = np.repeat(starts, np.diff(np.r_[starts, sk.size]))
    out = np.empty(key.size, dtype=np.int64)
    out[order] = np.arange(key.size) - run
    return out


def _source_ports(ix: FabricIndex, mem: Int, c: _Conns, cf: Int, k: Int) -> Int:
    """The port each flow leaves on; -1 where no port of its endpoint is cabled.

    Bonded: ``k`` numbers the NIC's QPs, and QP k leaves on its k-th live port (mod the live
    ports: RoCE LAG moves a dead port's QPs to the other)."""
    cand = mem[c.s_group[cf]]
    if not ix.endpoints.bonded:
        sp = cand[np.arange(cf.size), c.s_member[cf]]
        return np.where(ix.ep_leaf[c.src[cf], sp] >= 0, sp, -1)
    if not ix.degraded:  # every port of an intact design is cabled
        return cand[np.arange(cf.size), k % (cand >= 0).sum(axis=1)]
    alive = (cand >= 0) & (ix.ep_leaf[c.src[cf][:, None], np.maximum(cand, 0)] >= 0)
    n_alive = alive.sum(axis=1)
    k = k % np.maximum(n_alive, 1)
    pick = np.argmax(np.cumsum(alive, axis=1) > k[:, None], axis=1)
    sp = cand[np.arange(cf.size), pick]
    return np.where(n_alive > 0, sp, -1)


def _reachable(ix: FabricIndex, s_leaf: NDArray, d_leaf: NDArray) -> NDArray[np.bool_]:
    ok = (s_leaf >= 0) & (d_leaf >= 0)
    if not ix.dist.shape[1]:  # no leaf left
        return ok & False
    col = ix.leaf_col[np.maximum(d_leaf, 0)]
    ok &= (col >= 0) & (ix.dist[np.maximum(s_leaf, 0), np.maximum(col, 0)] < UNREACHABLE)
    return ok


def _dest_ports(ix: FabricIndex, mem: Int, c: _Conns, cf: Int, sp: Int) -> Int:
    """The port each flow arrives on (``Endpoints.target_member``); a bonded NIC whose target
    port is dead or unreachable receives on its nearest live port instead; -1 if none."""
    ep = ix.endpoints
    table = np.array(
        [[ep.target_member(p, g) for g in range(len(ep.groups))] for p in range(ix.n_ports)],
        dtype=np.int64,
    )
    dg, dn = c.d_group[cf], c.dst[cf]
    s_leaf = np.where(sp >= 0, ix.ep_leaf[c.src[cf], np.maximum(sp, 0)], -1)
    dp = mem[dg, table[np.maximum(sp, 0), dg]]
    ok = _reachable(ix, s_leaf, ix.ep_leaf[dn, dp]) & (sp >= 0)
    if ep.bonded and not ok.all():
        bad = np.nonzero(~ok & (sp >= 0))[0]
        best = np.full(bad.size, np.iinfo(np.int32).max, dtype=np.int64)
        for m in range(mem.shape[1]):
            q = mem[dg[bad], m]
            dl = np.where(q >= 0, ix.ep_leaf[dn[bad], np.maximum(q, 0)], -1)
            reach = _reachable(ix, s_leaf[bad], dl) & (q >= 0)
            d = np.where(reach, ix.dist[s_leaf[bad], ix.leaf_col[np.maximum(dl, 0)]], best)
            better = reach & (d < best)
            best[better] = d[better]
            dp[bad[better]] = q[better]
            ok[bad[better]] = True
    return np.where(ok, dp, -1)


def _explain(ix: FabricIndex, c: _Conns, cf: Int, sp: Int) -> None:
    """Raise the RoutingError of the first flow that has no route on an intact design."""
    mem = _members(ix)
    if (sp < 0).any():
        raise RoutingError("a flow starts on a node port that is not cabled")
    dp = mem[c.d_group[cf], 0]
    ix.check_reachable(ix.ep_leaf[c.src[cf], sp], ix.ep_leaf[c.dst[cf], dp])
    raise RoutingError("a flow ends on a node port that is not cabled")


def _counts(key: Int, size: int) -> Int:
    """How many entries share each entry's key (keys in 0..size-1)."""
    return np.bincount(key, minlength=size)[key]


def _shares(
    ix: FabricIndex, c: _Conns, f: int, sides: tuple[Int, int], cf: Int, sp: Int, dp: Int
) -> tuple[NDArray, NDArray]:
    """(target, demand) of every flow in Gbps: the logical NIC's rate over the connections
    sharing the busier endpoint, per QP; the port's rate over the flows sharing the busier port.
    ``sides`` numbers each connection's source and destination node, and counts them."""
    ep, p = ix.endpoints, ix.n_ports
    side, n_sides = sides
    s_side, d_side = side[: c.pair.size], side[c.pair.size :]
    live = np.zeros(c.pair.size, dtype=bool)
    live[cf] = True
    if ep.bonded:
        g = len(ep.groups)
        out_key, in_key, size = s_side * g + c.s_group, d_side * g + c.d_group, n_sides * g
    else:
        arrive = np.zeros(c.pair.size, dtype=np.int64)
        arrive[cf] = dp  # an independent connection's QPs all arrive on one port
        c_sp = _members(ix)[c.s_group, np.maximum(c.s_member, 0)]
        out_key, in_key, size = s_side * p + c_sp, d_side * p + arrive, n_sides * p
    share = np.ones(c.pair.size, dtype=np.int64)
    share[live] = np.maximum(_counts(out_key[live], size), _counts(in_key[live], size))
    target = ep.nic_gbps / share[cf] / f
    busy = np.maximum(
        _counts(s_side[cf] * p + sp, n_sides * p), _counts(d_side[cf] * p + dp, n_sides * p)
    )
    return target, ep.port_gbps / busy.astype(np.float64)


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
    """Flows of node pairs (src[i] -> dst[i]); ``both_ways`` adds dst -> src in the same group.

    Each NIC connection carries ``flows_per_nic`` QPs. A bonded NIC puts its QPs on its ports in
    turn (QP k on port k mod 2, counted over all its connections in order) and a QP arrives on
    the port ``Endpoints.target_member`` names.
    """
    if both_ways:
        s2 = np.stack([src, dst], axis=1).ravel()
        d2 = np.stack([dst, src], axis=1).ravel()
        c = _connections(ix, s2, d2, pxn)
        c.pair //= 2
    else:
        c = _connections(ix, src, dst, pxn)
    f = flows_per_nic
    ep, mem = ix.endpoints, _members(ix)
    n_conn = c.pair.size
    cf = np.repeat(np.arange(n_conn, dtype=np.int64), f)
    # a node's key: itself, or within a pair test (experiment) its end of the pair
    if experiments:
        side = 2 * np.r_[c.pair, c.pair] + (np.r_[c.src, c.dst] != src[np.r_[c.pair, c.pair]])
        sides = 2 * src.size
    else:
        side, sides = np.r_[c.src, c.dst], ix.n_nodes
    if experiments and pxn:  # every NIC has one connection per experiment: QP k is k
        k = np.tile(np.arange(f, dtype=np.int64), n_conn)
    else:
        k = _rank_in_run((side[:n_conn] * len(ep.groups) + c.s_group)[cf])
    sp = _source_ports(ix, mem, c, cf, k)
    dp = _dest_ports(ix, mem, c, cf, sp)
    bad = (sp < 0) | (dp < 0)
    if bad.any() and not ix.degraded:
        _explain(ix, c, cf[bad], sp[bad])
    lost_conn = np.zeros(n_conn, dtype=bool)
    lost_conn[cf[bad]] = True
    keep = ~lost_conn[cf]
    cf, sp, dp = cf[keep], sp[keep], dp[keep]
    target, demand = _shares(ix, c, f, (side, sides), cf, sp, dp)
    return FlowSet(
        c.src[cf],
        sp,
        c.dst[cf],
        dp,
        c.pair[cf],
        np.stack([src, dst], axis=1),
        c.pair[cf] if experiments else None,
        demand,
        target,
        np.unique(c.pair[lost_conn]),
    )
