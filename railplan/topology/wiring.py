"""Accumulates switches and links with stable ids while a generator wires a fabric."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from railplan.catalog import SwitchModel
from railplan.design import ROLE_TIER, Device, Link, Switch
from railplan.topology.tiers import PortLayout, uniform_layout

LINK_PREFIX = {
    "node-leaf": "NL",
    "leaf-spine": "LS",
    "spine-core": "SC",
    "leaf-leaf": "LL",
    "device-leaf": "DL",
}


#: a link class: (kind, Gb/s, (form factor, ports per cage) at the a end or None for a node or
#: device, the same at the b end)
LinkClass = tuple[str, int, tuple[str, int] | None, tuple[str, int]]


@dataclass
class Tally:
    """What a generator run in counting mode built: switches, links by class, and the leaves
    it handed to the upper tiers (which are sized, not wired, in counting mode)."""

    switches: list[Switch] = field(default_factory=list)
    links: Counter[LinkClass] = field(default_factory=Counter)
    #: per plane: (leaves with their uplink needs, tiers asked, leaves per group)
    uppers: list[tuple[Any, int | None, int]] = field(default_factory=list)
    #: each run of node links ``attach`` tallied: (leaf, its (node, port) ends, how many of
    #: them land below the leaf's up section, that section's Gb/s, the up section's Gb/s)
    node_runs: list[tuple[str, list[tuple[str, int]], int, int, int]] = field(default_factory=list)


_TALLY: ContextVar[Tally | None] = ContextVar("railplan_tally", default=None)


@contextmanager
def counting() -> Iterator[Tally]:
    """Run generators in counting mode: they tally link classes instead of making links and
    stop at the leaves (the caller sizes the upper tiers for each spine and core model)."""
    tally = Tally()
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def tally() -> Tally | None:
    """The tally of the enclosing ``counting()`` block, if any."""
    return _TALLY.get()


class FabricBuilder:
    """Collects switches and links; hands out the next free port of each switch.

    Each tier has its own port layout (model, speeds, cages): leaves, spines and cores may be
    different models. A link runs at the speed of its upper end's port.
    """

    def __init__(
        self,
        leaf: PortLayout | SwitchModel,
        speed_gbps: int | None = None,
        radix: int | None = None,
        *,
        spine: PortLayout | None = None,
        core: PortLayout | None = None,
    ) -> None:
        if isinstance(leaf, SwitchModel):
            assert speed_gbps is not None
            leaf = uniform_layout(leaf, speed_gbps)
            assert radix is None or radix == leaf.radix
        self.layouts = {1: leaf, 2: spine or leaf, 3: core or spine or leaf}
        self.model = leaf.model
        self.speed = leaf.down_gbps
        self.radix = leaf.radix
        self.switches: list[Switch] = []
        self.links: list[Link] = []
        self.devices: list[Device] = []
        self._switch: dict[str, Switch] = {}
        self._form: dict[str, str] = {}
        self._next_port: dict[str, int] = {}
        self._counters = dict.fromkeys(LINK_PREFIX, 0)
        self._tally = _TALLY.get()

    @property
    def counting(self) -> bool:
        """True in counting mode (``counting()``): links are tallied, not made."""
        return self._tally is not None

    def layout(self, tier: int) -> PortLayout:
        return self.layouts[tier]

    def set_layout(self, tier: int, layout: PortLayout) -> None:
        self.layouts[tier] = layout

    def add_switch(self, switch_id: str, role: str, plane: int, **attrs: object) -> str:
        lay = self.layouts[ROLE_TIER[role]]
        sw = Switch(
            id=switch_id,
            model=lay.model.id,
            role=role,
            plane=plane,
            radix=lay.radix,
            port_speed_gbps=lay.down_gbps,
            ports_per_cage=lay.down_ppc,
            up_from_port=lay.up_from,
            up_speed_gbps=lay.up_gbps if lay.mixed else 0,
            up_ports_per_cage=lay.up_ppc if lay.mixed else 0,
            **attrs,  # type: ignore[arg-type]
        )
        self.switches.append(sw)
        self._switch[switch_id] = sw
        self._form[switch_id] = lay.model.form_factor
        self._next_port[switch_id] = 0
        if self._tally is not None:
            self._tally.switches.append(sw)
        return switch_id

    def add_device(self, device: Device) -> str:
        self.devices.append(device)
        self._next_port[device.id] = 0
        return device.id

    def take_port(self, switch_id: str) -> int:
        port = self._next_port[switch_id]
        self._next_port[switch_id] = port + 1
        return port

    def skip_to(self, switch_id: str, port: int) -> None:
        """Reserve ports below ``port`` (e.g. keep a leaf's down ports for later nodes)."""
        self._next_port[switch_id] = max(self._next_port[switch_id], port)

    def add_link(
        self,
        kind: str,
        a_device: str,
        a_port: int,
        b_device: str,
        b_port: int,
        plane: int,
        rail: int = -1,
    ) -> None:
        self._counters[kind] += 1
        upper = self._switch.get(b_device)
        rate = upper.speed_of(b_port) if upper is not None else self.speed
        if self._tally is not None:
            self._tally.links[
                (kind, rate, self._cage_class(a_device, a_port), self._cage_class(b_device, b_port))
            ] += 1
            return
        link_id = f"{LINK_PREFIX[kind]}{self._counters[kind]:06d}"
        # positional: the fields in Link's order (id, kind, a end, b end, rate, plane, rail)
        self.links.append(
            Link(link_id, kind, a_device, a_port, b_device, b_port, rate, plane, rail)
        )

    def attach(
        self,
        kind: str,
        ends: list[tuple[str, int]],
        switch_id: str,
        plane: int,
        rail: int = -1,
    ) -> None:
        """One link from each (node or device, port) of ``ends`` to the next free ports of
        ``switch_id``, in order: the links ``add_link`` would make one by one. In counting
        mode the run is tallied in closed form (its ports split at the switch's up section)."""
        if self._tally is None:
            first = self._next_port[switch_id]
            self._next_port[switch_id] = first + len(ends)
            self._make_links(kind, ends, switch_id, first, plane, rail)
            return
        if any(dev in self._switch for dev, _ in ends):
            for dev, port in ends:  # a switch's cage class varies by port: one by one
                self.add_link(kind, dev, port, switch_id, self.take_port(switch_id), plane, rail)
            return
        first = self._next_port[switch_id]
        count = len(ends)
        self._next_port[switch_id] = first + count
        self._counters[kind] += count
        sw = self._switch[switch_id]
        form = self._form[switch_id]
        split = first + count
        if sw.up_from_port:
            split = min(max(sw.up_from_port, first), first + count)
        if split > first:
            cls = (form, sw.ports_per_cage)
            self._tally.links[(kind, sw.port_speed_gbps, None, cls)] += split - first
        if first + count > split:
            cls = (form, sw.up_ports_per_cage)
            self._tally.links[(kind, sw.up_speed_gbps, None, cls)] += first + count - split
        if kind == "node-leaf":
            self._tally.node_runs.append(
                (switch_id, ends, split - first, sw.port_speed_gbps, sw.up_speed_gbps)
            )

    def _cage_class(self, device: str, port: int) -> Any:
        sw = self._switch.get(device)
        if sw is None:
            return None
        return (self._form[device], sw.cage_of(port)[2])

    def _make_links(
        self,
        kind: str,
        ends: list[tuple[str, int]],
        switch_id: str,
        first: int,
        plane: int,
        rail: int,
    ) -> None:
        """The links of ``ends`` to ``switch_id``'s ports from ``first`` on: what ``add_link``
        makes for each, ids numbered on, made column by column."""
        if not ends:
            return
        devs, ports = zip(*ends, strict=True)
        count = len(ends)
        b_ports = range(first, first + count)
        rates = self._run_rates(switch_id, first, count)
        self._extend(kind, count, devs, ports, repeat(switch_id), b_ports, rates, plane, rail)

    def _run_rates(self, switch_id: str, first: int, count: int) -> Iterable[int]:
        """The rates of ``count`` links on ``switch_id``'s ports from ``first`` on (each at
        its port's speed, ``speed_of``): one run, split where it crosses the up section."""
        upper = self._switch.get(switch_id)
        if upper is None:
            return repeat(self.speed)
        up_from = upper.up_from_port
        if not up_from or first + count <= up_from:
            return repeat(upper.port_speed_gbps)
        if first >= up_from:
            return repeat(upper.up_speed_gbps)
        below = up_from - first
        return [upper.port_speed_gbps] * below + [upper.up_speed_gbps] * (count - below)

    def _extend(
        self,
        kind: str,
        count: int,
        a_devs: Iterable[str],
        a_ports: Iterable[int],
        b_devs: Iterable[str],
        b_ports: Iterable[int],
        rates: Iterable[int],
        plane: int,
        rail: int,
    ) -> None:
        """``count`` links from columns (each at least ``count`` long), ids numbered on from
        ``kind``'s counter: one ``map`` instead of a Python loop per link."""
        n = self._counters[kind]
        fmt = LINK_PREFIX[kind] + "%06d"  # what f"{prefix}{k:06d}" gives, a third faster
        ids = [fmt % k for k in range(n + 1, n + count + 1)]
        self._counters[kind] = n + count
        self.links.extend(
            map(
                Link,
                ids,
                repeat(kind),
                a_devs,
                a_ports,
                b_devs,
                b_ports,
                rates,
                repeat(plane),
                repeat(rail),
            )
        )

    def connect(self, kind: str, lower: str, upper: str, plane: int, count: int = 1) -> None:
        """``count`` parallel links between two switches, on each one's next free ports."""
        self.connect_all(kind, [(lower, count)], [upper], plane)

    def connect_all(
        self, kind: str, lowers: Sequence[tuple[str, int]], uppers: Sequence[str], plane: int
    ) -> None:
        """For each (lower, count) of ``lowers`` in order, ``count`` parallel links to each of
        ``uppers`` in order, on each switch's next free ports (counts are never negative):
        the links (ids, ports, rates, order) ``connect`` would make call by call, in one batch."""
        ups = set(uppers)
        if (
            self._tally is not None
            or len(ups) != len(uppers)
            or not ups.isdisjoint([low for low, _ in lowers])
        ):  # counting, or a switch on both sides: link by link, as ever
            for low, count in lowers:
                for up in uppers:
                    for _ in range(count):
                        self.add_link(kind, low, self.take_port(low), up, self.take_port(up), plane)
            return
        if len(uppers) == 1:
            self._connect_to_one(kind, lowers, uppers[0], plane)
        else:
            self._connect_to_many(kind, lowers, uppers, plane)

    def _connect_to_one(
        self, kind: str, lowers: Sequence[tuple[str, int]], upper: str, plane: int
    ) -> None:
        """``connect_all`` onto one upper switch: its ports run on in one range."""
        nxt = self._next_port
        a_devs: list[str] = []
        a_ports: list[int] = []
        for low, count in lowers:
            port = nxt[low]
            nxt[low] = port + count
            if count == 1:
                a_devs.append(low)
                a_ports.append(port)
            else:
                a_devs.extend(repeat(low, count))
                a_ports.extend(range(port, port + count))
        first = nxt[upper]
        total = len(a_ports)
        nxt[upper] = first + total
        b_ports = range(first, first + total)
        rates = self._run_rates(upper, first, total)
        self._extend(kind, total, a_devs, a_ports, repeat(upper), b_ports, rates, plane, -1)

    def _connect_to_many(
        self, kind: str, lowers: Sequence[tuple[str, int]], uppers: Sequence[str], plane: int
    ) -> None:
        """``connect_all`` onto several distinct upper switches, none of them a lower one."""
        nxt = self._next_port
        starts = [nxt[up] for up in uppers]
        cur = list(starts)
        width = len(uppers)
        a_devs: list[str] = []
        a_ports: list[int] = []
        b_devs: list[str] = []
        b_ports: list[int] = []
        for low, count in lowers:
            port = nxt[low]
            nxt[low] = port + width * count
            if count == 1:
                a_devs.extend(repeat(low, width))
                a_ports.extend(range(port, port + width))
                b_devs.extend(uppers)
                b_ports.extend(cur)
                cur = [q + 1 for q in cur]
                continue
            for k, up in enumerate(uppers):
                a_devs.extend(repeat(low, count))
                a_ports.extend(range(port + k * count, port + (k + 1) * count))
                b_devs.extend(repeat(up, count))
                b_ports.extend(range(cur[k], cur[k] + count))
                cur[k] += count
        for up, q in zip(uppers, cur, strict=True):
            nxt[up] = q
        rates = self._many_rates(uppers, starts, cur, b_devs, b_ports)
        self._extend(kind, len(a_ports), a_devs, a_ports, b_devs, b_ports, rates, plane, -1)

    def _many_rates(
        self,
        uppers: Sequence[str],
        starts: Sequence[int],
        ends: Sequence[int],
        b_devs: list[str],
        b_ports: list[int],
    ) -> Iterable[int]:
        """The rates of links onto ``uppers`` (each used from its start to its end port):
        one speed when every run stays in one speed section of one speed, else port by port."""
        speeds = set()
        for up, start, end in zip(uppers, starts, ends, strict=True):
            sw = self._switch.get(up)
            if sw is None:
                speeds.add(self.speed)
            elif not sw.up_from_port or end <= sw.up_from_port:
                speeds.add(sw.port_speed_gbps)
            elif start >= sw.up_from_port:
                speeds.add(sw.up_speed_gbps)
            else:
                speeds.add(-1)  # a run across the up section: no single speed
        if len(speeds) == 1 and -1 not in speeds:
            return repeat(speeds.pop())
        get = self._switch.get
        return [
            self.speed if (sw := get(up)) is None else sw.speed_of(q)
            for up, q in zip(b_devs, b_ports, strict=True)
        ]
