"""Collision analyzer: route a traffic pattern, share links max-min fairly, report per-pair speed."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from railplan.design import Design
from railplan.traffic.flows import (
    PATTERNS,
    PatternError,
    alltoall_pairs,
    default_flows_per_nic,
    flow_set,
    pair_chunks,
    pair_list,
    pd_pairs,
    permutation_pairs,
    ring_pairs,
)
from railplan.traffic.report import HOTTEST_LINKS, CollisionReport
from railplan.traffic.routing import HASHES, FabricIndex, effective_policy, fabric_index
from railplan.traffic.sharing import Progress, solve

_PATTERN_OPTIONS = {
    "pairs": {"sample", "pairs"},
    "ring": {"order"},
    "alltoall": {"nodes", "pxn"},
    "pd": {"prefill", "decode", "rule", "prefill_fraction", "mapping", "nodes", "pxn"},
    "permutation": {"pxn", "shift"},
}

#: most flows (QPs) per NIC connection the analyzer routes: channels x QPs per connection;
#: NCCL runs at most 64 channels (``MAXCHANNELS`` in its src/include/device.h) with one QP
#: each by default (``NCCL_IB_QPS_PER_CONNECTION=1``); each flow is routed and shared, so the
#: bound keeps a run's work proportional to the design
MAX_FLOWS_PER_NIC = 64


def check_options(pattern: str, hash_name: str, partners: Any, options: dict[str, Any]) -> None:
    """Refuse a pattern, hash model or option no design could run (checked before any planning)."""
    if pattern not in PATTERNS:
        raise PatternError(f"pattern {pattern!r} is not a pattern; use {', '.join(PATTERNS)}")
    if hash_name not in HASHES:
        raise PatternError(f"hash {hash_name!r} is not a hash model; use {', '.join(HASHES)}")
    unknown = set(options) - _PATTERN_OPTIONS[pattern]
    if unknown:
        allowed = ", ".join(sorted(_PATTERN_OPTIONS[pattern])) or "none"
        raise PatternError(
            f"pattern {pattern} has no option {sorted(unknown)[0]!r} (options: {allowed})"
        )
    if partners is not None and pattern != "pairs":
        raise PatternError("partners applies to pattern pairs only")


def _notes(ix: FabricIndex, policy: str, f: int, hash_name: str, hash_seeds: str) -> list[str]:
    """What the figures assume: endpoints and bonding, QPs, how links are chosen."""
    ep = ix.endpoints
    notes = [
        ep.why,
        f"{f} flow(s) (QPs) per NIC connection (channels x QPs); fractions are of the "
        f"{ep.nic_gbps:g}G logical NIC",
    ]
    if policy == "ecmp":
        notes.append(
            "ECMP: uniform random choice per switch"
            if hash_name == "random"
            else f"ECMP: CRC-32 of {'/'.join(ix.design.routing.hash_fields)}, "
            f"{hash_seeds} seeds; RoCEv2 source port from random QP numbers"
        )
    elif policy == "deterministic" and ix.is_matrix:
        notes.append(
            "deterministic: no hash; in a bundle of m parallel links a flow to a later node "
            "takes link s mod m, to an earlier node (-t - 1) mod m ((s + t + 1) mod m if m is "
            "odd), s and t the source's and destination's positions on their leaves"
        )
    return notes


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
    node_pairs: NDArray | None = None,
    intact: Design | None = None,
    **pattern_options: Any,
) -> CollisionReport:
    """Route ``pattern`` on ``design``, share links max-min fairly, and report per-pair rates.

    ``routing``: ecmp, dmodk, deterministic or adaptive (default: the design's policy for
    ``traffic_class``). ``flows_per_nic``: QPs per NIC connection (channels x QPs; default one
    per port of the NIC: 1, or 2 on a bonded dual-port NIC, see
    ``flows.default_flows_per_nic``). ``hash``: ``crc32`` hashes the RoCEv2 5-tuple (source
    port from random QP numbers, as the kernel derives it) at every switch; ``random`` picks
    uniformly. ``hash_seeds``: ``per-switch`` or ``same`` (polarization). Pattern options: pairs
    ``sample``/``pairs`` (and ``partners``); ring ``order``; alltoall ``nodes``, ``pxn``; pd
    ``prefill``, ``decode``, ``rule``, ``prefill_fraction``, ``mapping``; permutation
    ``shift``. ``node_pairs`` (collectives only): run on these (source, destination) node
    indices instead of placing the pattern again, e.g. another report's ``pair_nodes``.
    ``intact``: the design ``design`` was failed from (``failures.fail``): connections keep
    their endpoints and deterministic links, and those left without a route are lost.
    ``progress(done, total)`` is called as flows finish. Fractions are of the logical NIC's
    line rate (both ports of a bonded NIC).

    >>> from railplan import plan, spec_from_dict
    >>> cluster = {"gpus": 256, "node": "hgx-h100-8x400g"}
    >>> d = plan(spec_from_dict({"cluster": cluster, "fabric": {"switches": ["cx732q-n"]}}))
    >>> r = analyze(d, "pairs", seed=1)  # rail-optimized: every pair test at full rate
    >>> r.pairs, r.to_json()["pattern"], r.fraction_full
    (496, 'pairs', 1.0)
    """
    t0 = time.perf_counter()
    check_options(pattern, hash, partners, pattern_options)
    ix = fabric_index(design, intact)
    f = default_flows_per_nic(ix) if flows_per_nic is None else int(flows_per_nic)
    if not 1 <= f <= MAX_FLOWS_PER_NIC:
        raise PatternError(
            f"flows_per_nic: give 1 to {MAX_FLOWS_PER_NIC} flows (QPs) per NIC connection, not {f}"
        )
    policy = effective_policy(design, routing, traffic_class)
    notes = _notes(ix, policy, f, hash, hash_seeds)
    pxn = bool(pattern_options.pop("pxn", True))
    if pattern == "pairs":
        pairs, how = pair_list(
            ix, partners, pattern_options.get("sample"), pattern_options.get("pairs"), seed
        )
        notes.append(how)
        report_parts = _run_pairs(ix, pairs, f, policy, hash, hash_seeds, seed, progress)
        collective = None
    else:
        if node_pairs is None:
            pairs, how = _pattern_pairs(ix, pattern, seed, pattern_options)
        else:
            pairs = np.asarray(node_pairs, dtype=np.int64).reshape(-1, 2)
            how = f"{len(pairs)} given node pairs"
        notes.append(how + ("" if pxn else "; no PXN: every NIC to every NIC"))
        fs = flow_set(ix, pairs[:, 0], pairs[:, 1], f, pxn=pxn)
        rng = np.random.default_rng([seed, 0])
        if progress is not None:
            progress(0, len(fs))
        solved = solve(ix, fs, policy, hash, hash_seeds, rng, progress)
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
        line_rate_gbps=ix.endpoints.nic_gbps,
        port_rate_gbps=ix.endpoints.port_gbps,
        bonding=ix.endpoints.bonding,
        node_ids=ix.node_ids,
        pair_nodes=pairs,
        pair_fraction=gfrac,
        pair_bottleneck=necks,
        collective_fraction=collective,
        hottest=hot_sorted,
        notes=notes,
        seconds=time.perf_counter() - t0,
    )


def _pattern_pairs(
    ix: FabricIndex, pattern: str, seed: int, options: dict[str, Any]
) -> tuple[NDArray, str]:
    if pattern == "ring":
        return ring_pairs(ix, options.get("order"))
    if pattern == "alltoall":
        return alltoall_pairs(ix, options.get("nodes"))
    if pattern == "pd":
        return pd_pairs(ix, **{k: v for k, v in options.items() if k != "pxn"})
    return permutation_pairs(ix, seed, options.get("shift"))


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
    ep = ix.endpoints
    conns = len(ep.groups) if ep.bonded else sum(len(g) for g in ep.groups)
    per_pair = 2 * conns * f
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
        solved = solve(ix, fs, policy, hash_name, hash_seeds, rng, None)
        fracs.append(solved.group_fraction)
        necks.extend(solved.group_bottleneck)
        hot = sorted(hot + solved.hot, key=lambda x: -x[0])
        hot = _dedupe_hot(hot)[:HOTTEST_LINKS]
        done += len(chunk) * per_pair
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
