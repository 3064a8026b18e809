"""Paths through a Design: routing policies, single-pair paths and a bulk router."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from railplan.design import Design
from railplan.traffic.hashing import ROCEV2_UDP_DPORT, five_tuple_crc, switch_hash
from railplan.traffic.index import UNREACHABLE, FabricIndex, RoutingError, fabric_index

__all__ = [
    "HASHES",
    "POLICIES",
    "UNREACHABLE",
    "FabricIndex",
    "Hop",
    "Path",
    "Routed",
    "RoutingError",
    "deterministic_member",
    "effective_policy",
    "fabric_index",
    "flow_hash",
    "paths",
    "route_bulk",
]

POLICIES = ("ecmp", "dmodk", "deterministic", "adaptive")
HASHES = ("crc32", "random")
_MAX_HOPS = 16


@dataclass(frozen=True, slots=True)
class Hop:
    """One link crossed in one direction: ``link`` id, from device ``src`` to device ``dst``."""

    link: str
    src: str
    dst: str


@dataclass(frozen=True, slots=True)
class Path:
    """A path from a NIC port to a NIC port; ``weight`` is its share of the flow.

    Under adaptive routing the weight is the fraction of the flow's bytes on this path; under
    ECMP it is the chance that the hash picks it (uniform hashing); a static route has 1.
    """

    hops: tuple[Hop, ...]
    weight: float = 1.0

    @property
    def links(self) -> tuple[str, ...]:
        return tuple(h.link for h in self.hops)

    @property
    def switches(self) -> tuple[str, ...]:
        return tuple(h.dst for h in self.hops[:-1])

    @property
    def switch_hops(self) -> int:
        """Switches the path crosses (1 under one leaf, 2 for Matrix A->B, 3 up to a spine)."""
        return len(self.hops) - 1


def effective_policy(design: Design, routing: str | None = None, traffic_class: int = 0) -> str:
    """The routing a flow of ``traffic_class`` sees: ``routing`` if given, else the design's.

    Adaptive routing is enabled per traffic class (IB service level): a design whose policy is
    adaptive with a class list applies it only to those classes and hashes the rest with ECMP
    (Matrix: deterministic); a class listed on a non-adaptive design is routed adaptively. An
    InfiniBand fat tree records its static routing (``dmodk``, the subnet manager's ftree
    tables) with the adaptive classes, so its other service levels keep the SM's routes.
    """
    if routing is not None:
        if routing not in POLICIES:
            raise RoutingError(f"routing {routing!r} is not a policy; use {', '.join(POLICIES)}")
        return routing
    r = design.routing
    fallback = (
        "deterministic" if design.topology in ("matrix", "rail-only", "single-switch") else "ecmp"
    )
    if r.policy == "adaptive":
        if not r.adaptive_classes or traffic_class in r.adaptive_classes:
            return "adaptive"
        return fallback
    if traffic_class in r.adaptive_classes:
        return "adaptive"
    if r.policy not in POLICIES:
        raise RoutingError(f"design routing policy {r.policy!r} is not one railplan models")
    return r.policy


def deterministic_member(s_slot: Any, t_slot: Any, later: Any, size: Any, shift: Any = 0) -> Any:
    """Member of a Matrix A_i-B_j bundle of ``size`` = m links a flow takes under deterministic
    routing (elsewhere deterministic routing is D-mod-k). No hash decides anything.

    ``s_slot``, ``t_slot`` and ``shift`` come from ``FabricIndex.slots``: the source's and the
    destination node's positions on the leaves their port of the flow's source port number
    sits on (on a Matrix the node's position on that A or B leaf), and an offset that is 0 for
    a rail-aligned flow; ``later`` is true when the source node comes after the destination
    node. Even m: a flow to a later node takes link (s + shift) mod m, a flow to an earlier
    node link (-t - 1 - shift) mod m, the destination's position counted from the other end
    of the bundle. Odd m, where that mirror has a middle link: (s + t + later + shift) mod m.
    Either way the flows of one source, or into one destination, take different links,
    rail-aligned neighbours (a ring in node order) spread over every link, and the two
    directions of a pair test between nodes on the same two leaves, which cross a Matrix
    bundle the same way (X.A -> Y.B and Y.A -> X.B), never share a link.
    """
    s, t, m = np.asarray(s_slot), np.asarray(t_slot), np.asarray(size)
    d = np.asarray(shift)
    even = np.where(later, -t - 1 - d, s + d)
    odd = s + t + np.asarray(later, dtype=np.int64) + d
    return np.where(m % 2 == 0, even, odd) % m


# -- single pair ------------------------------------------------------------------------------


def paths(
    design: Design,
    src_node: str,
    src_port: int,
    dst_node: str,
    dst_port: int,
    routing: str | None = None,
) -> list[Path]:
    """Every path a flow from (src_node, src_port) to (dst_node, dst_port) may take.

    ECMP and adaptive routing give every equal-cost path (weights: the share of the flow under
    an even split, or the chance of being hashed onto it); D-mod-k and deterministic routing
    give the single static path (see ``route_bulk`` for their rules).

    >>> from railplan import plan, spec_from_dict
    >>> cluster = {"gpus": 256, "node": "hgx-h100-8x400g"}  # 2 SUs of 16 nodes
    >>> d = plan(spec_from_dict({"cluster": cluster, "fabric": {"switches": ["cx732q-n"]}}))
    >>> [p.switch_hops for p in paths(d, "node0001", 0, "node0002", 0)]  # one leaf
    [1]
    >>> up = paths(d, "node0001", 0, "node0032", 0, routing="ecmp")  # over the spines
    >>> len(up), {p.switch_hops for p in up}
    (32, {3})
    """
    ix = fabric_index(design)
    policy = effective_policy(design, routing)
    s, s_leaf = ix.endpoint(src_node, src_port)
    d, d_leaf = ix.endpoint(dst_node, dst_port)
    first = int(2 * ix.ep_link[s, src_port])
    last = int(2 * ix.ep_link[d, dst_port] + 1)
    ix.check_reachable(np.array([s_leaf]), np.array([d_leaf]))
    col = int(ix.leaf_col[d_leaf])
    rank = int(ix.ep_rank[d, dst_port])
    s_slot, d_slot, shift = (int(x[0]) for x in ix.slots([s], [src_port], [d], [dst_port]))
    bundle_rule = policy == "deterministic" and ix.is_matrix
    found: list[tuple[list[int], float]] = []

    def walk(sw: int, hops: list[int], weight: float, div: int) -> None:
        if sw == d_leaf:
            found.append((hops, weight))
            return
        g = int(ix.group_of[sw, col])
        start, size = int(ix.g_start[g]), int(ix.g_size[g])
        if policy in ("dmodk", "deterministic"):
            if bundle_rule:
                k = int(deterministic_member(s_slot, d_slot, s > d, size, shift))
            else:
                k = (rank // div) % size
            dl = int(ix.g_members[start + k])
            walk(int(ix.dl_to[dl]), [*hops, dl], weight, div * int(ix.g_nbrs[g]))
            return
        for k in range(size):
            dl = int(ix.g_members[start + k])
            walk(int(ix.dl_to[dl]), [*hops, dl], weight / size, div)

    walk(s_leaf, [first], 1.0, 1)
    out = []
    for hops, weight in found:
        seq = [*hops, last]
        out.append(Path(tuple(Hop(*ix.describe_dlink(dl)) for dl in seq), weight))
    return out


# -- bulk -------------------------------------------------------------------------------------


@dataclass
class Routed:
    """Directed links of many flows: entry k puts ``weight[k]`` of flow ``flow[k]`` on ``dlink[k]``.

    Adaptive routing is stored factored: ``comm_of_flow`` maps flows to (source leaf,
    destination leaf) commodities, whose split over the fabric is ``comm``/``comm_dlink``/
    ``comm_weight``; the NIC links stay in the per-flow part.
    """

    flow: NDArray[np.int64]
    dlink: NDArray[np.int64]
    weight: NDArray[np.float64]
    comm_of_flow: NDArray[np.int64] | None = None
    comm: NDArray[np.int64] | None = None
    comm_dlink: NDArray[np.int64] | None = None
    comm_weight: NDArray[np.float64] | None = None
    n_comm: int = 0


def flow_hash(
    ix: FabricIndex,
    src: tuple[NDArray, NDArray],
    dst: tuple[NDArray, NDArray],
    lqpn: NDArray,
    rqpn: NDArray,
) -> NDArray[np.uint32]:
    """CRC-32 (seed 0) of each flow's RoCEv2 header fields the design's switches hash."""
    from railplan.traffic.hashing import rocev2_udp_sport

    sport = rocev2_udp_sport(lqpn, rqpn)
    return five_tuple_crc(
        ix.ep_ip[src],
        ix.ep_ip[dst],
        sport,
        ROCEV2_UDP_DPORT,
        fields=ix.design.routing.hash_fields,
    )


def route_bulk(
    ix: FabricIndex,
    src_node: NDArray,
    src_port: NDArray,
    dst_node: NDArray,
    dst_port: NDArray,
    policy: str,
    *,
    hash_base: NDArray | None = None,
    hash_seeds: str = "per-switch",
    rng: np.random.Generator | None = None,
    include_nic: bool = True,
) -> Routed:
    """Route many flows at once; vectorized over flows, one numpy step per switch hop.

    ``policy``: ``ecmp`` picks a member of each equal-cost group by the flow's hash
    (``hash_base``, the CRC of its header, through each switch's ``switch_hash``) or, with
    ``hash_base`` None, uniformly at random from ``rng``; ``dmodk`` picks member (d // div) mod
    n, d = the destination's index as OpenSM's ftree engine numbers it (``index._ftree_ranks``),
    div the product of the neighbour counts of the groups already crossed, the members of a
    group interleaved (first link to each neighbour, then the second, ...), which on a fat
    tree is the port ftree's least-loaded rule programs (``tests/test_ib_routing.py`` checks
    it against a port of osm_ucast_ftree.c); ``deterministic`` on a Matrix
    picks the member ``deterministic_member`` names (by leaf positions, not leaf port numbers,
    so rail-aligned traffic into a B leaf, whose port numbers step by the rail count, never
    piles onto a few links of a bundle) and elsewhere the D-mod-k member; ``adaptive`` splits each flow evenly over every member of
    every group (packet spraying, fluid).
    ``include_nic`` False leaves out the two NIC links (node to leaf, leaf to node).
    """
    n = len(src_node)
    s_leaf = ix.ep_leaf[src_node, src_port]
    d_leaf = ix.ep_leaf[dst_node, dst_port]
    if n and ((s_leaf < 0).any() or (d_leaf < 0).any()):
        raise RoutingError("a flow starts or ends on a node port that is not cabled")
    ix.check_reachable(s_leaf, d_leaf)
    flows = np.arange(n, dtype=np.int64)
    first = 2 * ix.ep_link[src_node, src_port].astype(np.int64)
    last = 2 * ix.ep_link[dst_node, dst_port].astype(np.int64) + 1
    nic_flow = np.concatenate([flows, flows]) if include_nic else flows[:0]
    nic_dl = np.concatenate([first, last]) if include_nic else first[:0]
    if policy == "adaptive":
        comm_keys = s_leaf.astype(np.int64) * ix.n_switches + d_leaf
        uniq, comm_of_flow = np.unique(comm_keys, return_inverse=True)
        c, dl, w = _spray(ix, (uniq // ix.n_switches).astype(np.int32), uniq % ix.n_switches)
        return Routed(
            nic_flow,
            nic_dl,
            np.ones(nic_dl.size),
            comm_of_flow.astype(np.int64).ravel(),
            c,
            dl,
            w,
            int(uniq.size),
        )
    out_f = [nic_flow]
    out_dl = [nic_dl]
    cur = s_leaf.astype(np.int32).copy()
    col = ix.leaf_col[d_leaf]
    live = np.nonzero(cur != d_leaf)[0]
    rank = ix.ep_rank[dst_node, dst_port]
    s_slot, d_slot, shift = ix.slots(src_node, src_port, dst_node, dst_port)
    later = np.asarray(src_node) > np.asarray(dst_node)
    div = np.ones(n, dtype=np.int64)
    seeds = ix.hash_seeds(hash_seeds) if hash_base is not None else None
    for _ in range(_MAX_HOPS):
        if not live.size:
            break
        sw = cur[live]
        g = ix.group_of[sw, col[live]]
        size = ix.g_size[g]
        if policy == "deterministic" and ix.is_matrix:
            k = deterministic_member(s_slot[live], d_slot[live], later[live], size, shift[live])
        elif policy in ("dmodk", "deterministic"):
            k = (rank[live] // div[live]) % size
            div[live] *= ix.g_nbrs[g]
        elif hash_base is not None:
            assert seeds is not None
            h = switch_hash(hash_base[live], seeds[sw], hash_seeds)
            k = h.astype(np.int64) % size
        else:
            gen = rng or np.random.default_rng(0)
            k = (gen.random(live.size) * size).astype(np.int64)
        dl = ix.g_members[ix.g_start[g] + k]
        out_f.append(live)
        out_dl.append(dl)
        cur[live] = ix.dl_to[dl]
        live = live[cur[live] != d_leaf[live]]
    else:
        raise RoutingError("a flow did not reach its leaf within 16 switch hops")
    f = np.concatenate(out_f)
    dls = np.concatenate(out_dl)
    return Routed(f, dls, np.ones(f.size))


def _spray(
    ix: FabricIndex, src_leaf: NDArray, dst_leaf: NDArray
) -> tuple[NDArray, NDArray, NDArray]:
    """Even split of each (source leaf, destination leaf) commodity over its equal-cost paths."""
    m = len(src_leaf)
    comm = np.arange(m, dtype=np.int64)
    cur = src_leaf.astype(np.int64)
    w: NDArray = np.ones(m)
    col = ix.leaf_col[dst_leaf].astype(np.int64)
    target = dst_leaf.astype(np.int64)
    out_c, out_dl, out_w = [], [], []
    for _ in range(_MAX_HOPS):
        live = cur != target[comm]
        comm, cur, w = comm[live], cur[live], w[live]
        if not comm.size:
            break
        g = ix.group_of[cur, col[comm]]
        size = ix.g_size[g]
        rep = np.repeat(np.arange(comm.size), size)
        offs = np.arange(rep.size) - np.repeat(np.cumsum(size) - size, size)
        dl = ix.g_members[ix.g_start[g][rep] + offs]
        c2 = comm[rep]
        w2 = w[rep] / size[rep]
        out_c.append(c2)
        out_dl.append(dl)
        out_w.append(w2)
        nxt = ix.dl_to[dl].astype(np.int64)
        key = c2 * ix.n_switches + nxt
        uk, inv = np.unique(key, return_inverse=True)
        comm = uk // ix.n_switches
        cur = uk % ix.n_switches
        w = np.bincount(inv.ravel(), weights=w2, minlength=uk.size).astype(np.float64)
    else:
        raise RoutingError("an adaptive flow did not reach its leaf within 16 switch hops")
    if not out_c:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0)
    return np.concatenate(out_c), np.concatenate(out_dl), np.concatenate(out_w)
