"""Accumulates switches and links with stable ids while a generator wires a fabric."""

from __future__ import annotations

from railplan.catalog import SwitchModel
from railplan.design import Link, Switch

LINK_PREFIX = {"node-leaf": "NL", "leaf-spine": "LS", "spine-core": "SC", "leaf-leaf": "LL"}


class FabricBuilder:
    """Collects switches and links; hands out the next free port of each switch."""

    def __init__(self, model: SwitchModel, speed_gbps: int, radix: int) -> None:
        self.model = model
        self.speed = speed_gbps
        self.radix = radix
        mode = model.mode_at(speed_gbps)
        self.ports_per_cage = mode.ports_per_cage if mode else 1
        self.switches: list[Switch] = []
        self.links: list[Link] = []
        self._next_port: dict[str, int] = {}
        self._counters = dict.fromkeys(LINK_PREFIX, 0)

    def add_switch(self, switch_id: str, role: str, plane: int, **attrs: object) -> str:
        self.switches.append(
            Switch(
                id=switch_id,
                model=self.model.id,
                role=role,
                plane=plane,
                radix=self.radix,
                port_speed_gbps=self.speed,
                ports_per_cage=self.ports_per_cage,
                **attrs,  # type: ignore[arg-type]
            )
        )
        self._next_port[switch_id] = 0
        return switch_id

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
        self.links.append(
            Link(
                id=f"{LINK_PREFIX[kind]}{self._counters[kind]:06d}",
                kind=kind,
                a_device=a_device,
                a_port=a_port,
                b_device=b_device,
                b_port=b_port,
                rate_gbps=self.speed,
                plane=plane,
                rail=rail,
            )
        )

    def connect(self, kind: str, lower: str, upper: str, plane: int, count: int = 1) -> None:
        """``count`` parallel links between two switches, on each one's next free ports."""
        for _ in range(count):
            self.add_link(kind, lower, self.take_port(lower), upper, self.take_port(upper), plane)
