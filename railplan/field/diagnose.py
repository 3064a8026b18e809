"""Diagnose slow pair tests: node faults (slow with every partner) versus fabric faults.

The rule is the field's partner test ("Why Your GPU Fabric Runs at Half Speed"): a node slow
with every partner has a node problem (ACS on, GPUDirect RDMA off, its own cables); a node slow
with some partners only points at the fabric. "Every partner" counts GPU-to-GPU (NCCL) pairs
when the node has any: a host-memory ib_write_bw does not cross ACS or GPUDirect and stays fast
on such a node. A node that failed a node check is a node fault outright. For fabric faults the
design's paths name the suspects: links every unexplained slow pair may cross, minus links some
fast pair must cross (a fast pair cannot have crossed a bad link it always uses). Under ECMP a
pair "may" cross every equal-cost path and "must" cross only the links all of them share, so
suspects stay wider than under static routing; the next test suggested is the pair that best
halves the remaining suspects.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from railplan.design import Design, Link
from railplan.errors import RailplanError
from railplan.traffic.flows import default_flows_per_nic, flow_set
from railplan.traffic.routing import fabric_index, paths

#: most candidate pairs examined when looking for the test that splits the suspects
SUGGEST_BUDGET = 3000


@dataclass(frozen=True, slots=True)
class PairResult:
    """One two-node bandwidth test: which ports it ran on (empty: every rail) and if it was slow."""

    test_id: str
    nodes: tuple[str, str]
    slow: bool
    ports: tuple[tuple[int, int], ...] = ()
    #: GPU memory to GPU memory (NCCL): crosses ACS and GPUDirect RDMA, unlike host-memory
    #: ib_write_bw, so only these tell a node's GPU path apart
    gpu: bool = True


@dataclass(frozen=True, slots=True)
class NodeFault:
    node: str
    partners: tuple[str, ...]
    failed_checks: tuple[str, ...]
    confirmed: bool
    message: str


@dataclass(frozen=True, slots=True)
class LinkSuspect:
    link_id: str
    label: str
    a: str
    b: str
    slow_pairs: int
    fast_pairs_may_cross: int


@dataclass(frozen=True)
class Diagnosis:
    node_faults: tuple[NodeFault, ...] = ()
    suspects: tuple[LinkSuspect, ...] = ()
    next_tests: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def fault_nodes(self) -> tuple[str, ...]:
        return tuple(f.node for f in self.node_faults if f.confirmed)

    def to_json(self) -> dict[str, object]:
        return {
            "node_faults": [
                {
                    "node": f.node,
                    "partners": list(f.partners),
                    "failed_checks": list(f.failed_checks),
                    "confirmed": f.confirmed,
                    "message": f.message,
                }
                for f in self.node_faults
            ],
            "fabric_suspects": [
                {
                    "link": s.link_id,
                    "label": s.label,
                    "a": s.a,
                    "b": s.b,
                    "slow_pairs": s.slow_pairs,
                    "fast_pairs_may_cross": s.fast_pairs_may_cross,
                }
                for s in self.suspects
            ],
            "next_tests": list(self.next_tests),
            "notes": list(self.notes),
        }


# -- paths ---------------------------------------------------------------------------------------


def _port_pairs(design: Design, u: str, v: str) -> list[tuple[int, int]]:
    """(u port, v port) of every flow a full (every-rail) test from u to v makes, in port order:
    the same rail on both ends, or on a Matrix an A port to a B port and a B port to an A port."""
    ix = fabric_index(design)
    s = np.array([ix.node_pos[u]], dtype=np.int64)
    d = np.array([ix.node_pos[v]], dtype=np.int64)
    fs = flow_set(ix, s, d, default_flows_per_nic(ix))
    return sorted(set(zip(fs.src_port.tolist(), fs.dst_port.tolist(), strict=True)))


_CACHE: dict[
    int, tuple[Design, dict[tuple[str, int, str, int], tuple[frozenset[str], frozenset[str]]]]
] = {}


def _flow_sets(
    design: Design, u: str, up: int, v: str, vp: int
) -> tuple[frozenset[str], frozenset[str]]:
    """(links on every path, links on some path) of one flow; empty when it cannot be routed."""
    hit = _CACHE.get(id(design))
    if hit is None or hit[0] is not design:
        if len(_CACHE) > 4:
            _CACHE.clear()
        hit = _CACHE[id(design)] = (design, {})
    memo = hit[1]
    key = (u, up, v, vp)
    if key not in memo:
        try:
            sets = [frozenset(p.links) for p in paths(design, u, up, v, vp)]
        except RailplanError:
            sets = []
        if sets:
            memo[key] = (frozenset.intersection(*sets), frozenset.union(*sets))
        else:
            memo[key] = (frozenset(), frozenset())
    return memo[key]


def link_sets(
    design: Design, u: str, v: str, ports: Sequence[tuple[int, int]] = ()
) -> tuple[frozenset[str], frozenset[str]]:
    """(must, may): links a u-v test crosses on every path, and on some path (both directions)."""
    must: set[str] = set()
    may: set[str] = set()
    for up, vp in ports or _port_pairs(design, u, v):
        for s, sp, d, dp in ((u, up, v, vp), (v, vp, u, up)):
            m, y = _flow_sets(design, s, sp, d, dp)
            must |= m
            may |= y
    return frozenset(must), frozenset(may)


def own_links(design: Design, node: str) -> frozenset[str]:
    return frozenset(lk.id for lk in design.links if node in (lk.a_device, lk.b_device))


# -- the diagnosis --------------------------------------------------------------------------------


class _Evidence:
    """What the pair results say, indexed: links each pair may and must cross, fast and slow."""

    def __init__(self, design: Design, pairs: Sequence[PairResult]) -> None:
        self.sets = {p.test_id: link_sets(design, *p.nodes, p.ports) for p in pairs}
        self.by_node: dict[str, list[PairResult]] = defaultdict(list)
        for p in pairs:
            for n in p.nodes:
                self.by_node[n].append(p)
        fast = [p for p in pairs if not p.slow]
        #: links some fast pair must cross: a fast pair cannot have crossed a bad link it always uses
        self.cleared = (
            frozenset().union(*(self.sets[p.test_id][0] for p in fast)) if fast else frozenset()
        )
        self.fast_may: dict[str, int] = defaultdict(int)
        for p in fast:
            for link in self.sets[p.test_id][1]:
                self.fast_may[link] += 1
        # fast with someone over the GPU path: not a node fault
        self.healthy = {
            n for p in fast for n in p.nodes if p.gpu or not _gpu_pairs(self.by_node[n])
        }

    def mine(self, node: str) -> list[PairResult]:
        """The node's pairs that judge it: GPU pairs when it has any."""
        return _gpu_pairs(self.by_node[node]) or self.by_node[node]

    def may(self, pair: PairResult) -> frozenset[str]:
        return self.sets[pair.test_id][1]


def diagnose(
    design: Design,
    pairs: Sequence[PairResult],
    failed_checks: Mapping[str, Sequence[str]] | None = None,
) -> Diagnosis:
    """Name node faults and fabric suspects from pair results (``failed_checks``: node -> ids)."""
    failed = {k: tuple(v) for k, v in (failed_checks or {}).items() if v}
    if not pairs:
        return Diagnosis(
            node_faults=tuple(_fault(n, (), failed[n], True) for n in sorted(failed)),
            notes=("no two-node bandwidth results to diagnose",) if failed else (),
        )
    ev = _Evidence(design, pairs)
    fault_nodes, unsure = _node_faults(design, ev, failed)
    slow = [p for p in pairs if p.slow and not fault_nodes & set(p.nodes)]
    suspects, notes = _fabric_suspects(ev, slow)
    faults, next_tests = _fault_rows(design, ev, failed, fault_nodes, unsure, suspects)
    labels = {c.link_id: c.id for c in design.cables}
    ranked = _ranked(design, ev, slow, suspects, labels)
    if len(suspects) > 1:
        next_tests.append(_split_test(design, suspects, fault_nodes, labels))
    elif len(suspects) == 1:
        next_tests.append(
            f"replace or reseat cable {labels.get(suspects[0], suspects[0])} and rerun the "
            "slow pairs"
        )
    return Diagnosis(tuple(faults), ranked, tuple(next_tests), tuple(notes))


def _node_faults(
    design: Design, ev: _Evidence, failed: Mapping[str, tuple[str, ...]]
) -> tuple[set[str], dict[str, str]]:
    """Nodes slow with every partner that a witness confirms, and those left unsure (why)."""
    fault_nodes: set[str] = {n for n in failed if n in ev.by_node}
    unsure: dict[str, str] = {}
    for node in sorted(ev.by_node):
        mine = ev.mine(node)
        if node in fault_nodes or not all(p.slow for p in mine):
            continue
        if _witness(node, mine, ev.sets, ev.healthy, ev.cleared, own_links(design, node)):
            fault_nodes.add(node)
        else:
            mates = {q for p in mine for q in p.nodes if q != node}
            unsure[node] = (
                "one partner only"
                if len(mates) < 2
                else "its partners are slow elsewhere too, or share fabric links with it"
            )
    return fault_nodes, unsure


def _fabric_suspects(ev: _Evidence, slow: Sequence[PairResult]) -> tuple[list[str], list[str]]:
    """Links every unexplained slow pair may cross, minus cleared ones (else greedy); notes."""
    notes: list[str] = []
    if not slow:
        return [], notes
    common = frozenset.intersection(*(ev.may(p) for p in slow)) - ev.cleared
    if common:
        return sorted(common, key=lambda k: (ev.fast_may[k], k)), notes
    notes.append(
        "no single link explains every slow pair: more than one fault; suspects are "
        "the links that explain the most slow pairs"
    )
    suspects = _greedy(slow, ev.sets, ev.cleared, ev.fast_may)
    if not suspects:
        notes.append("every link the slow pairs cross is also crossed by a fast pair")
    return suspects, notes


def _fault_rows(
    design: Design,
    ev: _Evidence,
    failed: Mapping[str, tuple[str, ...]],
    fault_nodes: set[str],
    unsure: Mapping[str, str],
    suspects: Sequence[str],
) -> tuple[list[NodeFault], list[str]]:
    """A NodeFault per confirmed or unexplained node, and the pair test that would settle it."""
    faults: list[NodeFault] = []
    next_tests: list[str] = []
    for node in sorted(ev.by_node):
        mine = ev.mine(node)
        partners = tuple(sorted({q for p in mine for q in p.nodes if q != node}))
        if node in fault_nodes:
            slow_with = tuple(sorted({q for p in mine if p.slow for q in p.nodes if q != node}))
            faults.append(_fault(node, partners, failed.get(node, ()), True, slow_with=slow_with))
            continue
        if node not in unsure:
            continue
        left = [p for p in ev.by_node[node] if p.slow and not fault_nodes & (set(p.nodes) - {node})]
        if not left or all(ev.may(p) & set(suspects) for p in left):
            continue  # slow only with node faults, or the fabric suspects explain every slow pair
        faults.append(_fault(node, partners, (), False, unsure[node]))
        partner = _same_leaf_partner(design, node, exclude=set(partners) | fault_nodes)
        if partner:
            next_tests.append(
                f"pair test {node} + {partner}: they share their leaves, so no fabric link "
                f"is crossed; slow again means {node} has a node fault"
            )
    for node in sorted(set(failed) - set(ev.by_node)):
        faults.append(_fault(node, (), failed[node], True))
    return faults, next_tests


def _ranked(
    design: Design,
    ev: _Evidence,
    slow: Sequence[PairResult],
    suspects: Sequence[str],
    labels: Mapping[str, str],
) -> tuple[LinkSuspect, ...]:
    links = {lk.id: lk for lk in design.links}
    return tuple(
        LinkSuspect(
            k,
            labels.get(k, k),
            f"{links[k].a_device}:{_port(design, links[k], 'a')}",
            f"{links[k].b_device}:{_port(design, links[k], 'b')}",
            sum(1 for p in slow if k in ev.may(p)),
            ev.fast_may[k],
        )
        for k in suspects
    )


def _gpu_pairs(pairs: Sequence[PairResult]) -> list[PairResult]:
    return [p for p in pairs if p.gpu]


def _witness(
    node: str,
    mine: Sequence[PairResult],
    sets: Mapping[str, tuple[frozenset[str], frozenset[str]]],
    healthy: set[str],
    cleared: frozenset[str],
    own: frozenset[str],
) -> bool:
    """Do healthy partners prove ``node`` slow by itself (not by the fabric between them)?

    One healthy partner whose path to ``node`` crosses only links fast pairs cleared, or two or
    more healthy partners whose paths share no fabric link beyond ``node``'s own cables.
    """
    witnesses = [p for p in mine if set(p.nodes) - {node} <= healthy]
    if any(not (sets[p.test_id][1] - own - cleared) for p in witnesses):
        return True
    partners = {q for p in witnesses for q in p.nodes if q != node}
    if len(partners) < 2:
        return False
    shared = frozenset.intersection(*(sets[p.test_id][1] for p in witnesses)) - own - cleared
    return not shared


def _port(design: Design, link: Link, end: str) -> str:
    device = link.a_device if end == "a" else link.b_device
    port = link.a_port if end == "a" else link.b_port
    return design.port_name(device, port)


def _fault(
    node: str,
    partners: Sequence[str],
    checks: Sequence[str],
    confirmed: bool,
    why: str = "",
    slow_with: Sequence[str] | None = None,
) -> NodeFault:
    if confirmed:
        slow = list(partners if slow_with is None else slow_with)
        if partners and len(slow) == len(partners):
            evidence = f"slow with every partner ({', '.join(partners)})"
        elif partners:
            evidence = f"slow with {len(slow)} of {len(partners)} partners"
        else:
            evidence = ""
        if checks:
            failed = f"failed node check(s) {', '.join(checks)}"
            evidence = f"{evidence}; {failed}" if evidence else failed
        message = (
            f"{node}: node fault ({evidence}): check ACS (lspci ACSCtl must show SrcValid-), "
            "GPUDirect RDMA (nvidia_peermem loaded, NET/IB/<n>/GDRDMA in the NCCL log) and the "
            "node's own cables"
        )
    else:
        message = (
            f"{node}: slow with every partner ({', '.join(partners)}) but not yet a node fault "
            f"({why}); test it against a partner on its own leaves"
        )
    return NodeFault(node, tuple(partners), tuple(checks), confirmed, message)


def _greedy(
    slow: Sequence[PairResult],
    sets: dict[str, tuple[frozenset[str], frozenset[str]]],
    cleared: frozenset[str],
    fast_may: dict[str, int],
) -> list[str]:
    """Links covering the most unexplained slow pairs, group by group (ties kept together)."""
    left = list(slow)
    out: list[str] = []
    while left:
        score: dict[str, int] = defaultdict(int)
        for p in left:
            for link in sets[p.test_id][1] - cleared:
                score[link] += 1
        if not score:
            break
        best = max(score.values())
        group = sorted((k for k, s in score.items() if s == best), key=lambda k: (fast_may[k], k))
        out.extend(k for k in group if k not in out)
        left = [p for p in left if not (sets[p.test_id][1] & set(group))]
    return out


def _leaves_of(design: Design, node: str) -> frozenset[str]:
    return frozenset(lk.b_device for lk in design.links if lk.a_device == node)


def _same_leaf_partner(design: Design, node: str, exclude: Iterable[str]) -> str | None:
    leaves = _leaves_of(design, node)
    skip = {node, *exclude}
    for other in design.nodes:
        if other.id not in skip and _leaves_of(design, other.id) == leaves:
            return other.id
    return None


def _split_test(
    design: Design, suspects: Sequence[str], fault_nodes: set[str], labels: dict[str, str]
) -> str:
    """The one-way, one-rail ib_write_bw whose links split the suspects most evenly."""
    target = frozenset(suspects)
    nodes = [n.id for n in design.nodes if n.id not in fault_nodes]
    by_leaves: dict[frozenset[str], list[str]] = defaultdict(list)
    for n in nodes:
        by_leaves[_leaves_of(design, n)].append(n)
    rails = max(1, len(_port_pairs(design, nodes[0], nodes[-1]))) if len(nodes) > 1 else 1
    per_group = max(len(g) for g in by_leaves.values()) if by_leaves else 0
    while per_group > 2 and (len(by_leaves) * per_group) ** 2 * rails > SUGGEST_BUDGET:
        per_group -= 1  # static routes depend on the destination: sample several per leaf
    sample = [n for group in by_leaves.values() for n in group[:per_group]]
    best: tuple[int, int, str, str, int, int] | None = None
    budget = SUGGEST_BUDGET
    for u in sample:
        for v in sample:
            if u == v or budget < 0:
                continue
            for up, vp in _port_pairs(design, u, v):
                budget -= 1
                must, may = _flow_sets(design, u, up, v, vp)
                hit = target & (must if must & target else may)
                split = min(len(hit), len(target) - len(hit))
                key = (split, -len(may))
                if split and (best is None or key > best[:2]):
                    best = (split, -len(may), u, v, up, vp)
    if best is None:
        names = ", ".join(labels.get(k, k) for k in suspects[:8])
        more = f" and {len(suspects) - 8} more" if len(suspects) > 8 else ""
        return (
            "no test separates the suspects (every path that crosses one crosses all): read "
            f"the port error counters on {names}{more} (ibqueryerrors, or `show interfaces "
            "counters errors`), then reseat or swap those cables one at a time"
        )
    _s, _m, u, v, up, vp = best
    must, may = _flow_sets(design, u, up, v, vp)
    crossed = sorted(target & (must if must & target else may))
    shown = ", ".join(labels.get(k, k) for k in crossed[:6]) + (" ..." if len(crossed) > 6 else "")
    return (
        f"ib_write_bw from {u} {design.shape.port_name(up)} (client) to {v} "
        f"{design.shape.port_name(vp)} (server), one way: it crosses {len(crossed)} of the "
        f"{len(target)} suspects ({shown}); slow means the fault is among them, fast clears them"
    )


__all__ = ["Diagnosis", "LinkSuspect", "NodeFault", "PairResult", "diagnose", "link_sets"]
