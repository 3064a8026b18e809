"""The data of media selection: a component's shape, its plans, priced plans, per-link choices.

A *component* is the shape of a group of links tied by multi-port cages (cages and slots, no
names or lengths), plus the protocol the links run and the maker of each cage's equipment, so
alike components share their plans. ``CatalogIndex`` holds the per-catalog lookups, filtered
by protocol and qualification: a part that names a vendor goes only where that vendor's
equipment is, and a part lists the protocols it runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from railplan.catalog import Cable, Cassette, Catalog, Panel, Transceiver, cage_accepts
from railplan.slot_init import slot_init

KIND_ORDER = ("dac", "acc", "aec", "aoc", "fibre", "plant")


@slot_init  # one per link: see railplan/slot_init.py
@dataclass(frozen=True, slots=True)
class MediaChoice:
    """The media of one link: cable part, stocked length, optics at each end, per-link cost."""

    cable: str
    stocked_length_m: float
    transceiver_a: str
    transceiver_b: str
    kind: str
    cost_usd: float
    power_w: float
    #: optical interface both modules run ("400g-dr4"), "" for built-in cables
    interface: str = ""
    fibre: str = ""
    #: links sharing the physical cable (2 on a twin-port cable or a 1:2 splitter)
    links_per_cable: int = 1
    #: through the fibre plant (kind "plant"): the harness or patch cord from each module
    #: connector to its rack's panel; ``cable`` is then the cord a leg would take between panels
    fan_out_a: str = ""
    fan_out_b: str = ""


@dataclass(frozen=True, slots=True)
class Component:
    """The shape of a component, without names or lengths (so alike components share plans)."""

    speed: int
    #: (form factor, ports per cage) of each cage, by first appearance
    cages: tuple[tuple[str, int], ...]
    #: (a cage, a slot, b cage, b slot) of each link
    runs: tuple[tuple[int, int, int, int], ...]
    fibre: str = ""
    #: protocol the links run ("" = any part, whatever its protocols)
    protocol: str = ""
    #: maker of each cage's equipment, aligned with ``cages``; empty = do not check qualification
    vendors: tuple[str, ...] = ()
    #: electrical lane rates of each cage, aligned with ``cages``; empty = any
    lanes: tuple[tuple[int, ...], ...] = ()

    def vendor(self, cage: int) -> str | None:
        return self.vendors[cage] if self.vendors else None

    def vendors_of(self, cages: Iterable[int]) -> list[str] | None:
        return [self.vendors[c] for c in cages] if self.vendors else None

    def lanes_of(self, cage: int) -> tuple[int, ...]:
        return self.lanes[cage] if self.lanes else ()

    def relaxed(self) -> Component:
        """The same shape with every part its cages can drive allowed (to say what the
        protocol and qualification rules cost)."""
        return Component(self.speed, self.cages, self.runs, self.fibre, lanes=self.lanes)


@dataclass(frozen=True, slots=True)
class Instance:
    """One physical cable: candidate parts (cheapest stocking the length wins) and its links."""

    parts: tuple[Cable, ...]
    runs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PlantParts:
    """A component routed through the fibre plant: what each link end and leg is built from.

    ``fan_out[c]`` is the part from cage c's module connectors to its rack's panel (a 1:k
    breakout harness where a connector carries k ports, a straight cord otherwise) and
    ``legs[c]`` how many links share one such part. Between panels a leg rides a trunk
    position or its own patch cord (``carriages``), whichever is cheaper.
    """

    fan_out: tuple[Cable, ...]
    legs: tuple[int, ...]
    #: panel port price (adapter plate share plus housing share), per leg end
    port_usd: float
    panel: Panel
    cassette: Cassette
    carriages: tuple[Cable, ...]
    #: fan-out shares and panel ports of every run together, at the nominal panel run
    fixed_usd: float
    #: metres from a module to its rack's panel the fan-out parts are priced at
    panel_run_m: float
    #: stocked metres a leg between the panels may have (the channel reach less both fan-outs)
    channel_m: float


@dataclass(frozen=True, slots=True)
class Plan:
    kind: str
    label: str
    modules: tuple[Transceiver | None, ...]
    instances: tuple[Instance, ...]
    reach_m: float
    interface: str = ""
    fibre: str = ""
    plant: PlantParts | None = None


@dataclass(frozen=True, slots=True)
class Priced:
    plan: Plan
    #: (part, stocked length) per instance; for a plant, the carriage of one leg
    cables: tuple[tuple[Cable, float], ...]
    cost_usd: float
    power_w: float

    def rank(self) -> tuple[float, float, int, str]:
        return (
            round(self.cost_usd, 2),
            round(self.power_w, 3),
            kind_rank(self.plan.kind),
            self.plan.label,
        )


def shared_interfaces(per_cage: Sequence[Sequence[Transceiver]]) -> list[str]:
    """The interfaces a module in every cage can run, sorted; none if a cage takes no module."""
    if not per_cage or any(not c for c in per_cage):
        return []
    return sorted(set.intersection(*({t.interface for t in c} for c in per_cage)))


def kind_rank(kind: str) -> int:
    return KIND_ORDER.index(kind) if kind in KIND_ORDER else len(KIND_ORDER)


def part_rank(part: Cable, length_m: float) -> tuple[float, float, int, str]:
    """Cheapest first; at equal price and power the equipment vendor's own part, then by id."""
    return (round(part.price_at(length_m), 4), part.power_w.value, 0 if part.vendor else 1, part.id)


class CatalogIndex:
    """Per-catalog lookups, built once (catalogs are immutable)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.builtin = sorted(
            (c for c in catalog.cables.values() if not c.optical), key=lambda c: c.id
        )
        self.cords = sorted(
            (c for c in catalog.cables.values() if c.kind == "fibre"), key=lambda c: c.id
        )
        self.trunks = sorted(
            (c for c in catalog.cables.values() if c.kind == "trunk"), key=lambda c: c.id
        )
        self.modules = sorted(
            catalog.transceivers.values(), key=lambda t: (t.price_usd.value, t.id)
        )
        self.plans: dict[Component, tuple[Plan, ...]] = {}
        #: cheapest plan per (component, plan subset, length class), filled by ``media_plans``
        self.priced: dict[tuple[Component, str, int, int], Priced | None] = {}
        #: per-component decisions and per-link splits, filled by ``media_design``
        self.decided: dict[
            tuple[Component, bool, float],
            tuple[
                tuple[Plan, ...],
                Priced | None,
                tuple[tuple[tuple[str, str], float] | None, str | None],
            ],
        ] = {}
        self.splits: dict[tuple[Component, int], tuple[Priced, list[MediaChoice]]] = {}
        #: plans, stocked lengths and reach limits per (component, plan subset), ``media_plans``
        self.subsets: dict[
            tuple[Component, str], tuple[tuple[Plan, ...], tuple[float, ...], tuple[float, ...]]
        ] = {}

    def modules_for(
        self,
        ff: str,
        ppc: int,
        speed: int,
        fibre: str,
        protocol: str = "",
        vendor: str | None = None,
        lanes: tuple[int, ...] = (),
    ) -> list[Transceiver]:
        vendors = None if vendor is None else [vendor]
        return [
            t
            for t in self.modules
            if t.ports == ppc
            and t.port_speed_gbps == speed
            and cage_accepts(ff, t.form_factor)
            and (not fibre or t.fibre == fibre)
            and t.runs_lanes(lanes)
            and not t.usable(protocol, vendors)
        ]

    def cords_for(
        self,
        fibre: str,
        end_a: str,
        end_b: str,
        breakout: int,
        protocol: str = "",
        vendors: Sequence[str] | None = None,
    ) -> tuple[Cable, ...]:
        """Fibre cords of ``breakout`` legs from connector ``end_a`` to ``end_b``."""
        out = []
        for c in self.cords:
            if c.fibre != fibre or c.breakout != breakout or c.usable(protocol, vendors):
                continue
            if (c.end_a, c.end_b) == (end_a, end_b) or (
                breakout == 1 and (c.end_b, c.end_a) == (end_a, end_b)
            ):
                out.append(c)
        return tuple(out)


_INDEXES: dict[int, CatalogIndex] = {}


def catalog_index(catalog: Catalog) -> CatalogIndex:
    idx = _INDEXES.get(id(catalog))
    if idx is None or idx.catalog is not catalog:
        if len(_INDEXES) > 16:
            _INDEXES.clear()
        idx = CatalogIndex(catalog)
        _INDEXES[id(catalog)] = idx
    return idx
