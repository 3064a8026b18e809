"""Catalog parts: switches, NICs, node models, transceivers and cables (pydantic models)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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


#: what a cage or a plug of each form factor carries at most, in Gb/s (all its lanes)
FORM_FACTOR_GBPS = {"osfp": 1600, "qsfp-dd": 800, "qsfp112": 400, "qsfp56": 200, "qsfp28": 100}
#: plugs a cage accepts: QSFP112 and QSFP-DD cages take the older QSFP plugs too
CAGE_ACCEPTS = {
    "osfp": ("osfp",),
    "qsfp112": ("qsfp112", "qsfp56", "qsfp28"),
    "qsfp-dd": ("qsfp-dd", "qsfp56", "qsfp28"),
    "qsfp56": ("qsfp56", "qsfp28"),
    "qsfp28": ("qsfp28",),
}
#: optical connectors of transceivers and fibre cords (APC and UPC polish do not mate)
CONNECTORS = ("mpo-12-apc", "mpo-12-upc", "mpo-16-apc", "mpo-16-upc", "lc-duplex")


def cage_accepts(cage_ff: str, plug_ff: str) -> bool:
    """True when a plug of form factor ``plug_ff`` fits a cage of form factor ``cage_ff``."""
    return plug_ff in CAGE_ACCEPTS.get(cage_ff, (cage_ff,))


FormFactor = Literal["osfp", "qsfp112", "qsfp-dd", "qsfp56", "qsfp28"]


def _need_source(v: object) -> object:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        raise ValueError(
            f"a bare {v} has no source; write {{value: {v}, source: 'estimate: ...'}} "
            f"(source starts with {', '.join(SOURCE_KINDS)})"
        )
    return v


class Transceiver(_Strict):
    """An optical module in one cage.

    ``ports`` logical ports of ``port_speed_gbps`` each (2 for a twin-port OSFP at 2 x 400G, 4
    for the same module at 4 x 200G behind 1:2 fibre splitters); ``connectors`` optical
    connectors share those ports evenly (0 = one per port). A connector carrying several ports
    needs a splitter fibre or a far module with the same ports on one connector. Two modules
    talk when their ``interface`` is equal (``400g-dr4`` ...). ``mode_of`` names the entry of
    the same physical part run another way (the BOM counts them as that part).
    """

    id: str
    name: str
    part_number: str = ""
    form_factor: FormFactor
    ports: int = Field(ge=1, le=4)
    port_speed_gbps: int = Field(gt=0)
    interface: str = Field(min_length=2)
    fibre: Literal["mmf", "smf"]
    connector: str
    connectors: int = Field(0, ge=0, le=4)
    mode_of: str = ""
    reach_m: Sourced
    power_w: Sourced
    price_usd: Sourced

    @field_validator("reach_m", "power_w", "price_usd", mode="before")
    @classmethod
    def _sourced(cls, v: object) -> object:
        return _need_source(v)

    @model_validator(mode="after")
    def _fits(self) -> Transceiver:
        cap = FORM_FACTOR_GBPS[self.form_factor]
        if self.ports * self.port_speed_gbps > cap:
            raise ValueError(
                f"{self.ports} x {self.port_speed_gbps}G exceeds the {cap}G a "
                f"{self.form_factor} module carries"
            )
        if self.connector not in CONNECTORS:
            raise ValueError(f"connector {self.connector!r} is not one of {', '.join(CONNECTORS)}")
        if self.connectors and self.ports % self.connectors:
            raise ValueError(f"{self.ports} ports cannot share {self.connectors} connectors evenly")
        return self

    @property
    def connector_count(self) -> int:
        return self.connectors or self.ports

    @property
    def ports_per_connector(self) -> int:
        return self.ports // self.connector_count

    @property
    def part(self) -> str:
        """The physical part this entry is (itself, or the entry it is a mode of)."""
        return self.mode_of or self.id


class Cable(_Strict):
    """A cable: copper/AOC with built-in ends, a fibre cord, or a 1:N splitter of either.

    Built-in cables (dac/acc/aec/aoc) name form factors at their ends and carry ``links``
    links of ``speed_gbps``; ``breakout`` b ends share them (1 = straight, 2 = 1:2 splitter).
    Fibre cords name connectors at their ends, carry whatever the modules run
    (``speed_gbps`` 0) and split 1:``breakout`` likewise. Price of a stocked length L:
    ``price_usd + price_per_m_usd x L``; ``power_w`` is the whole cable (every end).
    """

    id: str
    name: str
    part_number: str = ""
    kind: Literal["dac", "acc", "aec", "aoc", "fibre"]
    #: form factor at each end (fibre: the connector, e.g. "mpo-12-apc")
    end_a: str
    end_b: str
    #: speed of each link the cable carries; 0 for fibre cords
    speed_gbps: int = Field(0, ge=0)
    #: links the a end carries (2 for a twin-port cable or a 1:2 splitter)
    links: int = Field(1, ge=1, le=4)
    #: 1 for straight cables, 2 (or 4) for splitters: one a end, ``breakout`` b ends
    breakout: int = Field(default=1, ge=1, le=4)
    fibre: Literal["mmf", "smf", ""] = ""
    lengths_m: tuple[float, ...]
    reach_m: Sourced
    power_w: Sourced
    price_usd: Sourced
    price_per_m_usd: Sourced | None = None

    @field_validator("reach_m", "power_w", "price_usd", "price_per_m_usd", mode="before")
    @classmethod
    def _sourced(cls, v: object) -> object:
        return _need_source(v)

    @model_validator(mode="after")
    def _lengths(self) -> Cable:
        if not self.lengths_m or list(self.lengths_m) != sorted(set(self.lengths_m)):
            raise ValueError("lengths_m must be a non-empty increasing list of stocked lengths")
        if self.lengths_m[0] <= 0:
            raise ValueError("stocked lengths must be above 0 m")
        if self.lengths_m[-1] > self.reach_m.value + 1e-9:
            raise ValueError(
                f"stocked length {self.lengths_m[-1]:g} m exceeds the reach {self.reach_m.value:g} m"
            )
        if (self.kind == "fibre") != bool(self.fibre):
            raise ValueError("fibre cables need fibre: mmf|smf, other kinds must leave it empty")
        if self.breakout > self.links or self.links % self.breakout:
            raise ValueError(f"{self.links} links cannot split evenly over {self.breakout} b ends")
        if self.kind == "fibre":
            for end in (self.end_a, self.end_b):
                if end not in CONNECTORS:
                    raise ValueError(
                        f"fibre end {end!r} is not a connector ({', '.join(CONNECTORS)})"
                    )
            if self.speed_gbps:
                raise ValueError("fibre cords carry what the modules run; leave speed_gbps out")
            if self.links != self.breakout:
                raise ValueError(
                    "a fibre cord carries what its connectors carry: give a 1:N splitter "
                    "links = breakout = N and a straight cord neither"
                )
            return self
        if not self.speed_gbps:
            raise ValueError(f"a {self.kind} cable needs speed_gbps (the speed of each link)")
        per_end = ((self.end_a, self.links), (self.end_b, self.links // self.breakout))
        for end, links in per_end:
            if end not in FORM_FACTOR_GBPS:
                raise ValueError(
                    f"end {end!r} is not a form factor ({', '.join(FORM_FACTOR_GBPS)})"
                )
            if links * self.speed_gbps > FORM_FACTOR_GBPS[end]:
                raise ValueError(
                    f"{links} x {self.speed_gbps}G exceeds the {FORM_FACTOR_GBPS[end]}G a "
                    f"{end} end carries"
                )
        return self

    @property
    def ports_a(self) -> int:
        """Links on the a end (the cage or connector with more ports)."""
        return self.links

    @property
    def ports_b(self) -> int:
        """Links on each b end."""
        return self.links // self.breakout

    def price_at(self, length_m: float) -> float:
        """Price of one cable of stocked length ``length_m``."""
        per_m = self.price_per_m_usd.value if self.price_per_m_usd else 0.0
        return self.price_usd.value + per_m * length_m

    def stocked(self, length_m: float) -> float | None:
        """The shortest stocked length that covers ``length_m`` (None when none does)."""
        for stock in self.lengths_m:
            if stock >= length_m - LENGTH_EPS_M:
                return stock
        return None


#: lengths closer than this count as equal (a routed 2.0000001 m fits a 2 m cable)
LENGTH_EPS_M = 1e-6


SECTIONS: dict[str, type[BaseModel]] = {
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


def _lookup(table: dict[str, Any], key: str, what: str) -> Any:
    if key not in table:
        known = ", ".join(sorted(table))
        raise CatalogError(f"unknown {what} {key!r}; the catalog has: {known}")
    return table[key]
