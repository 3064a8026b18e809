"""The fibre plant of a placed design: patch panels in racks, harnesses, trunks, link pieces.

Links whose media is ``plant`` (see ``plant_plans``) are built here once every device has a
rack and U. Each module connector gets a breakout harness (or a straight cord) to an MPO
adapter panel in its own rack; the panel goes into the rack's free units from the top (the
units ``layout.network_rack_reserved_u`` keeps free first), or into the nearest rack with
room when its own rack is full. Between two racks' panels the legs ride MPO trunks (12
positions each) or one patch cord per leg, whichever costs less for that rack pair; a link
whose two ends share a rack joins both harness legs in one coupler. Every piece is one leg of
one physical item with its own id; the channel (harness + trunk + harness) must stay within
the reach of the modules and of any splitter in it.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from railplan.catalog import Cable, Cassette, Catalog, Panel, Transceiver
from railplan.design import Design, Link, PatchPanel, Placement, PlantSegment
from railplan.design.ends import CageEnd, link_ends, link_protocols
from railplan.errors import InfeasibleError
from railplan.physical.floor import End, Floor
from railplan.physical.media_assign import component_shape, components, design_runs
from railplan.physical.media_plans import MediaChoice, catalog_index, plans_for
from railplan.physical.plant_plans import carriages, panel_options


class PlantReachError(InfeasibleError):
    """A plant channel is longer than its modules allow; ``links`` names the links, ``fibre``
    the fibre they ran on (the layout retries multimode ones on single-mode optics)."""

    def __init__(self, message: str, links: Sequence[str], fibre: str) -> None:
        super().__init__(message)
        self.links = tuple(links)
        self.fibre = fibre


class Placed(Protocol):
    """Where a device sits (``cabling.Position``)."""

    @property
    def rack(self) -> str: ...
    @property
    def u(self) -> int: ...
    @property
    def height_u(self) -> int: ...


@dataclass(frozen=True)
class PlantResult:
    """The built plant: panels and their placements, each plant link's pieces and cable."""

    panels: tuple[PatchPanel, ...]
    placements: tuple[Placement, ...]
    segments: tuple[PlantSegment, ...]
    #: per plant link: (media between the panels, channel length, a-end physical id, its leg)
    cables: dict[str, tuple[str, float, str, str]]
    cost_usd: float
    notes: tuple[str, ...]


@dataclass
class _End:
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
class _Panel:
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
class _Space:
    """Free rack units per rack, taken from the top down."""

    free: dict[str, set[int]]
    order: Callable[[str], list[str]]
    panels: list[_Panel] = field(default_factory=list)
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


def build_plant(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Placed],
    choices: Mapping[str, MediaChoice],
    order: Sequence[Link],
    new_id: Callable[[], str],
) -> PlantResult:
    """Panels, harnesses and trunks for every link whose media is the plant, in ``order``."""
    links = [lk for lk in order if choices[lk.id].kind == "plant"]
    if not links:
        return PlantResult((), (), (), {}, 0.0, ())
    ends = _ends(design, floor, catalog, where, choices, links)
    space = _space(design, floor, where)
    _allocate(ends, links, space, catalog)
    return _assemble(design, floor, catalog, choices, links, ends, space, new_id)


def _ends(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Placed],
    choices: Mapping[str, MediaChoice],
    links: Sequence[Link],
) -> dict[tuple[str, str], _End]:
    cage_ends = link_ends(design, catalog)
    switches = design.switch_by_id()
    out = {}
    for lk in links:
        choice = choices[lk.id]
        a, b = cage_ends[lk.id]
        rows = (
            ("a", a, lk.a_device, lk.a_port, choice.transceiver_a, choice.fan_out_a),
            ("b", b, lk.b_device, lk.b_port, choice.transceiver_b, choice.fan_out_b),
        )
        for side, cage, device, port, module, fan in rows:
            p = where[device]
            sw = switches.get(device)
            name = sw.port_name(port) if sw else design.shape.port_name(port)
            out[(lk.id, side)] = _End(
                lk,
                side,
                cage,
                name,
                p.rack,
                floor.port_height_m(p.u, p.height_u),
                catalog.transceivers[module],
                catalog.cables[fan],
            )
    return out


def _space(design: Design, floor: Floor, where: Mapping[str, Placed]) -> _Space:
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

    return _Space(free, order)


def _allocate(
    ends: Mapping[tuple[str, str], _End], links: Sequence[Link], space: _Space, catalog: Catalog
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
        for end in (a, b):
            end.panel, end.number = _port(space, end.rack, end.fan.end_b, idx, left)


def _port(
    space: _Space, rack: str, connector: str, idx: object, left: Counter[tuple[str, str]]
) -> tuple[int, int]:
    """The next free port for a leg from ``rack``: its own rack's panels, else the nearest.

    A new housing is the smallest that holds the legs the rack still has to land, else the
    densest (ports per unit) that fits the free units.
    """
    need = left[(rack, connector)]
    left[(rack, connector)] -= 1
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
    for candidate in space.order(rack):
        held = space.open.get((candidate, connector))
        if held is not None and space.panels[held].used < space.panels[held].capacity:
            return _use(space, held)
        for panel, cassette in options:
            u = space.take(candidate, panel.rack_units)
            if u is not None:
                space.count[candidate] += 1
                name = f"PNL-{candidate}-{space.count[candidate]}"
                space.panels.append(_Panel(name, panel, cassette, candidate, u))
                space.open[(candidate, connector)] = len(space.panels) - 1
                return _use(space, len(space.panels) - 1)
    raise InfeasibleError(
        f"no rack has a free unit for a patch panel of the fibre plant near rack {rack}; add "
        "network racks (layout.network_rack_count) or raise layout.rack_height_u"
    )


def _use(space: _Space, i: int) -> tuple[int, int]:
    space.panels[i].used += 1
    return i, space.panels[i].used


def _assemble(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    choices: Mapping[str, MediaChoice],
    links: Sequence[Link],
    ends: Mapping[tuple[str, str], _End],
    space: _Space,
    new_id: Callable[[], str],
) -> PlantResult:
    idx = catalog_index(catalog)
    protocols = link_protocols(design, catalog)
    panels = space.panels
    slack = floor.layout.slack_m

    def panel_height(end: _End) -> float:
        return floor.port_height_m(panels[end.panel].u, panels[end.panel].panel.rack_units)

    def to_panel(end: _End) -> float:
        rack = panels[end.panel].rack
        if rack == end.rack:
            return round(abs(end.height_m - panel_height(end)) + slack, 3)
        return floor.route_length_m(End(end.rack, end.height_m), End(rack, panel_height(end)))

    fans = _fan_outs(ends, to_panel, new_id)
    room = {
        lk.id: _limit(ends[(lk.id, "a")], ends[(lk.id, "b")])
        - fans[(lk.id, "a")][3]
        - fans[(lk.id, "b")][3]
        for lk in links
    }
    legs = _carriages(
        links, ends, panels, idx, choices, protocols, panel_height, floor, new_id, room
    )
    segments: list[PlantSegment] = []
    cables: dict[str, tuple[str, float, str, str]] = {}
    for lk in links:
        a, b = ends[(lk.id, "a")], ends[(lk.id, "b")]
        pa, pb = panels[a.panel], panels[b.panel]
        fa, fb = fans[(lk.id, "a")], fans[(lk.id, "b")]
        pieces = [(fa, lk.a_device, a.port, pa.id, f"P{a.number:02d}/front")]
        if (lk.id) in legs:
            carriage = legs[lk.id]
            pieces.append(
                (carriage, pa.id, f"P{a.number:02d}/rear", pb.id, f"P{b.number:02d}/rear")
            )
            far_side = f"P{b.number:02d}/front"
        else:
            far_side = f"P{b.number:02d}/rear"
        pieces.append((fb, pb.id, far_side, lk.b_device, b.port))
        total = 0.0
        for seq, (piece, ad, ap, bd, bp) in enumerate(pieces, start=1):
            phys, part, leg, length = piece
            segments.append(PlantSegment(lk.id, seq, phys, part.id, leg, ad, ap, bd, bp, length))
            total += length
        total = round(total, 3)
        _within_reach(lk, a, b, [p[0][1] for p in pieces], total)
        media = legs[lk.id][1].id if lk.id in legs else fb[1].id
        cables[lk.id] = (media, total, fa[0], fa[2])
    records = tuple(
        PatchPanel(
            p.id,
            p.panel.id,
            p.cassette.id,
            p.rack,
            p.u,
            p.panel.rack_units,
            p.capacity,
            p.used,
            math.ceil(p.used / p.cassette.ports),
        )
        for p in panels
    )
    placements = tuple(Placement(p.id, p.rack, p.u, p.height_u) for p in records)
    cost = _cost(records, catalog, segments)
    notes = _notes(links, records, segments, catalog)
    return PlantResult(records, placements, tuple(segments), cables, cost, notes)


#: a piece of a link: (physical id, part, leg, stocked length)
Piece = tuple[str, Cable, str, float]


def _fan_outs(
    ends: Mapping[tuple[str, str], _End],
    to_panel: Callable[[_End], float],
    new_id: Callable[[], str],
) -> dict[tuple[str, str], Piece]:
    """One harness per module connector (legs by port), one cord per single-port connector.

    Both connectors of a twin-port module get the same stocked length (NVIDIA: the two fibres
    of a twin-port module should be about the same length).
    """
    by_module: dict[tuple[str, int], list[_End]] = defaultdict(list)
    for end in ends.values():
        by_module[end.cage.key].append(end)
    out: dict[tuple[str, str], Piece] = {}
    for key in sorted(by_module):
        members = sorted(by_module[key], key=lambda e: e.cage.slot)
        fan = members[0].fan
        length = max(to_panel(e) for e in members)
        stock = fan.stocked(length)
        if stock is None:
            raise InfeasibleError(
                f"{members[0].cage.name()}: its module is {length:.1f} m from its patch panel, "
                f"beyond the longest {fan.id} ({fan.lengths_m[-1]:g} m); give the rack room "
                "for panels (layout.network_rack_reserved_u) or stock longer harnesses"
            )
        ids: dict[int, str] = {}
        for e in members:
            if fan.breakout > 1:
                phys = ids.setdefault(e.connector, "")
                if not phys:
                    phys = ids[e.connector] = new_id()
                leg = f"A1-B{e.leg + 1}"
            else:
                phys, leg = new_id(), "A1-B1"
            out[(e.link.id, e.side)] = (phys, fan, leg, stock)
    return out


def _carriages(
    links: Sequence[Link],
    ends: Mapping[tuple[str, str], _End],
    panels: Sequence[_Panel],
    idx: object,
    choices: Mapping[str, MediaChoice],
    protocols: Mapping[str, str],
    panel_height: Callable[[_End], float],
    floor: Floor,
    new_id: Callable[[], str],
    room: Mapping[str, float],
) -> dict[str, Piece]:
    """Legs between two racks' panels: trunks or one cord per leg, the cheaper per rack pair,
    each short enough (stocked) to keep every channel of the pair within its reach."""
    bundles: dict[tuple[str, str, str, str, str], list[Link]] = defaultdict(list)
    for lk in links:
        a = ends[(lk.id, "a")]
        ra, rb = panels[a.panel].rack, panels[ends[(lk.id, "b")].panel].rack
        if ra != rb:  # legs of one fibre, connector and protocol share trunks
            key = (min(ra, rb), max(ra, rb), choices[lk.id].fibre, a.fan.end_b, protocols[lk.id])
            bundles[key].append(lk)
    out: dict[str, Piece] = {}
    short: list[tuple[str, float, tuple[str, str], list[Link]]] = []
    for pair in sorted(bundles):
        members = bundles[pair]
        first = ends[(members[0].id, "a")]
        length = max(
            floor.route_length_m(
                End(panels[ends[(lk.id, "a")].panel].rack, panel_height(ends[(lk.id, "a")])),
                End(panels[ends[(lk.id, "b")].panel].rack, panel_height(ends[(lk.id, "b")])),
            )
            for lk in members
        )
        vendors = sorted(
            {ends[(lk.id, s)].cage.vendor for lk in members for s in ("a", "b")} - {""}
        )
        parts = carriages(
            idx,  # type: ignore[arg-type]
            choices[members[0].id].fibre,
            first.fan.end_b,
            protocols[members[0].id],
            vendors or None,
        )
        best = _cheapest_bundle(parts, len(members), length, min(room[lk.id] for lk in members))
        if best is None:
            short.append((choices[members[0].id].fibre, length, pair[:2], members))
            continue
        part, stock = best
        per = part.links if part.kind == "trunk" else 1
        phys = ""
        for i, lk in enumerate(members):
            if i % per == 0:
                phys = new_id()
            pos = i % per + 1
            out[lk.id] = (phys, part, f"A{pos}-B{pos}", stock)
    if short:
        fibre, length, (ra, rb), members = short[0]
        failing = [lk.id for entry in short for lk in entry[3]]
        raise PlantReachError(
            f"no trunk or patch cord reaches {length:.1f} m between the panels of racks {ra} "
            f"and {rb} within the reach of their modules ({len(members)} leg(s) of the fibre "
            f"plant, {len(failing)} in all); place the switches closer or add a longer-reach "
            "optic to the catalog",
            failing,
            fibre,
        )
    return out


def _cheapest_bundle(
    parts: Sequence[Cable], legs: int, length_m: float, max_stock_m: float
) -> tuple[Cable, float] | None:
    best: tuple[tuple[float, int, str], Cable, float] | None = None
    for part in parts:
        stock = part.stocked(length_m)
        if stock is None or stock > max_stock_m + 1e-6:
            continue
        count = math.ceil(legs / part.links) if part.kind == "trunk" else legs
        rank = (round(count * part.price_at(stock), 2), 0 if part.kind == "trunk" else 1, part.id)
        if best is None or rank < best[0]:
            best = (rank, part, stock)
    return None if best is None else (best[1], best[2])


def _limit(a: _End, b: _End) -> float:
    """The longest channel the modules and any splitter at the two ends allow."""
    limit = min(a.module.reach_m.value, b.module.reach_m.value)
    split = [e.fan.reach_m.value for e in (a, b) if e.fan.breakout > 1]
    return min([limit, *split])


def _within_reach(lk: Link, a: _End, b: _End, parts: Sequence[Cable], channel_m: float) -> None:
    limit = _limit(a, b)
    if channel_m > limit + 1e-6:
        raise PlantReachError(
            f"link {lk.id} ({lk.a_device} to {lk.b_device}): its fibre-plant channel is "
            f"{channel_m:.1f} m (harness, trunk, harness), beyond the {limit:g} m its modules "
            f"{a.module.id} / {b.module.id} and splitters allow; place the switches closer",
            [lk.id],
            a.module.fibre,
        )


def _cost(
    panels: Sequence[PatchPanel], catalog: Catalog, segments: Sequence[PlantSegment]
) -> float:
    cost = 0.0
    for p in panels:
        cost += catalog.panels[p.part].price_usd.value
        cost += p.cassettes * catalog.cassettes[p.cassette].price_usd.value
    seen: dict[str, float] = {}
    for s in segments:
        seen[s.physical] = catalog.cables[s.part].price_at(s.length_m)
    return round(cost + sum(seen.values()), 2)


def _notes(
    links: Sequence[Link],
    panels: Sequence[PatchPanel],
    segments: Sequence[PlantSegment],
    catalog: Catalog,
) -> tuple[str, ...]:
    items: dict[str, str] = {}
    for s in segments:
        items[s.physical] = catalog.cables[s.part].kind
    trunks = sum(1 for k in items.values() if k == "trunk")
    racks = len({p.rack for p in panels})
    units = sum(p.height_u for p in panels)
    return (
        f"fibre plant: {len(links)} link(s) through {len(panels)} patch panel(s) ({units} U) in "
        f"{racks} rack(s), {trunks} trunk(s) and {len(items) - trunks} harness(es) and cord(s)",
    )


def required_panel_units(design: Design, catalog: Catalog) -> int:
    """Rack units of patch panels the links that can only go through the fibre plant need.

    Counted before placement from the wiring alone: a component of cage-tied links with no
    point-to-point plan at any length needs a panel port per link end (both ends in one rack
    share one, so this is an upper bound), at the densest catalog housing's ports per unit.
    """
    runs = design_runs(design, catalog)
    idx = catalog_index(catalog)
    ends = 0
    connector = ""
    for members in components(runs):
        comp = component_shape(runs, members, "")
        plans = plans_for(idx, comp)
        if plans and all(p.plant is not None for p in plans):
            ends += 2 * len(members)
            fans = plans[0].plant.fan_out if plans[0].plant else ()
            connector = connector or (fans[0].end_b if fans else "")
    if not ends:
        return 0
    options = panel_options(idx, connector)
    if not options:
        return 0
    density = max(p.slots * c.ports / p.rack_units for p, c in options)
    return math.ceil(ends / density)
