"""Pair choice (CP-SAT pair cover), probes for what no pair reaches, rounds, re-derived coverage."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.solve import pair_cover
from railplan.testplan.context import PlanContext
from railplan.testplan.fabric import Flow
from railplan.testplan.model import Coverage, Progress


def _pair_problem(ctx: PlanContext) -> tuple[pair_cover.CoverProblem, list[list[str]], list[str]]:
    fab = ctx.fabric
    by_sig: dict[tuple[str, ...], list[str]] = {}
    for node in ctx.design.nodes:
        by_sig.setdefault(fab.signature(node.id), []).append(node.id)
    classes = list(by_sig.values())
    universe = sorted(fab.groups)
    index = {g: i for i, g in enumerate(universe)}
    k = len(classes)
    if k <= 96:
        cands = [(c, d) for c in range(k) for d in range(c, k)]
    else:  # many small classes (per-rack designs): each class with a few strided partners
        strides = sorted({1, 2, 3, k // 4, k // 3, k // 2} - {0})
        both = {(c, c) for c in range(k)}
        both |= {(min(c, (c + s) % k), max(c, (c + s) % k)) for c in range(k) for s in strides}
        cands = sorted(both)
    cands = [(c, d) for c, d in cands if c != d or len(classes[c]) > 1]
    covers = []
    for c, d in cands:
        u, v = classes[c][0], classes[d][-1 if c == d else 0]
        covers.append(frozenset(index[g] for g in fab.pair_groups(u, v)))
    problem = pair_cover.CoverProblem(
        class_sizes=tuple(len(c) for c in classes),
        candidates=tuple(cands),
        covers=tuple(covers),
        elements=len(universe),
        partners=max(0, min(ctx.options.partners, len(ctx.design.nodes) - 1)),
    )
    return problem, classes, universe


def _probes(ctx: PlanContext, missing: set[str]) -> list[Flow]:
    """Extra RDMA flows (NIC k to NIC j of another node) for what no pair test crosses."""
    fab = ctx.fabric
    by_leaf: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for (node, port), link in sorted(fab.port_link.items(), key=lambda kv: kv[1].id):
        by_leaf[link.b_device].append((node, port))
    if len(ctx.design.nodes) < 2:
        return []
    out: list[Flow] = []
    if fab.exact:
        return _probes_exact(ctx, missing, by_leaf)
    leaves = sorted(by_leaf)
    while missing:
        best, gain = None, frozenset[str]()
        for i, x in enumerate(leaves):
            for y in leaves[i + 1 :]:
                got = fab.path(x, y)[1] & missing
                if len(got) > len(gain):
                    best, gain = (x, y), got
        if best is None:
            break
        u, pu = by_leaf[best[0]][0]
        v, pv = next((n, p) for n, p in by_leaf[best[1]] if n != u)
        out.append((u, pu, v, pv))
        missing -= gain
    return out


#: routing.paths calls one probe search may spend per uncovered link
PROBE_BUDGET = 2000


def _probes_exact(
    ctx: PlanContext, missing: set[str], by_leaf: dict[str, list[tuple[str, int]]]
) -> list[Flow]:
    """Static routing: for each uncovered link, a flow whose route takes it (bounded search)."""
    fab = ctx.fabric
    below: dict[str, set[str]] = defaultdict(set)
    for lower, uppers in fab.up.items():
        for upper in uppers:
            below[upper].add(lower)

    def leaves_under(sw: str) -> list[str]:
        if sw in by_leaf:
            return [sw]
        return sorted({leaf for lower in below[sw] for leaf in leaves_under(lower)})

    ends = [e for leaf in sorted(by_leaf) for e in by_leaf[leaf]]
    out: list[Flow] = []
    for link_id in sorted(missing):
        if link_id not in missing:
            continue
        link = fab.link_by_id[link_id]
        dests = by_leaf.get(link.b_device) or ends
        under = leaves_under(link.a_device)
        # first endpoint of each leaf below, then (parallel links picked per flow, e.g. an
        # ISL bundle) the other endpoints; one budget for both
        sources = [e for x in under for e in by_leaf[x][:1]]
        sources += [e for x in under for e in by_leaf[x][1:]]
        budget, hit = PROBE_BUDGET, None
        for u, pu in sources:
            for v, pv in dests:
                budget -= 1
                flow = (u, pu, v, pv)
                if v != u and link_id in fab.flow_elements(flow):
                    hit = flow
                    break
                if budget <= 0:
                    break
            if hit or budget <= 0:
                break
        if hit:
            out.append(hit)
            missing -= fab.flow_elements(hit)
    return out


def schedule(busy: Sequence[set[str]]) -> list[int]:
    """Greedy colouring: round numbers (from 1) such that no two items of a round share a key.

    >>> schedule([{"a", "b"}, {"b"}, {"c"}])
    [1, 2, 1]
    """
    taken: list[set[str]] = []
    out = [0] * len(busy)
    order = sorted(range(len(busy)), key=lambda i: (-len(busy[i]), i))
    for i in order:
        r = next((k for k, b in enumerate(taken) if not busy[i] & b), len(taken))
        if r == len(taken):
            taken.append(set())
        taken[r] |= busy[i]
        out[i] = r + 1
    return out


def _rounds(pairs: Sequence[tuple[str, str]], groups: Sequence[frozenset[str]]) -> list[int]:
    """Rounds of pairs that share no node and no link group, so each runs as if alone."""
    return schedule([{*p, *g} for p, g in zip(pairs, groups, strict=True)])


@dataclass
class ChosenPairs:
    """The pair tests' pairs, link elements and rounds, the probes, and the coverage."""

    pairs: list[tuple[str, str]]
    groups: list[frozenset[str]]
    rounds: list[int]
    probes: list[Flow]
    coverage: Coverage
    partners: int


def choose_pairs(ctx: PlanContext, progress: Progress | None) -> ChosenPairs:
    """CP-SAT's pair cover, then probes for what it misses; coverage re-derived from both."""
    fab = ctx.fabric
    problem, classes, _ = _pair_problem(ctx)
    if progress:
        progress("pair cover", 0, 1)
    solution = pair_cover.solve(problem, ctx.options.solver_time_s)
    pairs = pair_cover.instantiate(classes, problem.candidates, solution.counts, problem.partners)
    if progress:
        progress("pair cover", 1, 1)
    # never trust the solver: coverage is re-derived from the pairs themselves
    universe = fab.universe()
    groups = [fab.pair_elements(u, v) for u, v in pairs]
    covered: set[str] = set().union(*groups) if groups else set()
    probes = _probes(ctx, set(universe) - covered)
    for flow in probes:
        covered |= fab.flow_elements(flow)
    uncovered = tuple(
        fab.cable(lk) for e in universe if e not in covered for lk in fab.element_links(e)
    )
    exact = fab.exact
    if not universe:
        note = "no switch-to-switch links: the pairs give every node partners"
    elif exact:
        note = f"{fab.policy} routing fixes each flow's path: the counted links are the ones used"
    else:
        note = (
            f"{fab.policy} routing: a test counts every link of the equal-cost paths it may "
            "take; the hash (or adaptive routing) picks among them, so confirm with switch "
            "port counters"
        )
    rounds = _rounds(pairs, groups)
    coverage = Coverage(
        inter_switch_links=len(fab.inter),
        covered_links=len(fab.inter) - len(uncovered),
        uncovered=uncovered,
        nodes=len(ctx.design.nodes),
        nodes_paired=len({n for p in pairs for n in p}),
        pairs=len(pairs),
        rounds=max(rounds, default=0),
        lower_bound=solution.lower_bound,
        solver=f"CP-SAT {solution.status}",
        solver_bound=solution.bound,
        exact=exact,
        note=note,
        probes=len(probes),
        partners=problem.partners,
    )
    return ChosenPairs(pairs, groups, rounds, probes, coverage, problem.partners)
