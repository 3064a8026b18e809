"""Port names by table: every port's name worked out once per layout of ports, then looked up."""

from __future__ import annotations

from collections.abc import Mapping

from railplan.design.types import Design, Switch


class PortNames:
    """``Design.port_name`` read from a table of every port's name per device, one table per
    layout a name reads: a switch's cage sections and radix, an attached device's port count,
    the node shape (a port outside the table is named by ``Design.port_name`` itself)."""

    def __init__(self, design: Design, switches: Mapping[str, Switch]) -> None:
        self._design = design
        self._switches = switches
        self._devices = {d.id: d for d in design.devices}
        self._by_layout: dict[tuple[object, ...], list[str]] = {}
        self._of_device: dict[str, list[str]] = {}

    def table(self, device: str) -> list[str]:
        """The name of each of ``device``'s ports, by port number."""
        names = self._of_device.get(device)
        if names is not None:
            return names
        sw = self._switches.get(device)
        if sw is not None:
            count = sw.radix
            key: tuple[object, ...] = (sw.up_from_port, sw.ports_per_cage, sw.up_ports_per_cage)
        elif device in self._devices:
            count = self._devices[device].ports
            key = ("device",)
        else:
            count = self._design.shape.ports
            key = ("node",)
        key += (count,)
        names = self._by_layout.get(key)
        if names is None:
            names = self._by_layout[key] = [
                self._design.port_name(device, p, self._switches) for p in range(count)
            ]
        self._of_device[device] = names
        return names

    def __call__(self, device: str, port: int) -> str:
        names = self._of_device.get(device)
        if names is None:
            names = self.table(device)
        if 0 <= port < len(names):
            return names[port]
        return self._design.port_name(device, port, self._switches)
