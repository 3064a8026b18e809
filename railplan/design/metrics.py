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


def _endpoints(design: Design) -> list[tuple[set[str], set[str]]]:
    """(entry leaves, exit leaves) of the flows between NIC ports.

    A Matrix delivers a flow entering on an A leaf from a B leaf and the other way round
    (``railplan.design.endpoints``: X.A -> A_i -> B_j -> Y.B, X.B -> B_j -> A_i -> Y.A); elsewhere any
    leaf that hosts NIC ports talks to any other.
    """
    hosts: Counter[str] = Counter(lk.b_device for lk in design.links if lk.kind == "node-leaf")
    roles = {s.id: s.role for s in design.switches}
    if any(r == "leaf-a" for r in roles.values()):
        a = {s for s in hosts if roles.get(s) == "leaf-a"}
        b = {s for s in hosts if roles.get(s) == "leaf-b"}
        return [(a, b), (b, a)]
    return [(set(hosts), set(hosts))]


def max_hops(design: Design) -> int:
    """Most switches a packet crosses between two NIC ports, on the paths the routing uses.

    Path lengths come from the wiring (shortest paths in the switch graph, computed on its
    quotient by structural equivalence so 32k-GPU designs stay fast). Matrix flows run from an
    A leaf to a B leaf or from a B leaf to an A leaf, so both directions are counted. Pairs
    that cannot reach each other (different rails of rail-only) do not count.
    """
    adj = switch_adjacency(design)
    roles = {s.id: s.role for s in design.switches}
    cls = quotient(adj, roles)
    edges: dict[int, set[int]] = defaultdict(set)
    size: Counter[int] = Counter(cls.values())
    for sw, nbrs in adj.items():
        edges[cls[sw]].update(cls[n] for n in nbrs)
    best = 0
    for sources, targets in _endpoints(design):
        if sources and targets:
            best = max(best, 1)
        dst_classes = {cls[t] for t in targets}
        for c in {cls[s] for s in sources}:
            dist = _bfs(c, edges)
            for t in dst_classes:
                if t != c and t in dist:
                    best = max(best, dist[t] + 1)
                elif t == c and size[c] > 1 and edges[c]:
                    best = max(best, 3)  # two members of a class meet through a shared neighbour
    return best
