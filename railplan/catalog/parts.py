"""Catalog parts: switches, NICs and node models here; media and panels in ``media_parts``;
what they share in ``base``. The whole ``Catalog`` and its ``SECTIONS`` live here."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from railplan.catalog.base import (
    CAGE_ACCEPTS,
    CONNECTORS,
    FORM_FACTOR_GBPS,
    FORM_FACTORS,
    LENGTH_EPS_M,
    PROTOCOLS,
    SOURCE_KINDS,
    FormFactor,
    Protocol,
    Sourced,
    _Strict,
    cage_accepts,
)
from railplan.catalog.media_parts import Cable, Cassette, Panel, Transceiver
from railplan.catalog.price import Price
from railplan.errors import CatalogError

__all__ = [
    "CAGE_ACCEPTS",
    "CONNECTORS",
    "FORM_FACTORS",
    "FORM_FACTOR_GBPS",
    "LENGTH_EPS_M",
    "PROTOCOLS",
    "SECTIONS",
    "SOURCE_KINDS",
    "Cable",
    "Cassette",
    "Catalog",
    "FormFactor",
    "NicModel",
    "NodeModel",
    "Panel",
    "PortMode",
    "Protocol",
    "Sourced",
    "SwitchModel",
    "Transceiver",
    "cage_accepts",
]


class PortMode(_Strict):
    """A way to run a cage: ``ports_per_cage`` logical ports at ``speed_gbps`` each."""

    speed_gbps: int = Field(gt=0)
    ports_per_cage: int = Field(ge=1, le=8)


class SwitchModel(_Strict):
    id: str
    name: str
    vendor: str
    protocol: Protocol
    asic_tbps: float = Field(gt=0)
    cages: int = Field(gt=0)
    form_factor: FormFactor
    cage_speed_gbps: int = Field(gt=0)
    modes: tuple[PortMode, ...]
    rack_units: int = Field(ge=1, le=10)
    power_typical_w: Sourced
    power_max_w: Sourced
    price_usd: Price
    #: annualized failure rate (fraction replaced per year); None: the family's default
    afr: Sourced | None = None
    #: port-to-port forwarding latency one switch hop adds (test plan latency expectations)
    hop_latency_ns: Sourced | None = None
    #: electrical lane rates its cages run, in Gb/s (empty: any); a module's host lanes must match
    lane_gbps: tuple[int, ...] = ()
    #: the vendor's orderable part number ("" where the catalog does not know it); the bill prints it
    part_number: str = ""
    notes: str = ""
    #: how the switch is cooled: "liquid" switches need a coolant loop in their network rack
    cooling: Literal["air", "liquid"] = "air"
    #: where the port table, rack units and cooling come from (document, page or table)
    source: str = ""

    @property
    def co_packaged(self) -> bool:
        """True for a co-packaged-optics switch: its ports are optical engines, not cages."""
        return self.form_factor == "cpo"

    @model_validator(mode="after")
    def _modes_fit(self) -> SwitchModel:
        native = self.cages * self.cage_speed_gbps
        if native > self.asic_tbps * 1000 + 1e-6:
            raise ValueError(
                f"{self.cages} cages x {self.cage_speed_gbps}G exceed the {self.asic_tbps}T ASIC"
            )
        speeds = set()
        for mode in self.modes:
            if mode.speed_gbps * mode.ports_per_cage > self.cage_speed_gbps:
                raise ValueError(
                    f"breakout {mode.ports_per_cage}x{mode.speed_gbps}G does not fit a "
                    f"{self.cage_speed_gbps}G cage"
                )
            if mode.speed_gbps in speeds:
                raise ValueError(f"speed {mode.speed_gbps}G listed twice in modes")
            speeds.add(mode.speed_gbps)
        if not speeds:
            raise ValueError("modes must list at least one port speed")
        return self

    def mode_at(self, speed_gbps: int) -> PortMode | None:
        return next((m for m in self.modes if m.speed_gbps == speed_gbps), None)

    def radix(self, speed_gbps: int) -> int:
        """Logical ports at ``speed_gbps`` (0 when the switch cannot run that speed)."""
        mode = self.mode_at(speed_gbps)
        return self.cages * mode.ports_per_cage if mode else 0

    def speeds(self) -> list[int]:
        return sorted(m.speed_gbps for m in self.modes)


class NicModel(_Strict):
    id: str
    name: str
    vendor: str
    ports: int = Field(ge=1, le=4)
    port_speed_gbps: int = Field(gt=0)
    form_factor: FormFactor
    #: link protocols the NIC runs at ``port_speed_gbps`` (both unless its vendor says otherwise)
    protocols: tuple[Protocol, ...] = PROTOCOLS
    #: electrical lane rates its cage runs, in Gb/s (empty: any)
    lane_gbps: tuple[int, ...] = ()
    power_w: Sourced
    price_usd: Price
    #: annualized failure rate (fraction replaced per year); None: the family's default
    afr: Sourced | None = None
    #: measured ib_write_bw throughput / line rate (test plan bandwidth expectations)
    rdma_efficiency: Sourced | None = None
    #: ib_write_lat between two NICs connected back to back, in microseconds
    rdma_latency_us: Sourced | None = None

    @field_validator("rdma_efficiency")
    @classmethod
    def _fraction(cls, v: Sourced | None) -> Sourced | None:
        if v is not None and not 0 < v.value <= 1:
            raise ValueError("must be a fraction of line rate in (0, 1]")
        return v


class NodeModel(_Strict):
    id: str
    name: str
    #: who makes the server (NetBox's manufacturer); "" for a class of OEM servers
    vendor: str = ""
    gpus: int = Field(ge=1)
    nic: str
    nics: int = Field(ge=1)
    #: node-side cage: twin-port OSFP cages carry two NIC ports each (DGX H100)
    form_factor: FormFactor
    ports_per_cage: int = Field(default=1, ge=1, le=2)
    source: str = Field(min_length=3)
    #: GPUs joined by one NVLink domain: 0 for the node's own GPUs (an 8-GPU HGX), 72 for a
    #: rack-scale NVL72 whose node is one compute tray; collectives inside a domain stay on NVLink
    nvlink_domain_gpus: int = Field(default=0, ge=0, le=1152)
    #: a rack-scale system's compute trays per rack (0: the spec's layout decides); the rack is
    #: then the unit of placement, one NVLink domain per rack
    trays_per_rack: int = Field(default=0, ge=0, le=64)
    #: rack units of one node or tray (0: the spec's layout.node_height_u)
    rack_units: int = Field(default=0, ge=0, le=20)
    #: power of one node or tray, and of a whole rack-scale rack (compute, NVLink switches, power
    #: shelves), in W
    power_w: Sourced | None = None
    rack_power_w: Sourced | None = None
    cooling: Literal["air", "liquid", "hybrid"] = "air"

    @model_validator(mode="after")
    def _domain_fits(self) -> NodeModel:
        if self.nvlink_domain_gpus and self.nvlink_domain_gpus % self.gpus:
            raise ValueError(
                f"nvlink_domain_gpus {self.nvlink_domain_gpus} is not a whole number of "
                f"{self.gpus}-GPU nodes"
            )
        if self.trays_per_rack and self.nvlink_domain_gpus != self.trays_per_rack * self.gpus:
            raise ValueError(
                f"trays_per_rack {self.trays_per_rack} x {self.gpus} GPUs must be the NVLink "
                f"domain ({self.nvlink_domain_gpus} GPUs): one domain per rack"
            )
        return self

    @property
    def domain_nodes(self) -> int:
        """Nodes (trays) of one NVLink domain: 1 unless the model is rack-scale."""
        return max(1, self.nvlink_domain_gpus // self.gpus)


SECTIONS: dict[str, type[BaseModel]] = {
    "switches": SwitchModel,
    "nics": NicModel,
    "nodes": NodeModel,
    "transceivers": Transceiver,
    "cables": Cable,
    "panels": Panel,
    "cassettes": Cassette,
}


class Catalog(_Strict):
    switches: dict[str, SwitchModel]
    nics: dict[str, NicModel]
    nodes: dict[str, NodeModel]
    transceivers: dict[str, Transceiver]
    cables: dict[str, Cable]
    panels: dict[str, Panel] = Field(default_factory=dict)
    cassettes: dict[str, Cassette] = Field(default_factory=dict)

    def switch(self, switch_id: str) -> SwitchModel:
        return _lookup(self.switches, switch_id, "switch")

    def nic(self, nic_id: str) -> NicModel:
        return _lookup(self.nics, nic_id, "NIC")

    def node(self, node_id: str) -> NodeModel:
        return _lookup(self.nodes, node_id, "node model")


def _lookup(table: dict[str, Any], key: str, what: str) -> Any:
    if key not in table:
        known = ", ".join(sorted(table))
        raise CatalogError(f"unknown {what} {key!r}; the catalog has: {known}")
    return table[key]
