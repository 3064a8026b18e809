"""Route a flow set, share its links max-min fairly, and reduce to each node pair's slowest flow."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from railplan.traffic.flows import FlowSet
from railplan.traffic.maxmin import Incidence, max_min_fair
from railplan.traffic.report import FLOWS_PER_HOT_LINK, FULL_RATE, HOTTEST_LINKS
from railplan.traffic.routing import FabricIndex, Routed, flow_hash, route_bulk

Progress = Callable[[int, int], None]


@dataclass
class Solved:
    group_fraction: NDArray[np.float64]
    group_bottleneck: list[str]
    hot: list[tuple[float, dict[str, Any]]]
    min_fraction: float


def _route(
    ix: FabricIndex, fs: FlowSet, policy: str, hash_name: str, hash_seeds: str, rng: Any
) -> Routed:
    """Fabric links of every flow. NIC links are left out: they never bind, since a flow's
    demand is its port's line rate over the flows sharing that port (``FlowSet.demand``)."""
    if policy == "ecmp" and hash_name == "crc32":
        lqpn = rng.integers(0x100, 1 << 24, size=len(fs), dtype=np.int64)
        rqpn = rng.integers(0x100, 1 << 24, size=len(fs), dtype=np.int64)
        base = flow_hash(ix, (fs.src_node, fs.src_port), (fs.dst_node, fs.dst_port), lqpn, rqpn)
        return route_bulk(
            ix,
            fs.src_node,
            fs.src_port,
            fs.dst_node,
            fs.dst_port,
            policy,
            hash_base=base,
            hash_seeds=hash_seeds,
            include_nic=False,
        )
    return route_bulk(
        ix, fs.src_node, fs.src_port, fs.dst_node, fs.dst_port, policy, rng=rng, include_nic=False
    )


def _incidence(ix: FabricIndex, fs: FlowSet, routed: Routed) -> tuple[Incidence, NDArray]:
    """Links x flows matrix whose rows are (experiment, directed link); and each row's link."""
    n = len(fs)
    exp = fs.exp
    keys = [routed.dlink if exp is None else exp[routed.flow] * ix.n_dlinks + routed.dlink]
    comm_keys = None
    if routed.comm_of_flow is not None:
        assert routed.comm is not None and routed.comm_dlink is not None
        assert routed.comm_weight is not None
        if exp is None:
            comm_of_flow = routed.comm_of_flow
            c_ids = routed.comm
            c_dl = routed.comm_dlink
            c_w = routed.comm_weight
            comm_keys = c_dl
            n_comm = routed.n_comm
        else:  # commodities are per experiment, so pair tests never share a link row
            pe = exp * routed.n_comm + routed.comm_of_flow
            uniq, inv = np.unique(pe, return_inverse=True)
            comm_of_flow = inv.ravel()
            base = uniq % routed.n_comm
            order = np.argsort(routed.comm, kind="stable")
            starts = np.searchsorted(routed.comm[order], np.arange(routed.n_comm + 1))
            cnt = starts[1:] - starts[:-1]
            reps = cnt[base]
            c_ids = np.repeat(np.arange(uniq.size), reps)
            offs = np.arange(c_ids.size) - np.repeat(np.cumsum(reps) - reps, reps)
            entry = order[starts[:-1][base][c_ids] + offs]
            c_dl = routed.comm_dlink[entry]
            c_w = routed.comm_weight[entry]
            comm_keys = (uniq // routed.n_comm)[c_ids] * ix.n_dlinks + c_dl
            n_comm = int(uniq.size)
        keys.append(comm_keys)
    all_keys = np.concatenate(keys)
    row_keys, inv = np.unique(all_keys, return_inverse=True)
    inv = inv.ravel()
    n_rows = row_keys.size
    d_rows = inv[: routed.flow.size]
    direct = sparse.csc_matrix(
        (routed.weight, (d_rows, routed.flow)), shape=(n_rows, n), dtype=np.float64
    )
    direct.sum_duplicates()
    inc = Incidence(direct)
    if comm_keys is not None:
        c_rows = inv[routed.flow.size :]
        inc.via = sparse.csr_matrix((c_w, (c_rows, c_ids)), shape=(n_rows, n_comm))
        inc.member = sparse.csc_matrix(
            (np.ones(n), (comm_of_flow, np.arange(n))), shape=(n_comm, n)
        )
    return inc, row_keys % ix.n_dlinks


def solve(
    ix: FabricIndex,
    fs: FlowSet,
    policy: str,
    hash_name: str,
    hash_seeds: str,
    rng: Any,
    progress: Progress | None,
) -> Solved:
    """Route, share max-min, and reduce to each node pair's slowest flow (0 if disconnected)."""
    gfrac = np.ones(fs.n_groups)
    necks = [""] * fs.n_groups
    hot: list[tuple[float, dict[str, Any]]] = []
    if len(fs):
        routed = _route(ix, fs, policy, hash_name, hash_seeds, rng)
        inc, row_dl = _incidence(ix, fs, routed)
        cap = ix.capacity[row_dl]
        rate = max_min_fair(inc, cap, fs.demand, progress=progress)
        frac = np.minimum(rate / fs.target, 1.0)
        starts = np.flatnonzero(np.r_[True, fs.group[1:] != fs.group[:-1]])
        run_min = np.minimum.reduceat(frac, starts)
        gfrac[fs.group[starts]] = run_min
        offered = inc.load(fs.demand) / cap
        run = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, len(fs)]))
        slow = (frac <= run_min[run] + 1e-12) & (run_min[run] < FULL_RATE)
        cand = np.nonzero(slow)[0]
        if cand.size:  # bottleneck of each slow pair: its slowest flow's busiest link
            _, first = np.unique(run[cand], return_index=True)
            worst = cand[first]
            best_row = _worst_row(inc, offered, worst)
            for w, r in zip(worst.tolist(), best_row.tolist(), strict=True):
                g = int(fs.group[w])
                if rate[w] >= fs.demand[w] * (1 - 1e-9) or r < 0:
                    necks[g] = _nic_neck(ix, fs, w)
                else:
                    lid, a, b = ix.describe_dlink(int(row_dl[r]))
                    necks[g] = f"{lid} {a}->{b}"
        hot = _hot_links(ix, fs, inc, offered, row_dl)
    gfrac[fs.lost] = 0.0
    for g in fs.lost.tolist():
        necks[g] = "disconnected"
    return Solved(gfrac, necks, hot, float(gfrac.min()) if gfrac.size else 1.0)


def _nic_neck(ix: FabricIndex, fs: FlowSet, f: int) -> str:
    """A flow held by its NIC ports, not the fabric: its ports, as the bottleneck's name."""
    shape = ix.design.shape
    a = f"{ix.node_ids[fs.src_node[f]]}:{shape.port_name(int(fs.src_port[f]))}"
    b = f"{ix.node_ids[fs.dst_node[f]]}:{shape.port_name(int(fs.dst_port[f]))}"
    return f"NIC ports {a}->{b}"


def _worst_row(inc: Incidence, offered: NDArray, flows: NDArray) -> NDArray:
    """For each flow, the row it crosses with the highest offered load (or -1)."""
    sub = inc.direct[:, flows].tocsc()
    best = np.full(flows.size, -1, dtype=np.int64)
    best_val = np.full(flows.size, -np.inf)
    lens = np.diff(sub.indptr)
    if sub.nnz:
        col = np.repeat(np.arange(flows.size), lens)
        vals = offered[sub.indices]
        order = np.lexsort((-vals, col))
        first = np.r_[0, np.cumsum(lens)[:-1]][lens > 0]
        best[lens > 0] = sub.indices[order[first]]
        best_val[lens > 0] = vals[order[first]]
    if inc.via is not None and inc.member is not None:
        comm = inc.member[:, flows].tocsc().indices
        via = inc.via.tocsc()[:, comm].tocsc()
        vl = np.diff(via.indptr)
        if via.nnz:
            col = np.repeat(np.arange(flows.size), vl)
            vals = offered[via.indices]
            order = np.lexsort((-vals, col))
            first = np.r_[0, np.cumsum(vl)[:-1]][vl > 0]
            rows = via.indices[order[first]]
            v = vals[order[first]]
            idx = np.nonzero(vl > 0)[0]
            better = v > best_val[idx]
            best[idx[better]] = rows[better]
    return best


def _hot_links(
    ix: FabricIndex, fs: FlowSet, inc: Incidence, offered: NDArray, row_dl: NDArray
) -> list[tuple[float, dict[str, Any]]]:
    """The most oversubscribed rows (one per physical link direction) with their flows."""
    fabric = ix.dl_from[row_dl] >= 0
    fabric &= ix.dl_to[row_dl] >= 0
    cand = np.nonzero(fabric & (offered > FULL_RATE))[0]
    if not cand.size:
        cand = np.nonzero(fabric)[0]
    if not cand.size:
        return []
    order = cand[np.argsort(-offered[cand], kind="stable")]
    seen: set[int] = set()
    out = []
    for r in order.tolist():
        dl = int(row_dl[r])
        if dl in seen:
            continue
        seen.add(dl)
        onehot = np.zeros(len(offered))
        onehot[r] = 1.0
        share = inc.touch(onehot)
        flows = np.nonzero(share > 0)[0]
        lid, a, b = ix.describe_dlink(dl)
        names = [
            f"{ix.node_ids[fs.src_node[f]]}:p{fs.src_port[f]}->"
            f"{ix.node_ids[fs.dst_node[f]]}:p{fs.dst_port[f]}"
            for f in flows[:FLOWS_PER_HOT_LINK].tolist()
        ]
        entry = {
            "link": lid,
            "from": a,
            "to": b,
            "flows": round(float(share.sum()), 3),
            "offered_load": round(float(offered[r]), 4),
            "flow_list": names,
        }
        if fs.exp is not None and flows.size:
            g = int(fs.group[flows[0]])
            na, nb = fs.group_nodes[g].tolist()
            entry["test"] = f"{ix.node_ids[na]}<->{ix.node_ids[nb]}"
        out.append((float(offered[r]), entry))
        if len(out) >= HOTTEST_LINKS:
            break
    return out
