"""Accumulates switches and links with stable ids while a generator wires a fabric."""

from __future__ import annotations

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
        self._next_port: dict[str, int] = {}
        self._counters = dict.fromkeys(LINK_PREFIX, 0)

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
        self._next_port[switch_id] = 0
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
        self.links.append(
            Link(
                id=f"{LINK_PREFIX[kind]}{self._counters[kind]:06d}",
                kind=kind,
                a_device=a_device,
                a_port=a_port,
                b_device=b_device,
                b_port=b_port,
                rate_gbps=rate,
                plane=plane,
                rail=rail,
            )
        )

    def connect(self, kind: str, lower: str, upper: str, plane: int, count: int = 1) -> None:
        """``count`` parallel links between two switches, on each one's next free ports."""
        for _ in range(count):
            self.add_link(kind, lower, self.take_port(lower), upper, self.take_port(upper), plane)
