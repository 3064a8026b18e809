"""Catalog of switches, NICs, node models, transceivers and cables, validated on load."""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from railplan.errors import CatalogError

SOURCE_KINDS = ("datasheet", "list price", "estimate", "vendor", "standard")
FORM_FACTORS = ("osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sourced(_Strict):
    """A figure with where it came from: ``source`` starts with datasheet/list price/estimate."""

    value: float = Field(ge=0)
    source: str = Field(min_length=3)

    @field_validator("source")
    @classmethod
    def _known_kind(cls, v: str) -> str:
        if not v.lower().startswith(SOURCE_KINDS):
            raise ValueError(
                f"must start with one of {', '.join(SOURCE_KINDS)} (e.g. 'estimate: ...')"
            )
        return v


class PortMode(_Strict):
    """A way to run a cage: ``ports_per_cage`` logical ports at ``speed_gbps`` each."""

    speed_gbps: int = Field(gt=0)
    ports_per_cage: int = Field(ge=1, le=8)


class SwitchModel(_Strict):
    id: str
    name: str
    vendor: str
    protocol: Literal["ethernet", "infiniband"]
    asic_tbps: float = Field(gt=0)
    cages: int = Field(gt=0)
    form_factor: Literal["osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28"]
    cage_speed_gbps: int = Field(gt=0)
    modes: tuple[PortMode, ...]
    rack_units: int = Field(ge=1, le=10)
    power_typical_w: Sourced
    power_max_w: Sourced
    price_usd: Sourced
    #: port-to-port forwarding latency one switch hop adds (test plan latency expectations)
    hop_latency_ns: Sourced | None = None
    notes: str = ""

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
    form_factor: Literal["osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28"]
    power_w: Sourced
    price_usd: Sourced
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
    gpus: int = Field(ge=1)
    nic: str
    nics: int = Field(ge=1)
    #: node-side cage: twin-port OSFP cages carry two NIC ports each (DGX H100)
    form_factor: Literal["osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28"]
    ports_per_cage: int = Field(default=1, ge=1, le=2)
    source: str = Field(min_length=3)


class Transceiver(_Strict):
    """An optical module; ``ports`` = 2 for twin-port parts that serve two links."""

    id: str
    name: str
    form_factor: Literal["osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28"]
    ports: int = Field(ge=1, le=2)
    port_speed_gbps: int = Field(gt=0)
    fibre: Literal["mmf", "smf"]
    connector: str
    reach_m: Sourced
    power_w: Sourced
    price_usd: Sourced


class Cable(_Strict):
    """A cable: copper/AOC with built-in ends, a fibre patch cord, or a 1:2 splitter."""

    id: str
    name: str
    kind: Literal["dac", "acc", "aec", "aoc", "fibre"]
    #: form factor at each end (fibre: the connector, e.g. "mpo-12")
    end_a: str
    end_b: str
    speed_gbps: int = Field(gt=0)
    #: 1 for straight cables, 2 (or 4) for splitters: one a end, ``breakout`` b ends
    breakout: int = Field(default=1, ge=1, le=4)
    fibre: Literal["mmf", "smf", ""] = ""
    lengths_m: tuple[float, ...]
    reach_m: Sourced
    power_w: Sourced
    price_usd: Sourced
    price_per_m_usd: Sourced | None = None

    @model_validator(mode="after")
    def _lengths(self) -> Cable:
        if not self.lengths_m or list(self.lengths_m) != sorted(set(self.lengths_m)):
            raise ValueError("lengths_m must be a non-empty increasing list of stocked lengths")
        if self.lengths_m[-1] > self.reach_m.value + 1e-9:
            raise ValueError(
                f"stocked length {self.lengths_m[-1]} m exceeds the reach {self.reach_m.value} m"
            )
        if (self.kind == "fibre") != bool(self.fibre):
            raise ValueError("fibre cables need fibre: mmf|smf, other kinds must leave it empty")
        return self


SECTIONS = {
    "switches": SwitchModel,
    "nics": NicModel,
    "nodes": NodeModel,
    "transceivers": Transceiver,
    "cables": Cable,
}


class Catalog(_Strict):
    switches: dict[str, SwitchModel]
    nics: dict[str, NicModel]
    nodes: dict[str, NodeModel]
    transceivers: dict[str, Transceiver]
    cables: dict[str, Cable]

    def switch(self, switch_id: str) -> SwitchModel:
        return _lookup(self.switches, switch_id, "switch")

    def nic(self, nic_id: str) -> NicModel:
        return _lookup(self.nics, nic_id, "NIC")

    def node(self, node_id: str) -> NodeModel:
        return _lookup(self.nodes, node_id, "node model")


def _lookup(table: dict, key: str, what: str):  # type: ignore[no-untyped-def]
    if key not in table:
        known = ", ".join(sorted(table))
        raise CatalogError(f"unknown {what} {key!r}; the catalog has: {known}")
    return table[key]


def default_catalog_dir() -> Path:
    """``$RAILPLAN_CATALOG_DIR``, else the repository's ``catalogs/`` beside the package."""
    env = os.environ.get("RAILPLAN_CATALOG_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parent.parent / "catalogs"


def _first_error(exc: ValidationError, where: str) -> str:
    err = exc.errors()[0]
    path = ".".join(str(p) for p in err["loc"])
    msg = err["msg"].removeprefix("Value error, ")
    return f"{where}: {path}: {msg}"


def parse_catalog(documents: Iterable[tuple[str, object]]) -> Catalog:
    """Build a Catalog from (file name, parsed YAML) pairs; errors name file and entry."""
    tables: dict[str, dict[str, object]] = {k: {} for k in SECTIONS}
    for fname, doc in documents:
        if not isinstance(doc, dict):
            raise CatalogError(f"{fname}: expected a mapping of sections ({', '.join(SECTIONS)})")
        for section, entries in doc.items():
            if section not in SECTIONS:
                raise CatalogError(
                    f"{fname}: unknown section {section!r}; use one of {', '.join(SECTIONS)}"
                )
            if not isinstance(entries, list):
                raise CatalogError(f"{fname}: section {section!r} must be a list of entries")
            for i, entry in enumerate(entries):
                ident = entry.get("id", f"#{i}") if isinstance(entry, dict) else f"#{i}"
                try:
                    item = SECTIONS[section].model_validate(entry)
                except ValidationError as exc:
                    raise CatalogError(_first_error(exc, f"{fname}: {section}[{ident}]")) from None
                if item.id in tables[section]:  # type: ignore[attr-defined]
                    raise CatalogError(f"{fname}: {section} id {item.id!r} is defined twice")  # type: ignore[attr-defined]
                tables[section][item.id] = item  # type: ignore[attr-defined]
    catalog = Catalog.model_validate(tables)
    for node in catalog.nodes.values():
        if node.nic not in catalog.nics:
            raise CatalogError(f"nodes[{node.id}]: unknown nic {node.nic!r}")
    return catalog


def load_catalog(directory: str | Path | None = None) -> Catalog:
    """Load every ``*.yaml`` in a catalog directory (default: the bundled catalogs)."""
    path = Path(directory) if directory is not None else default_catalog_dir()
    return _load_cached(str(path.resolve()))


@lru_cache(maxsize=8)
def _load_cached(path: str) -> Catalog:
    folder = Path(path)
    if not folder.is_dir():
        raise CatalogError(f"catalog directory {folder} does not exist; set RAILPLAN_CATALOG_DIR")
    docs = []
    for file in sorted(folder.glob("*.yaml")):
        try:
            docs.append((file.name, yaml.safe_load(file.read_text(encoding="utf-8"))))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = f" line {mark.line + 1}" if mark else ""
            raise CatalogError(f"{file.name}{line}: not valid YAML") from None
    return parse_catalog(docs)
