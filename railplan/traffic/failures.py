"""Failure what-if: take links or switches out of a design, route again, and measure the loss."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from railplan.design import Design
from railplan.errors import RailplanError
from railplan.traffic.collisions import analyze
from railplan.traffic.report import FULL_RATE, CollisionReport
from railplan.traffic.routing import fabric_index

#: a pair whose fraction moves by less than this counts as unchanged
_SAME = 1e-6


class FailureError(RailplanError):
    """A failure names no link or switch of the design."""


@dataclass(frozen=True)
class Failure:
    """What was taken out: the ids given, every link that went with them, and the NIC ports and
    nodes it cut off (a node whose NIC, or an independent port, reaches no port of the same
    rail on the rest of the fabric)."""

    failed: tuple[str, ...]
    links: tuple[str, ...]
    switches: tuple[str, ...]
    nic_ports_down: int
    cut_off: tuple[str, ...]


def fail(design: Design, ids: Sequence[str]) -> tuple[Design, Failure]:
    """The design without the given links and switches (a switch takes its links with it)."""
    link_ids = {lk.id for lk in design.links}
    switch_ids = {s.id for s in design.switches}
    wanted = list(dict.fromkeys(ids))
    unknown = [i for i in wanted if i not in link_ids and i not in switch_ids]
    if unknown:
        raise FailureError(
            f"--fail: {unknown[0]!r} is neither a link nor a switch of design {design.name} "
            "(link ids as in the cabling sheets, e.g. LS000001; switch ids as in plan, e.g. "
            "p0-spine-01)"
        )
    dead_sw = {i for i in wanted if i in switch_ids}
    gone = {
        lk.id
        for lk in design.links
        if lk.id in wanted or lk.a_device in dead_sw or lk.b_device in dead_sw
    }
    failed = replace(
        design,
        switches=tuple(s for s in design.switches if s.id not in dead_sw),
        links=tuple(lk for lk in design.links if lk.id not in gone),
        placements=tuple(p for p in design.placements if p.device not in dead_sw),
        cables=tuple(c for c in design.cables if c.link_id not in gone),
    )
    ports = sum(1 for lk in design.links if lk.kind == "node-leaf" and lk.id in gone)
    info = Failure(
        tuple(wanted),
        tuple(sorted(gone)),
        tuple(sorted(dead_sw)),
        ports,
        _cut_off(design, failed),
    )
    return failed, info


def _cut_off(design: Design, failed: Design) -> tuple[str, ...]:
    """Nodes with an endpoint none of whose ports reaches the main part of its rail's fabric."""
    ix = fabric_index(failed, intact=design)
    pos = ix.switch_pos
    sw_links = [lk for lk in failed.links if lk.a_device in pos and lk.b_device in pos]
    a = np.array([pos[lk.a_device] for lk in sw_links], dtype=np.int64)
    b = np.array([pos[lk.b_device] for lk in sw_links], dtype=np.int64)
    graph = coo_matrix((np.ones(a.size), (a, b)), shape=(ix.n_switches, ix.n_switches))
    _, comp = connected_components(graph, directed=False)
    leaf = ix.ep_leaf
    comp = np.append(comp, -1)  # an uncabled port (leaf -1) is in no component
    port_comp = comp[leaf]
    ep = fabric_index(design).endpoints  # the intact design's endpoints
    out = np.zeros(ix.n_nodes, dtype=bool)
    for group in ep.groups:
        cols = port_comp[:, list(group)]
        live = cols[cols >= 0]
        if not live.size:
            out[:] = True
            continue
        main = np.bincount(live).argmax()
        ok = cols == main
        if ep.bonded:
            out |= ~ok.any(axis=1)
        else:
            out |= ~ok.all(axis=1)
    return tuple(ix.node_ids[i] for i in np.nonzero(out)[0])


def _figures(r: CollisionReport) -> dict[str, Any]:
    return {
        "fraction_full": round(r.fraction_full, 4),
        "mean": r.bandwidth["mean"],
        "min": r.bandwidth["min"],
        "collective_fraction": None
        if r.collective_fraction is None
        else round(r.collective_fraction, 4),
    }


def what_if(
    design: Design, ids: Sequence[str], pattern: str = "pairs", max_nodes: int = 50, **kw: Any
) -> CollisionReport:
    """``pattern`` on the design with ``ids`` failed, beside the same pattern intact.

    The node pairs are placed once on the intact design and replayed on the failed one, so the
    two runs differ only by the failure. The report is the failed run's; its ``failure`` holds
    what was removed, the cut-off nodes and the figures before and after.
    """
    before = analyze(design, pattern, **kw)
    failed, info = fail(design, ids)
    replay = dict(kw)
    if pattern == "pairs":
        ids_ = before.node_ids
        replay.pop("sample", None)
        replay.pop("partners", None)
        replay["pairs"] = [(ids_[a], ids_[b]) for a, b in before.pair_nodes.tolist()]
        after = analyze(failed, pattern, intact=design, **replay)
    else:
        replay = _no_placement(replay)
        after = analyze(failed, pattern, node_pairs=before.pair_nodes, intact=design, **replay)
    delta = after.pair_fraction - before.pair_fraction
    after.failure = {
        "failed": list(info.failed),
        "links_removed": len(info.links),
        "switches_removed": len(info.switches),
        "nic_ports_down": info.nic_ports_down,
        "cut_off_nodes": len(info.cut_off),
        "cut_off_node_list": list(info.cut_off[:max_nodes]),
        "pairs_slower": int((delta < -_SAME).sum()),
        "pairs_faster": int((delta > _SAME).sum()),
        "pairs_disconnected": int(after.disconnected.sum()),
        "pairs_full_before": int((before.pair_fraction >= FULL_RATE).sum()),
        "before": _figures(before),
        "after": _figures(after),
    }
    after.notes.append(
        f"failed {', '.join(info.failed)}: {len(info.links)} link(s) out; routes recomputed "
        "over what is left (shortest paths), the same node pairs as before"
    )
    return after


_PLACEMENT = ("nodes", "order", "prefill", "decode", "rule", "prefill_fraction", "mapping", "shift")


def _no_placement(options: dict[str, Any]) -> dict[str, Any]:
    """The options without those that place the pattern (replayed pairs replace them)."""
    return {k: v for k, v in options.items() if k not in _PLACEMENT}


def candidates(design: Design) -> list[tuple[str, str]]:
    """One failure of each kind the design has: the first switch of each role and the first
    switch-to-switch link of each kind, as (id, what). Switches of one role are alike in
    every generated family, so one of each stands for all."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for s in design.switches:
        if s.role not in seen:
            seen.add(s.role)
            out.append((s.id, f"{s.role} switch"))
    for lk in design.links:
        if lk.kind not in ("node-leaf", "device-leaf") and lk.kind not in seen:
            seen.add(lk.kind)
            out.append((lk.id, f"{lk.kind} link"))
    return out


def worst_single_failure(
    design: Design, pattern: str = "alltoall", **kw: Any
) -> dict[str, Any] | None:
    """The one failure among ``candidates`` that costs ``pattern`` the most (its pace)."""
    worst: dict[str, Any] | None = None
    for ident, what in candidates(design):
        r = what_if(design, [ident], pattern, **kw)
        assert r.failure is not None
        pace = r.failure["after"]["collective_fraction"]
        entry = {
            "failed": ident,
            "what": what,
            "collective_fraction": pace,
            "before": r.failure["before"]["collective_fraction"],
            "cut_off_nodes": r.failure["cut_off_nodes"],
            "pairs_disconnected": r.failure["pairs_disconnected"],
        }
        if worst is None or pace < worst["collective_fraction"]:
            worst = entry
    return worst
