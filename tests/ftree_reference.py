"""OpenSM's fat-tree routing engine re-stated in Python, to check the analyzer's D-mod-k.

A line-by-line port of the parts of opensm/osm_ucast_ftree.c (github.com/linux-rdma/opensm,
commit fa74b98c) that compute the forwarding tables toward compute nodes on a fat tree
without sibling links or reverse hops: the indexing walk (``bfs_fabric_indexing``,
``fabric_get_new_tuple``), the leaf array (``fabric_create_leaf_switch_array``), the padding
to ``max_cn_per_leaf`` with dummy destinations, and ``fabric_route_to_cns`` with
``fabric_route_downgoing_by_going_up`` / ``fabric_route_upgoing_by_going_down`` and their
load counters, port groups and comparators (``port_group_compare_load_down``/``_up``, sorted
by the same bubble sorts). Switch GUIDs are taken to ascend in the design's switch order and
IB port numbers to follow the design's port numbers. Slow (pure Python); small designs only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from railplan.design import Design

NO_PATH = 0xFF
TUPLE_LEN = 8


@dataclass(eq=False)
class _Port:
    port: int  # local port number
    remote_port: int
    link: int  # design link index
    counter_up: int = 0
    counter_down: int = 0


@dataclass(eq=False)
class _Group:
    owner: _Switch
    remote: _Switch | None  # None: an HCA port
    lid: int  # the remote HCA port's LID (0 for a switch group)
    ports: list[_Port] = field(default_factory=list)
    counter_up: int = 0
    counter_down: int = 0


@dataclass(eq=False)
class _Switch:
    index: int
    rank: int
    tuple: list[int] = field(default_factory=lambda: [NO_PATH] * TUPLE_LEN)
    up: list[_Group] = field(default_factory=list)
    down: list[_Group] = field(default_factory=list)
    lft: dict[int, int] = field(default_factory=dict)
    hops: dict[int, int] = field(default_factory=dict)
    min_counter_down: int = 0
    counter_up_changed: bool = False

    @property
    def is_leaf(self) -> bool:
        return any(g.remote is None for g in self.down)


def _key(sw: _Switch) -> tuple[int, ...]:
    return tuple(sw.tuple)


def _by_index(g1: _Group, g2: _Group) -> int:
    a, b = _key(g1.remote), _key(g2.remote)  # type: ignore[arg-type]
    return (a > b) - (a < b)


def _load_down(p1: _Group, p2: _Group) -> int:
    t = p1.counter_down - p2.counter_down
    if t > 0:
        return 1
    if t < 0:
        return -1
    if p1.remote.min_counter_down - p2.remote.min_counter_down > 0:  # type: ignore[union-attr]
        return 1
    return _by_index(p1, p2)


def _load_up(p1: _Group, p2: _Group) -> int:
    t = p1.counter_up - p2.counter_up
    if t > 0:
        return 1
    if t < 0:
        return -1
    return _by_index(p1, p2)


def _bubble(groups: list[_Group], cmp: object) -> None:
    n = len(groups)
    i, swapped = 0, True
    while swapped:
        swapped = False
        for j in range(1, n - i):
            if cmp(groups[j], groups[j - 1]) < 0:  # type: ignore[operator]
                groups[j - 1], groups[j] = groups[j], groups[j - 1]
                swapped = True
        i += 1


class FtreeReference:
    """The forwarding tables OpenSM's ftree engine computes for ``design``'s compute nodes."""

    def __init__(self, design: Design) -> None:
        self.design = design
        top = max(s.tier for s in design.switches)
        self.leaf_rank = top - 1
        self.sw = [_Switch(i, top - s.tier) for i, s in enumerate(design.switches)]
        pos = {s.id: i for i, s in enumerate(design.switches)}
        #: LID of every cabled NIC port, and the node-leaf link of each LID
        self.lid_of: dict[tuple[str, int], int] = {}
        self.lid_link: dict[int, int] = {}
        link_lid: dict[int, int] = {}
        ends: list[tuple[int, int, int, _Switch | None, int]] = []  # sw, port, rport, remote, link
        for i, lk in enumerate(design.links):
            if lk.kind == "node-leaf":
                lid = self.lid_of.setdefault((lk.a_device, lk.a_port), len(self.lid_of) + 1)
                self.lid_link[lid] = i
                link_lid[i] = lid
                ends.append((pos[lk.b_device], lk.b_port, lk.a_port, None, i))
            elif lk.kind in ("leaf-spine", "spine-core"):
                a, b = self.sw[pos[lk.a_device]], self.sw[pos[lk.b_device]]
                ends.append((a.index, lk.a_port, lk.b_port, b, i))
                ends.append((b.index, lk.b_port, lk.a_port, a, i))
        # fabric_construct_sw_ports: every switch's ports in port order, grouped by remote
        for s_index, port, rport, remote, link in sorted(ends, key=lambda e: (e[0], e[1])):
            sw = self.sw[s_index]
            if remote is None:
                g = _Group(sw, None, link_lid[link])
                sw.down.append(g)
            else:
                side = sw.up if remote.rank < sw.rank else sw.down
                g = next((x for x in side if x.remote is remote), None)
                if g is None:
                    g = _Group(sw, remote, 0)
                    side.append(g)
            g.ports.append(_Port(port, rport, link))
        self._index()
        leaves = sorted((s for s in self.sw if s.rank == self.leaf_rank), key=_key)
        real = [i for i, s in enumerate(leaves) if s.is_leaf]
        self.leaves = leaves[real[0] : real[-1] + 1]
        self.max_cn = max(sum(g.remote is None for g in s.down) for s in self.leaves)
        self._route_to_cns()

    # -- indexing (bfs_fabric_indexing) ---------------------------------------------------------
    def _taken(self, t: list[int]) -> bool:
        return tuple(t) in self._tuples

    def _assign(self, sw: _Switch, t: list[int]) -> None:
        sw.tuple = list(t)
        self._tuples.add(tuple(t))

    def _new_tuple(self, frm: list[int], down: bool) -> list[int]:
        temp = list(frm)
        if down:
            temp[0] += 1
            var = frm[0] + 1
        else:
            temp[0] -= 1
            var = frm[0]
        for i in range(NO_PATH):
            temp[var] = i
            if not self._taken(temp):
                return temp
        raise AssertionError("more than 255 ports in one direction")

    def _index(self) -> None:
        self._tuples: set[tuple[int, ...]] = set()
        first = next(s for s in self.sw if s.is_leaf)  # lowest GUID: the design's first leaf
        t = [NO_PATH] * TUPLE_LEN
        t[0] = first.rank
        for i in range(1, self.leaf_rank + 1):
            t[i] = 0
        self._assign(first, t)
        queue = [first]
        while queue:
            sw = queue.pop(0)
            if sw.rank < self.leaf_rank:
                for g in sw.down:
                    if g.remote is None or g.remote.tuple[0] != NO_PATH:
                        continue
                    self._assign(g.remote, self._new_tuple(sw.tuple, True))
                    queue.append(g.remote)
                sw.down.sort(key=lambda g: _key(g.remote))  # type: ignore[arg-type]
            if sw.rank != 0:
                for g in sw.up:
                    if g.remote.tuple[0] != NO_PATH:  # type: ignore[union-attr]
                        continue
                    self._assign(g.remote, self._new_tuple(sw.tuple, False))  # type: ignore[arg-type]
                    queue.append(g.remote)  # type: ignore[arg-type]
                sw.up.sort(key=lambda g: _key(g.remote))  # type: ignore[arg-type]

    # -- routing (fabric_route_to_cns) ----------------------------------------------------------
    def _route_to_cns(self) -> None:
        for leaf in self.leaves:
            routed = 0
            for g in leaf.down:
                if g.remote is not None:
                    continue
                leaf.lft[g.lid] = g.ports[0].port
                leaf.hops[g.lid] = 1
                self._down_by_up(leaf, None, g.lid, True, 1)
                routed += 1
            for _ in range(self.max_cn - routed):  # dummy destinations, LID 0
                leaf.hops[0] = 1
                self._down_by_up(leaf, None, 0, True, 1)
                for sw in self.sw:
                    sw.hops.pop(0, None)
                    sw.lft.pop(0, None)

    def _least_hops(self, sw: _Switch, lid: int) -> int:
        return sw.hops.get(lid, NO_PATH)

    def _up_by_down(
        self, sw: _Switch, prev: _Switch | None, lid: int, main: bool, hops: int
    ) -> bool:
        if not sw.down:
            return False
        if sw.counter_up_changed:
            _bubble(sw.down, _load_up)
            sw.counter_up_changed = False
        created = False
        for g in list(sw.down):
            if g.remote is None:
                created = True
                continue
            if prev is not None and g.remote is prev:
                continue
            p_min = None
            for p in g.ports:
                if p_min is None or p.counter_up < p_min.counter_up:
                    p_min = p
            assert p_min is not None
            remote = g.remote
            least = self._least_hops(remote, lid)
            if least != NO_PATH and hops + 1 >= least:
                continue
            remote.lft[lid] = p_min.remote_port
            remote.hops[lid] = hops + 1
            routed = self._up_by_down(remote, None, lid, main, hops + 1)
            created |= routed
            if routed:
                p_min.counter_up += 1
                g.counter_up += 1
                g.owner.counter_up_changed = True
        return created

    def _down_by_up(
        self, sw: _Switch, prev: _Switch | None, lid: int, main: bool, hops: int
    ) -> bool:
        created = self._up_by_down(sw, prev, lid, main, hops)
        if sw.rank == 0:
            return created
        _bubble(sw.up, _load_down)
        g_min = sw.up[0]
        p_min = None
        for p in g_min.ports:
            if p_min is None or p.counter_down < p_min.counter_down:
                p_min = p
        assert p_min is not None
        remote = g_min.remote
        assert remote is not None
        if main:
            g_min.counter_down += 1
            p_min.counter_down += 1
            if g_min.counter_down == remote.min_counter_down + 1:
                remote.min_counter_down = min(
                    (x.counter_down for x in remote.down), default=1 << 30
                )
            if lid not in remote.lft or hops + 1 < self._least_hops(remote, lid):
                remote.lft[lid] = p_min.remote_port
                remote.hops[lid] = hops + 1
            created |= self._down_by_up(remote, sw, lid, main, hops + 1)
        for g in sw.up[1 if main else 0 :]:
            remote = g.remote
            assert remote is not None
            if lid in remote.lft and hops + 1 >= self._least_hops(remote, lid):
                continue
            p = None
            for q in g.ports:
                if p is None or q.counter_down < p.counter_down:
                    p = q
            assert p is not None
            remote.lft[lid] = p.remote_port
            remote.hops[lid] = hops + 1
            created |= self._down_by_up(remote, sw, lid, False, hops + 1)
        return created

    # -- following the tables -------------------------------------------------------------------
    def path(self, src: tuple[str, int], dst: tuple[str, int]) -> list[int]:
        """Design link indices a packet from NIC port ``src`` to ``dst`` crosses (switch links)."""
        pos = {s.id: i for i, s in enumerate(self.design.switches)}
        links = self.design.links
        lid = self.lid_of[dst]
        first = links[self.lid_link[self.lid_of[src]]]
        sw = self.sw[pos[first.b_device]]
        out: list[int] = []
        for _ in range(16):
            port = sw.lft[lid]
            lk_i = next(p.link for g in sw.up + sw.down for p in g.ports if p.port == port)
            lk = links[lk_i]
            if lk.kind == "node-leaf":
                assert (lk.a_device, lk.a_port) == dst
                return out
            out.append(lk_i)
            nxt = lk.b_device if lk.a_device == self.design.switches[sw.index].id else lk.a_device
            sw = self.sw[pos[nxt]]
        raise AssertionError("no route within 16 hops")
