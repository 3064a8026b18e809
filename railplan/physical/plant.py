"""The fibre plant of a placed design: patch panels in racks, harnesses, trunks, link pieces.

Links whose media is ``plant`` (see ``plant_plans``) are built here once every device has a
rack and U. Each module connector gets a breakout harness (or a straight cord) to an MPO
adapter panel in its own rack; the panel goes into the rack's free units from the top (the
units ``layout.network_rack_reserved_u`` keeps free first), or into the nearest rack with
room when its own rack is full. Between two racks' panels the legs ride MPO trunks (12
positions each) or one patch cord per leg, whichever costs less for that rack pair; a link
whose two ends share a rack joins both harness legs in one coupler. Every piece is one leg of
one physical item with its own id; the channel (harness + trunk + harness) must stay within
the reach of the modules and of any splitter in it. ``plant_panels`` places the panels and
gives each leg its port.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from typing import NoReturn

from railplan.catalog import Cable, Catalog
from railplan.design import Design, Link, PatchPanel, Placement, PlantSegment
from railplan.design.ends import link_ends, link_protocols
from railplan.design.port_names import PortNames
from railplan.errors import InfeasibleError
from railplan.physical.floor import End, Floor
from railplan.physical.media_plans import MediaChoice, catalog_index
from railplan.physical.plant_panels import (
    PanelSlot,
    PanelSpace,
    Placed,
    PlantEnd,
    allocate_ports,
    panel_space,
)
from railplan.physical.plant_plans import carriages


class PlantReachError(InfeasibleError):
    """A plant channel is longer than its modules allow; ``links`` names the links, ``fibre``
    the fibre they ran on (the layout retries multimode ones on single-mode optics)."""

    def __init__(self, message: str, links: Sequence[str], fibre: str) -> None:
        super().__init__(message)
        self.links = tuple(links)
        self.fibre = fibre


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


def build_plant(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Placed],
    choices: Mapping[str, MediaChoice],
    order: Sequence[Link],
    new_id: Callable[[], str],
    *,
    through: Sequence[Link] | None = None,
) -> PlantResult:
    """Panels, harnesses and trunks for every link whose media is the plant, in ``order``;
    ``through``: those links in that order when the caller has them (``plant_links``)."""
    links = list(through) if through is not None else _through(choices, order)
    if not links:
        return PlantResult((), (), (), {}, 0.0, ())
    ends = _ends(design, floor, catalog, where, choices, links)
    space = panel_space(design, floor, where)
    allocate_ports(ends, links, space, catalog)
    return _assemble(design, floor, catalog, choices, links, ends, space, new_id)


_ID, _KIND, _PHYSICAL = attrgetter("id"), attrgetter("kind"), attrgetter("physical")


def plant_ids(choices: Mapping[str, MediaChoice]) -> set[str]:
    """The ids of the links whose media is the plant (filtered in C: alike choices are one
    object, so their kinds are read from a few places)."""
    return set(compress(choices, map("plant".__eq__, map(_KIND, choices.values()))))


def _through(choices: Mapping[str, MediaChoice], order: Sequence[Link]) -> list[Link]:
    """The links whose choice is the plant, in ``order`` (each link's id tested in C, rather
    than its choice looked up in the big mapping)."""
    through = plant_ids(choices)
    return list(compress(order, map(through.__contains__, map(_ID, order))))


def _ends(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Placed],
    choices: Mapping[str, MediaChoice],
    links: Sequence[Link],
) -> dict[tuple[str, str], PlantEnd]:
    cage_ends = link_ends(design, catalog)
    port_name = PortNames(design, design.switch_by_id())
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
            name = port_name(device, port)
            out[(lk.id, side)] = PlantEnd(
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


def _assemble(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    choices: Mapping[str, MediaChoice],
    links: Sequence[Link],
    ends: Mapping[tuple[str, str], PlantEnd],
    space: PanelSpace,
    new_id: Callable[[], str],
) -> PlantResult:
    idx = catalog_index(catalog)
    protocols = link_protocols(design, catalog)
    panels = space.panels
    slack = floor.layout.slack_m

    heights = [floor.port_height_m(p.u, p.panel.rack_units) for p in panels]

    # a harness's run depends only on where its module sits and on its panel (a switch's
    # modules share a few heights), a channel's limit only on its modules and fan-outs (a
    # plant has few): each is worked out once
    @functools.cache
    def run(rack: str, height_m: float, panel: int) -> float:
        if panels[panel].rack == rack:
            return round(abs(height_m - heights[panel]) + slack, 3)
        return floor.route_length_m(End(rack, height_m), End(panels[panel].rack, heights[panel]))

    def to_panel(end: PlantEnd) -> float:
        return run(end.rack, end.height_m, end.panel)

    limits: dict[tuple[str, str, str, str], float] = {}

    def limit(a: PlantEnd, b: PlantEnd) -> float:
        key = (a.module.id, b.module.id, a.fan.id, b.fan.id)
        if key not in limits:
            limits[key] = _limit(a, b)
        return limits[key]

    fans = _fan_outs(ends, to_panel, new_id)
    room = {
        lk.id: limit(ends[(lk.id, "a")], ends[(lk.id, "b")])
        - fans[(lk.id, "a")][3]
        - fans[(lk.id, "b")][3]
        for lk in links
    }
    legs = _carriages(links, ends, panels, idx, choices, protocols, heights, floor, new_id, room)
    segments: list[PlantSegment] = []
    cables: dict[str, tuple[str, float, str, str]] = {}
    beyond: list[tuple[Link, PlantEnd, PlantEnd, float]] = []
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
        if total > limit(a, b) + 1e-6:
            beyond.append((lk, a, b, total))
        media = legs[lk.id][1].id if lk.id in legs else fb[1].id
        cables[lk.id] = (media, total, fa[0], fa[2])
    if beyond:
        _beyond_reach(beyond)
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


def shift_ids(plant: PlantResult, offset: int) -> PlantResult:
    """The plant with every physical id ``P<n>`` numbered ``P<n + offset>`` (the plant is
    built numbering its pieces from 1; the point-to-point cables take the numbers before)."""
    if not offset or not plant.segments:
        return plant

    def moved(phys: str) -> str:
        return f"P{int(phys[1:]) + offset:05d}"

    ids = {phys: moved(phys) for phys in dict.fromkeys(map(_PHYSICAL, plant.segments))}
    # positional, in PlantSegment's field order (dataclasses.replace costs 10x per piece)
    segments = tuple(
        PlantSegment(
            s.link_id,
            s.seq,
            ids[s.physical],
            s.part,
            s.leg,
            s.a_device,
            s.a_port,
            s.b_device,
            s.b_port,
            s.length_m,
        )
        for s in plant.segments
    )
    cables = {
        link: (media, length, ids[phys], leg)
        for link, (media, length, phys, leg) in plant.cables.items()
    }
    return dataclasses.replace(plant, segments=segments, cables=cables)


#: a piece of a link: (physical id, part, leg, stocked length)
Piece = tuple[str, Cable, str, float]


def _fan_outs(
    ends: Mapping[tuple[str, str], PlantEnd],
    to_panel: Callable[[PlantEnd], float],
    new_id: Callable[[], str],
) -> dict[tuple[str, str], Piece]:
    """One harness per module connector (legs by port), one cord per single-port connector.

    Both connectors of a twin-port module get the same stocked length (NVIDIA: the two fibres
    of a twin-port module should be about the same length).
    """
    by_module: dict[tuple[str, int], list[PlantEnd]] = defaultdict(list)
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
    ends: Mapping[tuple[str, str], PlantEnd],
    panels: Sequence[PanelSlot],
    idx: object,
    choices: Mapping[str, MediaChoice],
    protocols: Mapping[str, str],
    heights: Sequence[float],
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

    # a leg's run depends only on its two panels, and the parts a bundle may ride only on its
    # fibre, connector, protocol and makers: each is worked out once (most legs share panels,
    # most bundles share all four)
    @functools.cache
    def between(a: int, b: int) -> float:
        return floor.route_length_m(
            End(panels[a].rack, heights[a]), End(panels[b].rack, heights[b])
        )

    def span(lk: Link) -> float:
        return between(ends[(lk.id, "a")].panel, ends[(lk.id, "b")].panel)

    rides = functools.cache(
        lambda fibre, connector, protocol, vendors: carriages(
            idx,  # type: ignore[arg-type]
            fibre,
            connector,
            protocol,
            list(vendors) or None,
        )
    )

    for pair in sorted(bundles):
        members = bundles[pair]
        first = ends[(members[0].id, "a")]
        length = max(map(span, members))
        vendors = sorted(
            {ends[(lk.id, s)].cage.vendor for lk in members for s in ("a", "b")} - {""}
        )
        parts = rides(
            choices[members[0].id].fibre, first.fan.end_b, protocols[members[0].id], tuple(vendors)
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
        a, b = ends[(members[0].id, "a")], ends[(members[0].id, "b")]
        raise PlantReachError(
            f"no stocked trunk or patch cord spans the {length:.1f} m between the panels of racks "
            f"{ra} and {rb} and keeps the channel (harness, trunk, harness) within the "
            f"{_limit(a, b):g} m its modules {a.module.id} / {b.module.id} and splitters allow "
            f"({len(members)} leg(s) of the fibre plant, {len(failing)} in all); place the "
            "switches closer or add a longer-reach optic to the catalog",
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


def _limit(a: PlantEnd, b: PlantEnd) -> float:
    """The longest channel the modules and any splitter at the two ends allow."""
    limit = min(a.module.reach_m.value, b.module.reach_m.value)
    split = [e.fan.reach_m.value for e in (a, b) if e.fan.breakout > 1]
    return min([limit, *split])


def _beyond_reach(beyond: Sequence[tuple[Link, PlantEnd, PlantEnd, float]]) -> NoReturn:
    """Refuse the channels longer than their modules and splitters allow, naming the first."""
    lk, a, b, channel_m = beyond[0]
    raise PlantReachError(
        f"link {lk.id} ({lk.a_device} to {lk.b_device}): its fibre-plant channel is "
        f"{channel_m:.1f} m (harness, trunk, harness), beyond the {_limit(a, b):g} m its modules "
        f"{a.module.id} / {b.module.id} and splitters allow ({len(beyond)} such link(s)); "
        "place the switches closer",
        [entry[0].id for entry in beyond],
        a.module.fibre,
    )


def _cost(
    panels: Sequence[PatchPanel], catalog: Catalog, segments: Sequence[PlantSegment]
) -> float:
    cost = 0.0
    for p in panels:
        cost += catalog.panels[p.part].price_usd.value
        cost += p.cassettes * catalog.cassettes[p.cassette].price_usd.value
    # each physical item's price (its last piece's, as the items are met), priced once per
    # part and length: the pieces of a plant come in a few stocked lengths
    price = functools.cache(lambda part, length_m: catalog.cables[part].price_at(length_m))
    seen: dict[str, float] = {}
    for s in segments:
        seen[s.physical] = price(s.part, s.length_m)
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
