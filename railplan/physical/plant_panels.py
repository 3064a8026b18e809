"""Panel ports of the fibre plant: free rack units, housings chosen and filled rack by rack.

A leg from a module connector lands on an MPO adapter panel in its own rack; a rack without
room sends it to the nearest rack that has some (network racks first). A new housing is the
smallest that holds the legs its rack still has to land, else the densest that fits.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from railplan.catalog import Cable, Cassette, Catalog, Panel, Transceiver
from railplan.design import Design, Link
from railplan.design.ends import CageEnd
from railplan.errors import InfeasibleError
from railplan.physical.floor import Floor
from railplan.physical.media_design import shape_of, structure
from railplan.physical.media_plans import catalog_index, plans_for
from railplan.physical.plant_plans import panel_options


class Placed(Protocol):
    """Where a device sits (``cabling.Position``)."""

    @property
    def rack(self) -> str: ...
    @property
    def u(self) -> int: ...
    @property
    def height_u(self) -> int: ...


@dataclass(slots=True)  # one per plant link end: thousands, built and read in loops
class PlantEnd:
    """One end of a plant link: where its module is and what fans it out to a panel."""

    link: Link
    side: str
    cage: CageEnd
    port: str
    rack: str
    height_m: float
    module: Transceiver
    fan: Cable
    #: the panel port (panel index into the result, port number) the leg lands on
    panel: int = -1
    number: int = 0

    @property
    def connector(self) -> int:
        return self.cage.slot // self.module.ports_per_connector

    @property
    def leg(self) -> int:
        return self.cage.slot % self.module.ports_per_connector


@dataclass
class PanelSlot:
    id: str
    panel: Panel
    cassette: Cassette
    rack: str
    u: int
    used: int = 0

    @property
    def capacity(self) -> int:
        return self.panel.slots * self.cassette.ports


@dataclass
class PanelSpace:
    """Free rack units per rack, taken from the top down."""

    free: dict[str, set[int]]
    order: Callable[[str], list[str]]
    panels: list[PanelSlot] = field(default_factory=list)
    #: the panel of each (rack, connector) that takes the next leg
    open: dict[tuple[str, str], int] = field(default_factory=dict)
    count: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def take(self, rack: str, height: int) -> int | None:
        units = self.free.get(rack, set())
        for top in sorted(units, reverse=True):
            block = set(range(top - height + 1, top + 1))
            if block <= units:
                units -= block
                return top - height + 1
        return None


def panel_space(design: Design, floor: Floor, where: Mapping[str, Placed]) -> PanelSpace:
    """Free units of every rack; racks nearest a given rack first (network racks before others)."""
    free = {r.id: set(range(1, r.height_u + 1)) for r in floor.racks}
    for p in where.values():
        free[p.rack] -= set(range(p.u, p.u + p.height_u))
    network = set(floor.network_racks)
    ids = [r.id for r in floor.racks]

    orders: dict[str, list[str]] = {}

    def order(rack: str) -> list[str]:
        hit = orders.get(rack)
        if hit is None:
            distance = dict(zip(ids, floor.tray_distances_m(rack, ids), strict=True))
            near = sorted(ids, key=lambda o: (0 if o == rack else 1, distance[o], o))
            hit = orders[rack] = [r for r in near if r == rack or r in network] + [
                r for r in near if r != rack and r not in network
            ]
        return hit

    return PanelSpace(free, order)


def allocate_ports(
    ends: Mapping[tuple[str, str], PlantEnd],
    links: Sequence[Link],
    space: PanelSpace,
    catalog: Catalog,
) -> None:
    """Give every leg end a panel port: its own rack's panel, else the nearest with room."""
    idx = catalog_index(catalog)
    left: Counter[tuple[str, str]] = Counter()  # legs each rack still has to land
    for lk in links:
        a, b = ends[(lk.id, "a")], ends[(lk.id, "b")]
        left[(a.rack, a.fan.end_b)] += 1
        if a.rack != b.rack:
            left[(b.rack, b.fan.end_b)] += 1
    for lk in links:
        a, b = ends[(lk.id, "a")], ends[(lk.id, "b")]
        connector = a.fan.end_b
        if a.rack == b.rack:
            panel, number = _port(space, a.rack, connector, idx, left)
            a.panel = b.panel = panel
            a.number = b.number = number
            continue
        a.panel, a.number = _port(space, a.rack, connector, idx, left)
        # a b leg that would land in the rack a's leg landed in joins it in a's coupler
        join = (space.panels[a.panel].rack, a.panel, a.number)
        b.panel, b.number = _port(space, b.rack, b.fan.end_b, idx, left, join)


def _port(
    space: PanelSpace,
    rack: str,
    connector: str,
    idx: object,
    left: Counter[tuple[str, str]],
    join: tuple[str, int, int] | None = None,
) -> tuple[int, int]:
    """The next free port for a leg from ``rack``: its own rack's panels, else the nearest.

    A new housing is the smallest that holds the legs the rack still has to land, else the
    densest (ports per unit) that fits the free units. ``join`` (rack, panel, port) is the
    coupler of the link's other leg: a leg that would land in that rack shares it.
    """
    need = left[(rack, connector)]
    left[(rack, connector)] -= 1
    if join is not None and join[0] == rack:
        return join[1], join[2]
    own = space.open.get((rack, connector))
    if own is not None and space.panels[own].used < space.panels[own].capacity:
        return _use(space, own)
    options = panel_options(idx, connector)  # type: ignore[arg-type]
    if not options:
        raise InfeasibleError(
            f"no catalog patch panel takes {connector} legs; add a panel and an adapter plate "
            "for it to catalogs/fibre-plant.yaml"
        )
    holds = sorted(
        (pc for pc in options if pc[0].slots * pc[1].ports >= need),
        key=lambda pc: (pc[0].rack_units, pc[0].price_usd.value, pc[0].id),
    )
    densest = sorted(
        options,
        key=lambda pc: (-pc[0].slots * pc[1].ports / pc[0].rack_units, pc[0].rack_units, pc[0].id),
    )
    options = holds[:1] + [pc for pc in densest if pc not in holds[:1]]
    for candidate in _nearest_first(space, rack):
        if join is not None and join[0] == candidate:
            return join[1], join[2]
        held = space.open.get((candidate, connector))
        if held is not None and space.panels[held].used < space.panels[held].capacity:
            return _use(space, held)
        for panel, cassette in options:
            u = space.take(candidate, panel.rack_units)
            if u is not None:
                space.count[candidate] += 1
                name = f"PNL-{candidate}-{space.count[candidate]}"
                space.panels.append(PanelSlot(name, panel, cassette, candidate, u))
                space.open[(candidate, connector)] = len(space.panels) - 1
                return _use(space, len(space.panels) - 1)
    raise InfeasibleError(
        f"no rack has a free unit for a patch panel of the fibre plant near rack {rack}; add "
        "network racks (layout.network_rack_count) or raise layout.rack_height_u"
    )


def _nearest_first(space: PanelSpace, rack: str) -> Iterator[str]:
    """The leg's own rack, then the others nearest first (``PanelSpace.order``), worked out
    only when the own rack has no room (its distances to every rack are a table row)."""
    yield rack
    yield from (other for other in space.order(rack) if other != rack)


def _use(space: PanelSpace, i: int) -> tuple[int, int]:
    space.panels[i].used += 1
    return i, space.panels[i].used


def required_panel_units(design: Design, catalog: Catalog) -> int:
    """Rack units of patch panels the links that can only go through the fibre plant need.

    Counted before placement from the wiring alone: a component of cage-tied links with no
    point-to-point plan at any length needs a panel port per link end (both ends in one rack
    share one, so this is an upper bound), at the densest catalog housing's ports per unit.
    """
    struct = structure(design, catalog)
    idx = catalog_index(catalog)
    ends = 0
    connector = ""
    # alike components share a shape number, numbered as they first come: each shape is
    # asked once, for all its links, in the order its first component comes
    for g, links in zip(struct.shape_first.tolist(), struct.shape_links.tolist(), strict=True):
        comp = shape_of(struct, g)
        plans = plans_for(idx, comp)
        if plans and all(p.plant is not None for p in plans):
            ends += 2 * links
            fans = plans[0].plant.fan_out if plans[0].plant else ()
            connector = connector or (fans[0].end_b if fans else "")
    if not ends:
        return 0
    options = panel_options(idx, connector)
    if not options:
        return 0
    density = max(p.slots * c.ports / p.rack_units for p, c in options)
    return math.ceil(ends / density)
