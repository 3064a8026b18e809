"""Figures derived from a design's wiring alone: switch hops between NICs, inter-switch links."""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass

from railplan.design import Design


def inter_switch_links(design: Design) -> int:
    """Links whose both ends are switches (leaf-spine, spine-core, A-B leaf links)."""
    ids = {s.id for s in design.switches}
    return sum(1 for lk in design.links if lk.a_device in ids and lk.b_device in ids)


def switch_adjacency(design: Design) -> dict[str, set[str]]:
    """Each switch's neighbouring switches (parallel links collapse into one edge)."""
    adj: dict[str, set[str]] = {s.id: set() for s in design.switches}
    for lk in design.links:
        if lk.a_device in adj and lk.b_device in adj:
            adj[lk.a_device].add(lk.b_device)
            adj[lk.b_device].add(lk.a_device)
    return adj


@dataclass(frozen=True)
class SwitchClass:
    """Switches with the same neighbours and role: interchangeable for path lengths."""

    members: int
    neighbours: frozenset[str]
    role: str


def quotient(adj: dict[str, set[str]], roles: dict[str, str]) -> dict[str, int]:
    """Class index of each switch: structurally equivalent switches (same neighbours) share one.

    Two distinct switches of a class are never adjacent and are two hops apart when they have
    a neighbour; between classes, distances are those of the (tiny) quotient graph.
    """
    keys: dict[tuple[frozenset[str], str], int] = {}
    return {
        sw: keys.setdefault((frozenset(nbrs), roles[sw]), len(keys))
        for sw, nbrs in sorted(adj.items())
    }


def _bfs(start: int, edges: dict[int, set[int]]) -> dict[int, int]:
    dist = {start: 0}
    todo = deque([start])
    while todo:
        c = todo.popleft()
        for nxt in edges[c]:
            if nxt not in dist:
                dist[nxt] = dist[c] + 1
                todo.append(nxt)
    return dist


def _endpoints(design: Design) -> tuple[set[str], set[str]]:
    """Switches a flow can enter and leave by: Matrix flows go A port -> B port, others any."""
    hosts: Counter[str] = Counter(lk.b_device for lk in design.links if lk.kind == "node-leaf")
    roles = {s.id: s.role for s in design.switches}
    if any(r == "leaf-a" for r in roles.values()):
        return (
            {s for s in hosts if roles.get(s) == "leaf-a"},
            {s for s in hosts if roles.get(s) == "leaf-b"},
        )
    return set(hosts), set(hosts)


def max_hops(design: Design) -> int:
    """Most switches a packet crosses between two NIC ports, on the paths the routing uses.

    Path lengths come from the wiring (shortest paths in the switch graph, computed on its
    quotient by structural equivalence so 32k-GPU designs stay fast). Matrix flows leave on
    the source's A port and arrive on the destination's B port, so they are counted A -> B.
    Pairs that cannot reach each other (different rails of rail-only) do not count.
    """
    adj = switch_adjacency(design)
    roles = {s.id: s.role for s in design.switches}
    cls = quotient(adj, roles)
    edges: dict[int, set[int]] = defaultdict(set)
    size: Counter[int] = Counter(cls.values())
    for sw, nbrs in adj.items():
        edges[cls[sw]].update(cls[n] for n in nbrs)
    sources, targets = _endpoints(design)
    src_classes = {cls[s] for s in sources}
    dst_classes = {cls[t] for t in targets}
    best = 1 if sources and targets else 0
    for c in src_classes:
        dist = _bfs(c, edges)
        for t in dst_classes:
            if t != c and t in dist:
                best = max(best, dist[t] + 1)
            elif t == c and size[c] > 1 and edges[c]:
                best = max(best, 3)  # two members of a class meet through a shared neighbour
    return best
