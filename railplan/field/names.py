"""Map site device and port names (hostnames, ifnames, HCAs, IB node descriptions) to the design.

Without a name map the design's own names are understood, plus the usual site spellings:

- devices: the design id (``node0001``, ``p0-leaf-su01-r0``), a fully qualified host name whose
  first label is the design id, an InfiniBand node description (``node0001 mlx5_0``, or the
  switch form ``MF0;p0-spine-01:MQM9700/U1``);
- node ports: ``nic3`` / ``nic1.p2`` (the design's names) and ``mlx5_3`` (HCA k is NIC port k);
- attached-device ports (a UFM appliance, storage, management hosts): ``P2`` (the design's
  name, as on sheets, labels, CSV, NetBox and P2P), ``mlx5_1`` (HCA k is port k, as the
  InfiniBand discovery and the ``.topo`` name it) and ``nic1`` (the host's k-th fabric port);
- switch ports: ``P17`` / ``P9/2`` (the design's names), an InfiniBand port number (``17`` =
  logical port 17), Cumulus ``swp9`` / ``swp9s1``, SONiC aliases ``etp9`` / ``etp9b``, SONiC
  ``Ethernet64`` (lane-numbered, ``lanes_per_cage`` lanes per cage, default 8) and Arista/NX-OS
  ``Ethernet9/5`` / ``Eth1/9`` (cage/lane).

A name map file (YAML or JSON) adds the site's own names::

    devices:            # site device name (or IB GUID) -> design device id
      gpu-a01.example.net: node0001
      sw-leaf-101: p0-leaf-su01-r0
    node_ports:         # interface / HCA[:IB port] / MAC on every node -> design port name
      ens1f0np0: nic0
      mlx5_4: nic1
      mlx5_0:2: nic0.p2
    switch_ports:       # port name on every switch -> design port name
      Ethernet0: P1
    ports:              # per device (design id or site name): site port -> design port name
      node0007: {ens2f0np0: nic3}
      ufm: {ens1f0np0: P1}   # an attached device's ports too
    lanes_per_cage: 8   # SONiC EthernetN numbering
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from railplan.design import Design, Switch
from railplan.field.common import FieldInputError, read_data
from railplan.sentences import sentence


@dataclass(frozen=True, slots=True, order=True)
class Endpoint:
    """One design port: a device id and its logical port index."""

    device: str
    port: int


class _NameMapFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    devices: dict[str, str] = Field(default_factory=dict)
    node_ports: dict[str, str] = Field(default_factory=dict)
    switch_ports: dict[str, str] = Field(default_factory=dict)
    ports: dict[str, dict[str, str]] = Field(default_factory=dict)
    lanes_per_cage: int = Field(8, ge=1, le=64)


_NIC = re.compile(r"^nic(\d{1,9})(?:\.p(\d{1,9}))?$", re.IGNORECASE)
_HCA = re.compile(r"^mlx\d+_(\d{1,9})(?:[:/ ](?:port\s*)?(\d{1,9}))?$", re.IGNORECASE)
_P = re.compile(r"^p(\d{1,9})(?:/(\d{1,9}))?$", re.IGNORECASE)
_SWP = re.compile(r"^swp(\d{1,9})(?:s(\d{1,9}))?$", re.IGNORECASE)
_ETP = re.compile(r"^etp(\d{1,9})([a-h])?$", re.IGNORECASE)
_SONIC = re.compile(r"^Ethernet(\d{1,9})$", re.IGNORECASE)
_CAGE_LANE = re.compile(r"^(?:Ethernet|et)(\d{1,9})/(\d{1,9})$", re.IGNORECASE)
_NXOS = re.compile(r"^Eth\d+/(\d{1,9})(?:/(\d{1,9}))?$", re.IGNORECASE)
_GUID = re.compile(r"^(?:[SHR]-)?(?:0x)?([0-9a-f]{1,16})$", re.IGNORECASE)


def _guid_key(text: str) -> str | None:
    m = _GUID.match(text.strip())
    if not m or len(m.group(1)) < 8:
        return None
    return m.group(1).lower().lstrip("0") or "0"


def split_ib_description(desc: str) -> tuple[str, str | None]:
    """Host (or switch) name and HCA of an InfiniBand node description.

    ``"node0001 mlx5_0"`` -> ``("node0001", "mlx5_0")``;
    ``"MF0;leaf-01:MQM9700/U1"`` -> ``("leaf-01", None)``.
    """
    text = desc.strip().strip('"').strip()
    if ";" in text:
        text = text.split(";", 1)[1]
        text = text.split(":", 1)[0]
        return text.strip(), None
    parts = text.split()
    if len(parts) >= 2 and _HCA.match(parts[-1]):
        return " ".join(parts[:-1]), parts[-1]
    if len(parts) >= 2 and re.match(r"^(HCA|hca)-?\d+$", parts[-1]):
        return " ".join(parts[:-1]), parts[-1]
    return text, None


@dataclass
class NameMap:
    """Resolves site names against one design; unknown names resolve to None."""

    design: Design
    devices: dict[str, str] = field(default_factory=dict)
    node_ports: dict[str, str] = field(default_factory=dict)
    switch_ports: dict[str, str] = field(default_factory=dict)
    ports: dict[str, dict[str, str]] = field(default_factory=dict)
    lanes_per_cage: int = 8

    def __post_init__(self) -> None:
        self._switches: dict[str, Switch] = self.design.switch_by_id()
        self._nodes = {n.id for n in self.design.nodes}
        self._attached = {d.id: d.ports for d in self.design.devices}
        self._lower = {k.lower(): v for k, v in self.devices.items()}
        self._guids = {g: v for k, v in self.devices.items() if (g := _guid_key(k))}
        self._design_lower = {
            d.lower(): d for d in (*self._nodes, *self._switches, *self._attached)
        }
        self._device_memo: dict[str, str | None] = {}
        self._port_memo: dict[tuple[str, str, str | None], int | None] = {}

    # -- loading ---------------------------------------------------------------------------
    @classmethod
    def load(cls, design: Design, path: str | Path | None) -> NameMap:
        """The name map in ``path`` (YAML or JSON), or the defaults when ``path`` is None."""
        if path is None:
            return cls(design)
        name = Path(path).name
        data: Any = read_data(path)
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise FieldInputError(
                f"{name}: a name map must be a mapping with 'devices', 'ports', ..."
            )
        data = json.loads(json.dumps(data, default=str))  # keys of any YAML type -> strings
        data = {k: _stringify(v) if k != "lanes_per_cage" else v for k, v in data.items()}
        try:
            parsed = _NameMapFile.model_validate(data)
        except ValidationError as exc:
            lines = []
            for err in exc.errors():
                loc = ".".join(str(p) for p in err["loc"]) or "(top level)"
                msg = sentence(err)
                if err["type"] == "extra_forbidden":
                    msg = (
                        "unknown key; use devices, node_ports, switch_ports, ports, lanes_per_cage"
                    )
                lines.append(f"{name}: {loc}: {msg}")
            raise FieldInputError("\n".join(lines)) from None
        known = cls(design)._design_lower
        for site, target in parsed.devices.items():
            if target.lower() not in known:
                raise FieldInputError(
                    f"{name}: devices.{site}: {target!r} is not a node, switch or attached device "
                    f"of design {design.name}"
                )
        return cls(
            design,
            devices=parsed.devices,
            node_ports=parsed.node_ports,
            switch_ports=parsed.switch_ports,
            ports=parsed.ports,
            lanes_per_cage=parsed.lanes_per_cage,
        )

    # -- devices ---------------------------------------------------------------------------
    def device(self, site: str) -> str | None:
        """The design device id a site device name refers to, or None."""
        if site not in self._device_memo:
            self._device_memo[site] = self._device(site)
        return self._device_memo[site]

    def _device(self, site: str) -> str | None:
        name = site.strip().strip('"').strip()
        if not name:
            return None
        for candidate in _device_candidates(name):
            found = self._lookup_device(candidate)
            if found:
                return found
        return None

    def _lookup_device(self, name: str) -> str | None:
        if name in self.devices:
            return self._design_lower.get(self.devices[name].lower())
        if name.lower() in self._lower:
            return self._design_lower.get(self._lower[name.lower()].lower())
        guid = _guid_key(name)
        if guid and guid in self._guids:
            return self._design_lower.get(self._guids[guid].lower())
        return self._design_lower.get(name.lower())

    def is_node(self, device: str) -> bool:
        return device in self._nodes

    def is_switch(self, device: str) -> bool:
        return device in self._switches

    def is_attached(self, device: str) -> bool:
        """True for a device on reserved leaf ports (UFM, storage, management)."""
        return device in self._attached

    # -- ports -----------------------------------------------------------------------------
    def port(self, device: str, site_port: str, site_device: str | None = None) -> int | None:
        """The logical port index of ``site_port`` on design device ``device``, or None."""
        key = (device, site_port, site_device)
        if key not in self._port_memo:
            self._port_memo[key] = self._port(device, site_port, site_device)
        return self._port_memo[key]

    def _port(self, device: str, site_port: str, site_device: str | None) -> int | None:
        raw = site_port.strip()
        if not raw:
            return None
        for key in (device, site_device):
            table = self.ports.get(key) if key else None
            if table and raw in table:
                return self._design_port(device, table[raw])
        if device in self._nodes:
            if raw in self.node_ports:
                return self._design_port(device, self.node_ports[raw])
            return self._node_port(raw)
        if device in self._switches:
            if raw in self.switch_ports:
                return self._design_port(device, self.switch_ports[raw])
            return self._switch_port(self._switches[device], raw)
        if device in self._attached:
            return self._attached_port(self._attached[device], raw)
        return None

    def _design_port(self, device: str, name: str) -> int | None:
        if device in self._nodes:
            return self._node_port(name)
        if device in self._attached:
            return self._attached_port(self._attached[device], name)
        return self._switch_port(self._switches[device], name)

    @staticmethod
    def _attached_port(ports: int, raw: str) -> int | None:
        """``P2`` (the design's name), ``mlx5_1`` / ``mlx5_1:1`` (HCA k), ``nic1`` -> port 1."""
        m = _P.match(raw)
        if m and m.group(2) is None:
            index = int(m.group(1)) - 1
        elif (m := _HCA.match(raw)) is not None:
            if m.group(2) and int(m.group(2)) != 1:
                return None
            index = int(m.group(1))
        elif (m := _NIC.match(raw)) is not None and m.group(2) is None:
            index = int(m.group(1))
        else:
            return None
        return index if 0 <= index < ports else None

    def _node_port(self, raw: str) -> int | None:
        shape = self.design.shape
        m = _NIC.match(raw)
        if m:
            nic = int(m.group(1))
            sub = int(m.group(2) or 1)
            if shape.ports_per_nic == 1 and m.group(2) and sub != 1:
                return None
            port = nic * shape.ports_per_nic + sub - 1
            return port if nic < shape.nics and sub <= shape.ports_per_nic else None
        m = _HCA.match(raw)
        if m:
            index = int(m.group(1))
            if m.group(2) and int(m.group(2)) != 1:
                return None
            return index if index < shape.ports else None
        return None

    def _switch_port(self, sw: Switch, raw: str) -> int | None:
        ppc = sw.ports_per_cage
        cages = sw.cage_count if ppc else sw.radix
        if raw.isdecimal():
            index = int(raw) - 1
            return index if 0 <= index < sw.radix else None
        m = _P.match(raw) or _SWP.match(raw)
        if m:
            cage = int(m.group(1))
            sub = m.group(2)
            if m.re is _SWP and sub is not None:
                return self._cage_port(sw, cages, cage, int(sub) + 1)
            return self._cage_port(sw, cages, cage, int(sub) if sub else None)
        m = _ETP.match(raw)
        if m:
            letter = m.group(2)
            sub = ord(letter.lower()) - ord("a") + 1 if letter else None
            return self._cage_port(sw, cages, int(m.group(1)), sub)
        m = _SONIC.match(raw)
        if m:
            lane = int(m.group(1))
            lanes = self.lanes_per_cage
            per_port = max(1, lanes // sw.cage_ports(lane // lanes))
            if lane % per_port:
                return None
            return self._cage_port(sw, cages, lane // lanes + 1, (lane % lanes) // per_port + 1)
        m = _NXOS.match(raw)
        if m:  # Eth1/9 or Eth1/9/2: module/cage[/breakout]
            sub = int(m.group(2)) if m.group(2) else None
            return self._cage_port(sw, cages, int(m.group(1)), sub)
        m = _CAGE_LANE.match(raw)
        if m:  # Ethernet9/5: cage/first lane
            lane = int(m.group(2))
            per_port = max(1, self.lanes_per_cage // sw.cage_ports(int(m.group(1)) - 1))
            if (lane - 1) % per_port:
                return None
            return self._cage_port(sw, cages, int(m.group(1)), (lane - 1) // per_port + 1)
        return None

    @staticmethod
    def _cage_port(sw: Switch, cages: int, cage: int, sub: int | None) -> int | None:
        if not 1 <= cage <= cages:
            return None
        return sw.port_at(cage - 1, (sub or 1) - 1)

    def endpoint(self, site_device: str, site_ports: list[str]) -> Endpoint | None:
        """The design port behind a site device and the first of its port names that resolves."""
        device = self.device(site_device)
        if device is None:
            return None
        for raw in site_ports:
            port = self.port(device, raw, site_device)
            if port is not None:
                return Endpoint(device, port)
        return None

    # -- display ---------------------------------------------------------------------------
    def port_name(self, end: Endpoint) -> str:
        """The design's own name of a port: ``nic3`` on nodes, ``P17`` or ``P9/2`` on switches,
        ``P2`` on an attached device (as ``Design.port_name`` gives it to every export)."""
        return self.design.port_name(end.device, end.port, self._switches)

    def display(self, end: Endpoint) -> str:
        return f"{end.device} {self.port_name(end)}"


def _stringify(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _stringify(v) for k, v in value.items()}
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _device_candidates(name: str) -> list[str]:
    out = [name]
    host, _hca = split_ib_description(name)
    if host and host != name:
        out.append(host)
    for item in list(out):
        if "." in item and not _guid_key(item):
            out.append(item.split(".", 1)[0])
    return out
