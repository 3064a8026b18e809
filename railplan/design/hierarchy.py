"""The fabric as a scheduler sees it: nested groups of nodes read off the wiring, leaf group first.

A scheduler (Slurm topology/tree and topology/block, Kueue, KAI) wants a tree of node groups:
nodes under one group talk through fewer switches than nodes that only share a higher group.
The tree is read from the wiring (pairs of connected devices), never from the ids or the
``su``/``pod`` fields, so the same function reads the plan and an as-built capture:

- **level 1, the leaf group**: nodes attached to exactly the same set of tier-1 switches. In a
  rail-optimized fat-tree that is an SU: its nodes share all their rail leaves, so a job that
  stays in it never crosses a spine on its rail-aligned traffic. The rail leaves of one SU
  are one group (a scheduler has no notion of rails; splitting them would put every node under
  eight leaves, which a tree cannot say). Per-rack ToRs give one group per rack (its ToRs).
- **higher levels** (spine, pod, core): leaf groups whose switches reach exactly the same set
  of switches of the next tier. A 2-tier fabric has one spine group; a 3-tier one a group per
  pod, then the cores. Multi-plane fabrics are read across their planes: an SU's group holds
  its leaves in every plane, the spine group every plane's spines.
- **Matrix** (leaf-a / leaf-b, no spine): locality buys nothing there, spreading does. A
  flow leaves on one port and arrives on the peer's port in the other leaf group, crossing the
  bundle of m links between the two leaves ("constant two-hop forwarding", as railplan's
  traffic model routes it), so nodes packed on one B leaf pile their flows onto few bundles
  (railplan's analyzer: a ring or all-to-all of 16 to 256 nodes packed on B leaves of
  matrix-4k gets 0.25 to 0.5 of NIC rate). Level 1 is therefore the *stripe set*: the nodes in
  places [q*m, (q+1)*m) of every B leaf; any job inside one has at most m nodes on a B leaf and
  gets full rate (1.0 for ring and all-to-all at every size up to the set's 128 nodes). The
  top level is the whole Matrix.
- **the top**: when the groups of the highest level still share switches (or links join
  them), one more level joins them, so a job may span the whole connected fabric.

Exact sets rather than "shares any switch" keep a miswired cable from merging two SUs: a node
whose cables reach leaves of two SUs becomes a group of its own, which is what a scheduler
must be told (see ``field.asbuilt_topology``). A level that groups the nodes exactly as the one
below it is left out.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from railplan.design.types import Design, Switch


@dataclass(frozen=True, slots=True)
class Group:
    """One group of a level: its name, its nodes (design order) and its groups one level down."""

    name: str
    nodes: tuple[str, ...]
    children: tuple[str, ...]
    switches: frozenset[str]


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the tree, lowest (the leaf group) first: its name and its groups."""

    name: str
    what: str
    groups: tuple[Group, ...]

    def group_of(self) -> dict[str, str]:
        """Node id -> the name of its group at this level."""
        return {node: g.name for g in self.groups for node in g.nodes}


@dataclass(frozen=True, slots=True)
class Hierarchy:
    """A design's node groups level by level, lowest first, and the nodes on no switch."""

    design: str
    topology: str
    levels: tuple[Level, ...]
    nodes: tuple[str, ...]
    unattached: tuple[str, ...] = ()

    def level(self, name: str) -> Level:
        return next(lv for lv in self.levels if lv.name == name)

    def path_of(self) -> dict[str, tuple[str, ...]]:
        """Node id -> its group names from the leaf group up."""
        out: dict[str, list[str]] = {n: [] for n in self.nodes if n not in self.unattached}
        for lv in self.levels:
            for g in lv.groups:
                for node in g.nodes:
                    out[node].append(g.name)
        return {n: tuple(p) for n, p in out.items()}

    def partitions(self) -> list[set[frozenset[str]]]:
        """Per level, the node sets of its groups (what a comparison looks at, names aside)."""
        return [{frozenset(g.nodes) for g in lv.groups} for lv in self.levels]


#: level names (and what they are) per family, lowest first; "spine" becomes "pod" under cores
_LEAF_NAME = {"roft": "su", "rail-only": "rails", "fat-tree": "tor", "matrix": "stripes"}
_WHAT = {
    "su": "nodes sharing all their rail leaves (one scalable unit)",
    "rails": "nodes sharing all their rail switches",
    "tor": "nodes sharing their top-of-rack switches",
    "stripes": "nodes holding at most m places (m = links per A-B pair) on every B leaf",
    "matrix": "the whole Matrix (two hops through an A-B bundle)",
    "spine": "leaf groups under the same spines",
    "pod": "leaf groups under the same pod spines",
    "core": "pods under the same core switches",
    "fabric": "every group the fabric's links join",
}


def planned_pairs(design: Design) -> list[tuple[str, str]]:
    """The device pairs the design's links connect (attached devices left out)."""
    return [(lk.a_device, lk.b_device) for lk in design.links if lk.kind != "device-leaf"]


def hierarchy(design: Design, pairs: Iterable[tuple[str, str]] | None = None) -> Hierarchy:
    """The scheduler's tree of ``design``, from its links or from ``pairs`` seen as built."""
    switches = design.switch_by_id()
    nodes = [n.id for n in design.nodes]
    node_set = set(nodes)
    leaves: dict[str, set[str]] = defaultdict(set)
    adjacent: dict[str, set[str]] = defaultdict(set)
    bundles: Counter[frozenset[str]] = Counter()
    for a, b in planned_pairs(design) if pairs is None else pairs:
        if a in node_set and b in switches:
            leaves[a].add(b)
        elif b in node_set and a in switches:
            leaves[b].add(a)
        elif a in switches and b in switches and a != b:
            adjacent[a].add(b)
            adjacent[b].add(a)
            bundles[frozenset((a, b))] += 1
    attached = [n for n in nodes if leaves[n]]
    family = design.topology
    first = _LEAF_NAME.get(family, "leaf")
    if family == "matrix":
        groups = _stripe_sets(attached, leaves, switches, bundles)
        levels = [Level(first, _WHAT[first], groups)]
        reach = {g.name: _reach(_real(g.switches, switches), adjacent) for g in groups}
        levels.append(_joined(levels[-1], reach, "matrix"))
    else:
        groups = _split([(n, frozenset(leaves[n])) for n in attached], first)
        levels = [Level(first, _WHAT.get(first, "nodes sharing their leaves"), groups)]
        tiers = sorted({s.tier for s in switches.values() if s.tier > 1})
        for tier in tiers:
            up = {g.name: _up(g.switches, adjacent, switches, tier) for g in levels[-1].groups}
            name = "core" if tier >= 3 else ("pod" if 3 in tiers else "spine")
            if any(up.values()):
                levels.append(_parent(levels[-1], up, name))
        reach = {g.name: _reach(g.switches, adjacent) for g in levels[-1].groups}
        levels.append(_joined(levels[-1], reach, "fabric"))
    kept = [levels[0]] + [lv for below, lv in itertools.pairwise(levels) if _differs(below, lv)]
    return Hierarchy(
        design.name,
        family,
        tuple(_relinked(kept)),
        tuple(nodes),
        tuple(n for n in nodes if not leaves[n]),
    )


def _stripe_sets(
    attached: Sequence[str],
    leaves: Mapping[str, set[str]],
    switches: Mapping[str, Switch],
    bundles: Counter[frozenset[str]],
) -> tuple[Group, ...]:
    """Matrix groups: the nodes in places [q*m, (q+1)*m) of every B leaf, one group per q.

    A flow from X to Y leaves on X's A port and arrives on Y's B port (or the other way), so
    it crosses the bundle between X's A leaf and Y's B leaf; a job with at most m nodes on any
    B leaf puts at most m of its flows on a bundle of m links. A place is a node's rank among
    its B leaf's nodes (node order); m is the commonest number of links between an A and a B
    leaf. A node on no B leaf stands alone, keyed by its leaves.
    """
    on_b: dict[str, list[str]] = defaultdict(list)
    for n in attached:
        for sw in sorted(leaves[n]):
            if switches[sw].role == "leaf-b":
                on_b[sw].append(n)
    place = {(n, b): i for b, members in on_b.items() for i, n in enumerate(members)}
    counts = Counter(bundles.values())
    m = (
        max(counts, key=lambda c: (counts[c], c))
        if counts
        else max(map(len, on_b.values()), default=1)
    )
    rows: dict[tuple[object, ...], tuple[list[str], set[str]]] = {}
    for n in attached:
        mine = sorted((b for b in leaves[n] if switches[b].role == "leaf-b"),
                      key=lambda b: (switches[b].plane, b))  # fmt: skip
        key: tuple[object, ...] = (
            tuple(place[(n, b)] // m for b in mine) if mine else tuple(sorted(leaves[n]))
        )
        members, slots = rows.setdefault(key, ([], set()))
        members.append(n)
        slots.update(f"{b}#{place[(n, b)] // m}" for b in mine)
        if not mine:
            slots.update(leaves[n])
    return _named([(frozenset(sl), mem, ()) for mem, sl in rows.values()], "stripes")


def _real(keys: frozenset[str], switches: Mapping[str, Switch]) -> frozenset[str]:
    """The switches behind a group's keys (a Matrix stripe key is ``<B leaf>#<q>``)."""
    return frozenset(k.split("#", 1)[0] for k in keys if k.split("#", 1)[0] in switches)


def _split(items: Sequence[tuple[str, frozenset[str]]], prefix: str) -> tuple[Group, ...]:
    """Nodes grouped by their exact switch set, groups named in order of their first node."""
    by_key: dict[frozenset[str], list[str]] = {}
    for node, key in items:
        by_key.setdefault(key, []).append(node)
    return _named([(key, members, ()) for key, members in by_key.items()], prefix)


def _named(
    rows: Sequence[tuple[frozenset[str], list[str], tuple[str, ...]]], prefix: str
) -> tuple[Group, ...]:
    width = max(2, len(str(len(rows))))
    return tuple(
        Group(f"{prefix}{i:0{width}d}", tuple(members), children, key)
        for i, (key, members, children) in enumerate(rows, start=1)
    )


def _parent(below: Level, key_of: Mapping[str, frozenset[str]], name: str) -> Level:
    """Groups of ``below`` with the same exact key, as one group each."""
    by_key: dict[frozenset[str], tuple[list[str], list[str]]] = {}
    for g in below.groups:
        members, children = by_key.setdefault(key_of[g.name] or frozenset({g.name}), ([], []))
        members.extend(g.nodes)
        children.append(g.name)
    rows = [(key, m, tuple(c)) for key, (m, c) in by_key.items()]
    return Level(name, _WHAT[name], _named(rows, name))


def _joined(below: Level, reach: Mapping[str, frozenset[str]], name: str) -> Level:
    """Groups of ``below`` whose reachable switches overlap, joined transitively."""
    parent = {g.name: g.name for g in below.groups}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    owner: dict[str, str] = {}
    for g in below.groups:
        for s in sorted(reach[g.name] | g.switches):
            if s in owner:
                parent[find(g.name)] = find(owner[s])
            else:
                owner[s] = g.name
    by_root: dict[str, tuple[list[str], list[str], set[str]]] = {}
    for g in below.groups:
        members, children, sws = by_root.setdefault(find(g.name), ([], [], set()))
        members.extend(g.nodes)
        children.append(g.name)
        sws.update(reach[g.name] | g.switches)
    rows = [(frozenset(s), m, tuple(c)) for m, c, s in by_root.values()]
    return Level(name, _WHAT[name], _named(rows, name))


def _up(
    own: frozenset[str], adjacent: Mapping[str, set[str]], switches: Mapping[str, Switch], tier: int
) -> frozenset[str]:
    """The switches of ``tier`` reached from ``own`` through switches of lower tiers."""
    seen, frontier = set(own), set(own)
    found: set[str] = set()
    while frontier:
        nxt: set[str] = set()
        for s in frontier:
            for t in adjacent.get(s, ()):
                tt = switches[t].tier
                if tt == tier:
                    found.add(t)
                elif tt < tier and t not in seen and tt > switches[s].tier:
                    seen.add(t)
                    nxt.add(t)
        frontier = nxt
    return frozenset(found)


def _reach(own: frozenset[str], adjacent: Mapping[str, set[str]]) -> frozenset[str]:
    """Switches one link away from ``own``."""
    return frozenset(t for s in own for t in adjacent.get(s, ()))


def _differs(below: Level, level: Level) -> bool:
    return len(level.groups) != len(below.groups)


def _relinked(levels: Sequence[Level]) -> list[Level]:
    """Children re-pointed at the level kept below once a level that changed nothing is dropped."""
    out = [levels[0]]
    for lv in levels[1:]:
        owner = {node: g.name for g in out[-1].groups for node in g.nodes}
        groups = tuple(
            Group(g.name, g.nodes, tuple(dict.fromkeys(owner[n] for n in g.nodes)), g.switches)
            for g in lv.groups
        )
        out.append(Level(lv.name, lv.what, groups))
    return out


def named_like(h: Hierarchy, reference: Hierarchy) -> Hierarchy:
    """``h`` with each group named as the group of ``reference`` on exactly the same switches.

    An as-built tree keeps the plan's names for every group the cabling left as planned; a
    group the plan does not have is named ``<level>-asbuilt<k>``, numbered in node order.
    """
    levels: list[Level] = []
    renamed: dict[str, str] = {}
    for lv in h.levels:
        ref = next((r for r in reference.levels if r.name == lv.name), None)
        known = {g.switches: g.name for g in ref.groups} if ref is not None else {}
        count = 0
        groups = []
        here: dict[str, str] = {}
        for g in lv.groups:
            name = known.get(g.switches)
            if name is None or name in here.values():
                count += 1
                name = f"{lv.name}-asbuilt{count:02d}"
            here[g.name] = name
            children = tuple(renamed[c] for c in g.children)
            groups.append(Group(name, g.nodes, children, g.switches))
        renamed = here
        levels.append(Level(lv.name, lv.what, tuple(groups)))
    return Hierarchy(h.design, h.topology, tuple(levels), h.nodes, h.unattached)
