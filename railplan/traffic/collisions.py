"""Collision analyzer: route a traffic pattern, share links max-min fairly, report per-pair speed."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from railplan.design import Design
from railplan.traffic.flows import (
    DEFAULT_FLOWS_PER_NIC,
    PATTERNS,
    FlowSet,
    PatternError,
    alltoall_pairs,
    flow_set,
    pair_chunks,
    pair_list,
    pd_pairs,
    permutation_pairs,
    ring_pairs,
)
from railplan.traffic.maxmin import Incidence, max_min_fair
from railplan.traffic.report import (
    FLOWS_PER_HOT_LINK,
    FULL_RATE,
    HOTTEST_LINKS,
    CollisionReport,
)
from railplan.traffic.routing import (
    HASHES,
    FabricIndex,
    Routed,
    effective_policy,
    fabric_index,
    flow_hash,
    rail_ports,
    route_bulk,
)

Progress = Callable[[int, int], None]

#: pair tests above this many are sampled by summary_for_compare
COMPARE_PAIRS = 20_000
#: all-to-all in summary_for_compare spans at most this many nodes (a job on the first nodes)
COMPARE_ALLTOALL_NODES = 128

_PATTERN_OPTIONS = {
    "pairs": {"sample", "pairs"},
    "ring": {"order"},
    "alltoall": {"nodes", "pxn"},
    "pd": {"prefill", "decode", "rule", "prefill_fraction", "mapping", "pxn"},
    "permutation": {"pxn", "shift"},
}


# -- solving ----------------------------------------------------------------------------------


@dataclass
class _Solved:
    group_fraction: NDArray[np.float64]
    group_bottleneck: list[str]
    hot: list[tuple[float, dict[str, Any]]]
    min_fraction: float


def _route(
    ix: FabricIndex, fs: FlowSet, policy: str, hash_name: str, hash_seeds: str, rng: Any
) -> Routed:
    """Fabric links of every flow. NIC links are left out: they never bind, since a flow's
    demand is its port's line rate over the flows sharing that port (``FlowSet.ideal``)."""
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


def _solve(
    ix: FabricIndex,
    fs: FlowSet,
    policy: str,
    hash_name: str,
    hash_seeds: str,
    rng: Any,
    progress: Progress | None,
) -> _Solved:
    routed = _route(ix, fs, policy, hash_name, hash_seeds, rng)
    inc, row_dl = _incidence(ix, fs, routed)
    cap = ix.capacity[row_dl]
    rate = max_min_fair(inc, cap, fs.ideal, progress=progress)
    frac = np.minimum(rate / fs.ideal, 1.0)
    starts = np.flatnonzero(np.r_[True, fs.group[1:] != fs.group[:-1]])
    gfrac = np.minimum.reduceat(frac, starts)
    offered = inc.load(fs.ideal) / cap
    # bottleneck of each slow pair: the most oversubscribed link of its slowest flow
    gid = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, len(fs)]))
    slow_g = np.nonzero(gfrac < FULL_RATE)[0]
    necks = [""] * starts.size
    if slow_g.size:
        is_min = (frac <= gfrac[gid] + 1e-12) & (gfrac[gid] < FULL_RATE)
        cand = np.nonzero(is_min)[0]
        _, first = np.unique(gid[cand], return_index=True)
        worst = cand[first]
        best_row = _worst_row(inc, offered, worst)
        for g, r in zip(gid[worst].tolist(), best_row.tolist(), strict=True):
            if r >= 0:
                lid, a, b = ix.describe_dlink(int(row_dl[r]))
                necks[g] = f"{lid} {a}->{b}"
    hot = _hot_links(ix, fs, inc, offered, row_dl)
    return _Solved(gfrac, necks, hot, float(frac.min()) if frac.size else 1.0)


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


# -- the public entry points ------------------------------------------------------------------


def analyze(
    design: Design,
    pattern: str = "pairs",
    routing: str | None = None,
    flows_per_nic: int | None = None,
    seed: int = 0,
    partners: int | None = None,
    progress: Progress | None = None,
    *,
    hash: str = "crc32",
    hash_seeds: str = "per-switch",
    traffic_class: int = 0,
    **pattern_options: Any,
) -> CollisionReport:
    """Route ``pattern`` on ``design``, share links max-min fairly, and report per-pair rates.

    ``routing``: ecmp, dmodk, deterministic or adaptive (default: the design's policy for
    ``traffic_class``). ``flows_per_nic``: QPs per NIC connection (channels x QPs; default
    ``DEFAULT_FLOWS_PER_NIC`` = 1, NCCL's one QP per connection). ``hash``: ``crc32`` hashes the
    RoCEv2 5-tuple (source port from random QP numbers, as the kernel derives it) at every
    switch; ``random`` picks uniformly. ``hash_seeds``: ``per-switch`` or ``same``
    (polarization). Pattern options: pairs ``sample``/``pairs`` (and ``partners``); ring
    ``order``; alltoall ``nodes``, ``pxn``; pd ``prefill``, ``decode``, ``rule``,
    ``prefill_fraction``, ``mapping``; permutation ``shift``. ``progress(done, total)`` is called as flows finish.

    >>> from railplan import plan, spec_from_dict
    >>> cluster = {"gpus": 256, "node": "hgx-h100-8x400g"}
    >>> d = plan(spec_from_dict({"cluster": cluster, "fabric": {"switches": ["cx732q-n"]}}))
    >>> r = analyze(d, "pairs", seed=1)  # rail-optimized: every pair test at full rate
    >>> r.pairs, r.to_json()["pattern"], r.fraction_full
    (496, 'pairs', 1.0)
    """
    t0 = time.perf_counter()
    if pattern not in PATTERNS:
        raise PatternError(f"pattern {pattern!r} is not a pattern; use {', '.join(PATTERNS)}")
    if hash not in HASHES:
        raise PatternError(f"hash {hash!r} is not a hash model; use {', '.join(HASHES)}")
    unknown = set(pattern_options) - _PATTERN_OPTIONS[pattern]
    if unknown:
        allowed = ", ".join(sorted(_PATTERN_OPTIONS[pattern])) or "none"
        raise PatternError(
            f"pattern {pattern} has no option {sorted(unknown)[0]!r} (options: {allowed})"
        )
    if partners is not None and pattern != "pairs":
        raise PatternError("partners applies to pattern pairs only")
    f = DEFAULT_FLOWS_PER_NIC if flows_per_nic is None else int(flows_per_nic)
    if f < 1:
        raise PatternError("flows_per_nic: give at least one flow per NIC connection")
    ix = fabric_index(design)
    policy = effective_policy(design, routing, traffic_class)
    notes = [f"{f} flow(s) per NIC connection (channels x QPs)"]
    if policy == "ecmp":
        notes.append(
            "ECMP: uniform random choice per switch"
            if hash == "random"
            else f"ECMP: CRC-32 of {'/'.join(design.routing.hash_fields)}, "
            f"{hash_seeds} seeds; RoCEv2 source port from random QP numbers"
        )
    pxn = bool(pattern_options.pop("pxn", True))
    if pattern == "pairs":
        pairs, how = pair_list(
            ix, partners, pattern_options.get("sample"), pattern_options.get("pairs"), seed
        )
        notes.append(how)
        report_parts = _run_pairs(ix, pairs, f, policy, hash, hash_seeds, seed, progress)
        collective = None
    else:
        if pattern == "ring":
            pairs, how = ring_pairs(ix, pattern_options.get("order"))
        elif pattern == "alltoall":
            pairs, how = alltoall_pairs(ix, pattern_options.get("nodes"))
        elif pattern == "pd":
            opts = {k: v for k, v in pattern_options.items() if k != "pxn"}
            pairs, how = pd_pairs(ix, **opts)
        else:
            pairs, how = permutation_pairs(ix, seed, pattern_options.get("shift"))
        notes.append(how + ("" if pxn else "; no PXN: every NIC to every NIC"))
        fs = flow_set(ix, pairs[:, 0], pairs[:, 1], f, pxn=pxn)
        rng = np.random.default_rng([seed, 0])
        if progress is not None:
            progress(0, len(fs))
        solved = _solve(ix, fs, policy, hash, hash_seeds, rng, progress)
        report_parts = (pairs, solved.group_fraction, solved.group_bottleneck, solved.hot, len(fs))
        collective = solved.min_fraction
        notes.append("the collective is paced by its slowest flow: collective_fraction")
    pairs, gfrac, necks, hot, n_flows = report_parts
    hot_sorted = [e for _, e in sorted(hot, key=lambda x: -x[0])[:HOTTEST_LINKS]]
    return CollisionReport(
        design=design.name,
        topology=design.topology,
        pattern=pattern,
        routing=policy,
        hash=hash if policy == "ecmp" else None,
        hash_seeds=hash_seeds if policy == "ecmp" and hash == "crc32" else None,
        flows_per_nic=f,
        seed=seed,
        flows=n_flows,
        line_rate_gbps=ix.port_speed,
        node_ids=ix.node_ids,
        pair_nodes=pairs,
        pair_fraction=gfrac,
        pair_bottleneck=necks,
        collective_fraction=collective,
        hottest=hot_sorted,
        notes=notes,
        seconds=time.perf_counter() - t0,
    )


def _run_pairs(
    ix: FabricIndex,
    pairs: NDArray,
    f: int,
    policy: str,
    hash_name: str,
    hash_seeds: str,
    seed: int,
    progress: Progress | None,
) -> tuple[NDArray, NDArray, list[str], list[tuple[float, dict[str, Any]]], int]:
    """Every pair test on its own (tests never share links), solved in chunks."""
    per_pair = 2 * len(rail_ports(ix)) * f
    total = len(pairs) * per_pair
    fracs: list[NDArray] = []
    necks: list[str] = []
    hot: list[tuple[float, dict[str, Any]]] = []
    done = 0
    if progress is not None:
        progress(0, total)
    for k, chunk in enumerate(pair_chunks(pairs, per_pair)):
        fs = flow_set(ix, chunk[:, 0], chunk[:, 1], f, both_ways=True, experiments=True)
        rng = np.random.default_rng([seed, k])
        solved = _solve(ix, fs, policy, hash_name, hash_seeds, rng, None)
        fracs.append(solved.group_fraction)
        necks.extend(solved.group_bottleneck)
        hot = sorted(hot + solved.hot, key=lambda x: -x[0])
        hot = _dedupe_hot(hot)[:HOTTEST_LINKS]
        done += len(fs)
        if progress is not None:
            progress(done, total)
    frac = np.concatenate(fracs) if fracs else np.zeros(0)
    return pairs, frac, necks, hot, total


def _dedupe_hot(hot: list[tuple[float, dict[str, Any]]]) -> list[tuple[float, dict[str, Any]]]:
    seen: set[tuple[str, str]] = set()
    out = []
    for v, e in hot:
        key = (e["link"], e["from"])
        if key not in seen:
            seen.add(key)
            out.append((v, e))
    return out


def summary_for_compare(design: Design, seed: int = 0) -> dict[str, Any]:
    """Pair-test and all-to-all figures under the design's routing, fast at 32k GPUs.

    Pair tests: every pair up to ``COMPARE_PAIRS`` pairs, else that many sampled (``sampled``
    says so). All-to-all: across the first ``COMPARE_ALLTOALL_NODES`` nodes (a job placed on
    consecutive nodes) when the cluster is larger.
    """
    ix = fabric_index(design)
    n = ix.n_nodes
    out: dict[str, Any] = {
        "routing": effective_policy(design),
        "flows_per_nic": DEFAULT_FLOWS_PER_NIC,
    }
    if n < 2:
        out["pairs"] = out["alltoall"] = None
        return out
    total = n * (n - 1) // 2
    sample = COMPARE_PAIRS if total > COMPARE_PAIRS else None
    pr = analyze(design, "pairs", seed=seed, sample=sample)
    out["pairs"] = {
        "pairs": pr.pairs,
        "of_pairs": total,
        "sampled": sample is not None,
        "fraction_full": round(pr.fraction_full, 4),
        "fraction_half_or_less": round(pr.fraction_half_or_less, 4),
        "mean": pr.bandwidth["mean"],
        "min": pr.bandwidth["min"],
    }
    m = min(n, COMPARE_ALLTOALL_NODES)
    nodes: Sequence[int] | None = list(range(m)) if m < n else None
    ar = analyze(design, "alltoall", seed=seed, nodes=nodes)
    out["alltoall"] = {
        "nodes": m,
        "of_nodes": n,
        "sampled": m < n,
        "collective_fraction": round(ar.collective_fraction or 0.0, 4),
        "mean": ar.bandwidth["mean"],
        "fraction_full": round(ar.fraction_full, 4),
    }
    if m < n:
        out["alltoall"]["note"] = f"all-to-all of a job on the first {m} of {n} nodes"
    if sample is not None:
        out["pairs"]["note"] = f"{sample} of {total} node pairs sampled (seed {seed})"
    return out
