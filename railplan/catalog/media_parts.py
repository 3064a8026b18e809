"""Catalog media parts: transceivers, cables (copper, fibre, splitters, trunks), panels."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field, field_validator, model_validator

from railplan.catalog.base import (
    CONNECTORS,
    FORM_FACTOR_GBPS,
    LENGTH_EPS_M,
    PROTOCOLS,
    FormFactor,
    Protocol,
    Sourced,
    _Strict,
    need_source,
    unusable,
)
from railplan.catalog.price import Price


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
    #: equipment vendor the part is qualified for ("" = a multi-vendor MSA part): a module
    #: named for a vendor goes only into that vendor's switch or NIC cages
    vendor: str = ""
    #: link protocols the module runs (NVIDIA twin-port modules carry both, activated by the
    #: switch they sit in; multi-vendor Ethernet optics carry ethernet only)
    protocols: tuple[Protocol, ...] = PROTOCOLS
    #: host (electrical) lane rate in Gb/s: 100 for NDR/400GbE 100G-PAM4 modules, 200 for XDR;
    #: NVIDIA: 200G-PAM4 parts cannot downshift to 100G-PAM4 lanes (0: not stated)
    lane_gbps: int = Field(0, ge=0)
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
    price_usd: Price
    #: annualized failure rate (fraction replaced per year); None: the family's default
    afr: Sourced | None = None

    @field_validator("reach_m", "power_w", "price_usd", mode="before")
    @classmethod
    def _sourced(cls, v: object) -> object:
        return need_source(v)

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

    def usable(self, protocol: str, vendors: Iterable[str] | None) -> str:
        """Why the module cannot serve ``protocol`` between equipment of ``vendors`` ("" if it can)."""
        return unusable(self.vendor, self.protocols, protocol, vendors)

    def runs_lanes(self, lanes: tuple[int, ...]) -> bool:
        """True when a cage running electrical ``lanes`` (empty: any) drives this module."""
        return not lanes or not self.lane_gbps or self.lane_gbps in lanes


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
    #: orderable part number per stocked length, where the vendor numbers each length
    part_numbers: dict[float, str] = Field(default_factory=dict)
    #: equipment vendor the cable is qualified for ("" = multi-vendor): every device it links
    #: (both ends of a built-in cable; both link ends of a fibre) must be that vendor's
    vendor: str = ""
    protocols: tuple[Protocol, ...] = PROTOCOLS
    kind: Literal["dac", "acc", "aec", "aoc", "fibre", "trunk"]
    #: form factor at each end (fibre: the connector, e.g. "mpo-12-apc")
    end_a: str
    end_b: str
    #: speed of each link the cable carries; 0 for fibre cords
    speed_gbps: int = Field(0, ge=0)
    #: links the a end carries (2 for a twin-port cable or a 1:2 splitter); for a trunk, the
    #: connector positions at each end (each carries one leg of the fibre plant)
    links: int = Field(1, ge=1, le=48)
    #: 1 for straight cables, 2 (or 4) for splitters: one a end, ``breakout`` b ends
    breakout: int = Field(default=1, ge=1, le=4)
    fibre: Literal["mmf", "smf", ""] = ""
    lengths_m: tuple[float, ...]
    reach_m: Sourced
    power_w: Sourced
    price_usd: Price
    price_per_m_usd: Price | None = None
    #: annualized failure rate (fraction replaced per year); None: the family's default
    afr: Sourced | None = None

    @field_validator("reach_m", "power_w", "price_usd", "price_per_m_usd", mode="before")
    @classmethod
    def _sourced(cls, v: object) -> object:
        return need_source(v)

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
        if self.optical != bool(self.fibre):
            raise ValueError(
                "fibre cords and trunks need fibre: mmf|smf, other kinds must leave it empty"
            )
        if self.breakout > self.links or self.links % self.breakout:
            raise ValueError(f"{self.links} links cannot split evenly over {self.breakout} b ends")
        for stock in self.part_numbers:
            if stock not in self.lengths_m:
                raise ValueError(f"part_numbers names {stock:g} m, which is not a stocked length")
        if self.kind == "trunk":
            return self._trunk()
        if self.links > 4:
            raise ValueError(f"a {self.kind} cable carries at most 4 links, not {self.links}")
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

    def _trunk(self) -> Cable:
        for end in (self.end_a, self.end_b):
            if end not in CONNECTORS:
                raise ValueError(f"trunk end {end!r} is not a connector ({', '.join(CONNECTORS)})")
        if self.speed_gbps or self.breakout != 1:
            raise ValueError(
                "a trunk carries what the modules run, straight: no speed, no breakout"
            )
        return self

    @property
    def optical(self) -> bool:
        """A passive fibre part (cord, splitter, harness or trunk) between optical connectors."""
        return self.kind in ("fibre", "trunk")

    def usable(self, protocol: str, vendors: Iterable[str] | None) -> str:
        """Why the cable cannot serve ``protocol`` between equipment of ``vendors`` ("" if it can)."""
        return unusable(self.vendor, self.protocols, protocol, vendors)

    def part_number_at(self, length_m: float) -> str:
        """The orderable part number of the stocked length, else the family's part number."""
        return self.part_numbers.get(length_m, self.part_number)

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

    def price_range_at(self, length_m: float) -> tuple[float, float, float]:
        """(low, typical, high) price of one cable of stocked length ``length_m``."""
        base = self.price_usd.scaled(1.0)
        if self.price_per_m_usd is None:
            return base
        per_m = self.price_per_m_usd.scaled(length_m)
        return (base[0] + per_m[0], base[1] + per_m[1], base[2] + per_m[2])

    def stocked(self, length_m: float) -> float | None:
        """The shortest stocked length that covers ``length_m`` (None when none does)."""
        for stock in self.lengths_m:
            if stock >= length_m - LENGTH_EPS_M:
                return stock
        return None


class Panel(_Strict):
    """A rack-mount fibre housing (patch panel) with ``slots`` for cassettes or adapter plates."""

    id: str
    name: str
    part_number: str = ""
    vendor: str = ""
    rack_units: int = Field(ge=1, le=8)
    slots: int = Field(ge=1, le=96)
    price_usd: Price
    #: what the housing's size and slot count come from
    source: str = Field(min_length=3)

    @field_validator("price_usd", mode="before")
    @classmethod
    def _sourced(cls, v: object) -> object:
        return need_source(v)


class Cassette(_Strict):
    """What fills a panel slot: an adapter plate of ``ports`` couplers of one ``connector``.

    Each port joins a fibre on its front (the leg from a module) to one on its rear (a trunk
    position, or the other leg of a link inside the same rack).
    """

    id: str
    name: str
    part_number: str = ""
    vendor: str = ""
    connector: str
    ports: int = Field(ge=1, le=48)
    #: panel ids whose slots take it
    fits: tuple[str, ...] = Field(min_length=1)
    price_usd: Price
    source: str = Field(min_length=3)

    @field_validator("price_usd", mode="before")
    @classmethod
    def _sourced(cls, v: object) -> object:
        return need_source(v)

    @model_validator(mode="after")
    def _known_connector(self) -> Cassette:
        if self.connector not in CONNECTORS:
            raise ValueError(f"connector {self.connector!r} is not one of {', '.join(CONNECTORS)}")
        return self
