"""Cables of a placed design: routed length per link, media cage by cage, labels and colours."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from railplan.catalog import Catalog
from railplan.design import Cable, Design, Link, PatchPanel, Placement, PlantSegment
from railplan.physical import media
from railplan.physical.floor import End, Floor, node_slots, switch_units
from railplan.physical.labels import PortNames, colour_cached, end_labeller, short_names
from railplan.physical.physical_ids import direct_ids
from railplan.physical.plant import PlantReachError, PlantResult, build_plant, shift_ids
from railplan.spec.labels import parse_label_template


@dataclass(frozen=True)
class Cabling:
    """The cables of a design, what their media cost and draw, and each link's routed length.

    Links through the fibre plant add its patch panels (with their placements) and pieces.
    """

    cables: tuple[Cable, ...]
    notes: tuple[str, ...]
    cost_usd: float
    power_w: float
    routed_m: dict[str, float]
    panels: tuple[PatchPanel, ...] = ()
    panel_placements: tuple[Placement, ...] = ()
    segments: tuple[PlantSegment, ...] = ()


@dataclass(frozen=True)
class Position:
    """Where a device sits: rack id, lowest U and height in U."""

    rack: str
    u: int
    height_u: int


def positions(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    switch_rack: Mapping[str, str],
    switch_u: Mapping[str, int],
) -> dict[str, Position]:
    """Rack and U of every node (from the layout) and switch (from a placement)."""
    out = {
        node: Position(rack, u, floor.layout.node_height_u)
        for node, (rack, u) in node_slots(design, floor).items()
    }
    for sw in design.switches:
        out[sw.id] = Position(switch_rack[sw.id], switch_u[sw.id], switch_units(sw, catalog))
    return out


def placements_of(where: Mapping[str, Position]) -> tuple[Placement, ...]:
    """Placement records sorted by rack, then from the top of the rack down."""
    rows = [Placement(dev, p.rack, p.u, p.height_u) for dev, p in where.items()]
    return tuple(sorted(rows, key=lambda p: (p.rack, -p.u, p.device)))


def routed_lengths(design: Design, floor: Floor, where: Mapping[str, Position]) -> dict[str, float]:
    """Routed length of every link (metres): up, along the trays, down, plus slack; worked out
    over arrays of the links' ends (``Floor.route_lengths_m``)."""
    spots = [End(p.rack, floor.port_height_m(p.u, p.height_u)) for p in where.values()]
    index = {dev: i for i, dev in enumerate(where)}
    links = design.links
    a = np.fromiter(map(index.__getitem__, map(_A_DEVICE, links)), np.intp, len(links))
    b = np.fromiter(map(index.__getitem__, map(_B_DEVICE, links)), np.intp, len(links))
    return dict(zip(map(_LINK_ID, links), floor.route_lengths_m(spots, a, b), strict=True))


_A_DEVICE, _B_DEVICE, _LINK_ID = attrgetter("a_device"), attrgetter("b_device"), attrgetter("id")


def technician_order(design: Design, where: Mapping[str, Position], floor: Floor) -> list[Link]:
    """Links in the order a technician cables them: by the a end's rack (row, position),
    from the top of the rack down, then device and port."""
    rack = floor.rack_by_id
    spot: dict[str, tuple[int, int, int]] = {}  # (row, position, -u) of every device
    for dev, p in where.items():
        r = rack[p.rack]
        spot[dev] = (r.row, r.position, -p.u)

    def key(link: Link) -> tuple[tuple[int, int, int], str, int]:
        return (spot[link.a_device], link.a_device, link.a_port)

    return sorted(design.links, key=key)


def build_cables(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Position],
    lengths: Mapping[str, float] | None = None,
) -> Cabling:
    """One Cable per link: media chosen per cage component at the routed length, labels per the
    layout's template, colour by rail or plane; the fibre plant where media need it; with the
    media's cost, power and notes. Physical cables are numbered ``P00001`` on in technician
    order, the point-to-point ones first, then the plant's harnesses, trunks and cords.

    Raises InfeasibleError naming the link and its length when no catalog part reaches it.
    """
    routed = dict(lengths) if lengths is not None else routed_lengths(design, floor, where)
    order = technician_order(design, where, floor)
    assignment, physical, plant = _media_and_plant(design, floor, catalog, where, routed, order)
    names = short_names(design)
    switches = design.switch_by_id()
    template = parse_label_template(floor.layout.label_template)  # fields only, bounded widths
    by = floor.layout.colour_by
    port_of = PortNames(design, switches)
    colours: dict[tuple[int, int, str], str] = {}
    # the template's text is the str.format form of its pieces (fields only, no conversions or
    # attribute access: parse_label_template), so format_map renders what LabelTemplate.render
    # does; one dict of the fields is refilled for every end
    render = template.text.format_map
    values: dict[str, object] = {}
    # a template of the ends' own fields (the default) is read from per-device label tables
    end_label = end_labeller(template, names, where, port_of)
    cables = []
    for n, link in enumerate(order, start=1):
        choice = assignment.choices[link.id]
        cable_id = f"C{n:05d}"
        if end_label is not None:
            labels = [end_label(link.a_device, link.a_port), end_label(link.b_device, link.b_port)]
        else:
            values["cable"], values["link"] = cable_id, link.id
            values["plane"], values["rail"] = link.plane, link.rail
            labels = []
            for dev, port in ((link.a_device, link.a_port), (link.b_device, link.b_port)):
                p = where[dev]
                values["rack"], values["u"] = p.rack, p.u
                values["device"], values["port"] = names[dev], port_of(dev, port)
                labels.append(render(values))
        if link.id in plant.cables:
            media_id, length, phys, leg = plant.cables[link.id]
        else:
            media_id, length = choice.cable, float(choice.stocked_length_m)
            phys, leg = physical[link.id]
        colour = colour_cached(colours, link, switches, by)
        # positional, in Cable's field order: id, link, media, optics a and b, length, labels
        # a and b, colour, physical id, leg
        cables.append(
            Cable(
                cable_id,
                link.id,
                media_id,
                choice.transceiver_a,
                choice.transceiver_b,
                length,
                labels[0],
                labels[1],
                colour,
                phys,
                leg,
            )
        )
    return Cabling(
        cables=tuple(cables),
        notes=assignment.notes + plant.notes,
        cost_usd=assignment.cost_usd,
        power_w=assignment.power_w,
        routed_m=routed,
        panels=plant.panels,
        panel_placements=plant.placements,
        segments=plant.segments,
    )


def _media_and_plant(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Position],
    routed: Mapping[str, float],
    order: list[Link],
) -> tuple[media.Assignment, dict[str, tuple[str, str]], PlantResult]:
    """Media, physical ids and the fibre plant. Plant channels that come out longer than
    their modules reach (their panels stand further apart than their switches, or the next
    stocked trunk is too long) are retried: multimode ones on single-mode optics, then
    single-mode ones on point-to-point media, where their cages allow any. Each retry moves
    more links, so the loop ends; a channel nothing else can carry is refused.

    Physical ids are drawn once the plant stands: the point-to-point cables take P00001 on in
    ``order``, the plant's pieces the numbers after them (the plant numbers its own from 1
    while it is tried, then moves them up)."""
    fibre: dict[str, str] = {}
    direct: set[str] = set()
    planned: set[str] | None = None  # the links the first assignment sent through the plant
    limit = len(design.links) * 4 + 10
    while True:
        assignment = media.assign_design(design, catalog, routed, fibre, direct)
        if planned is None:
            planned = {k for k, c in assignment.choices.items() if c.kind == "plant"}
        try:
            plant = build_plant(
                design, floor, catalog, where, assignment.choices, order, _numbering(limit)
            )
        except PlantReachError as exc:
            if exc.fibre == "mmf" and any(link not in fibre for link in exc.links):
                fibre.update({link: "smf" for link in exc.links})
            elif any(link not in direct for link in exc.links):
                direct.update(exc.links)
            else:
                raise
            continue
        break
    ends = media.link_ends(design, catalog)
    numbers = _numbering(limit)
    physical, cables = direct_ids(catalog, order, ends, assignment.choices, numbers)
    plant = shift_ids(plant, cables)
    notes = _retry_notes(fibre, direct, planned, assignment.choices)
    if notes:
        plant = dataclasses.replace(plant, notes=(*plant.notes, *notes))
    return assignment, physical, plant


def _retry_notes(
    fibre: Mapping[str, str],
    direct: set[str],
    planned: set[str],
    choices: Mapping[str, media.MediaChoice],
) -> tuple[str, ...]:
    """What the retries of ``_media_and_plant`` changed, in sentences."""
    out = []
    if fibre:
        out.append(
            f"{len(fibre)} plant link(s) moved to single-mode optics: their multimode "
            "channel through the panels was longer than the optics reach"
        )
    failed = sorted(link for link in direct if choices[link].kind != "plant")
    if failed:
        moved = sum(1 for link in planned if choices[link].kind != "plant")
        shared = (
            f"; {moved - len(failed)} more share twin-port modules with them"
            if moved > len(failed)
            else ""
        )
        out.append(
            f"{len(failed)} link(s) kept off the fibre plant on point-to-point "
            f"{choices[failed[0]].cable} (e.g. link {failed[0]}): the next stocked trunk or cord "
            "between their panels would have made the channel longer than their modules reach"
            + shared
        )
    return tuple(out)


def _numbering(limit: int) -> Callable[[], str]:
    """Physical cable ids P00001, P00002, ... in the order asked (each drawn by a call into
    C: ``next`` on a ``map`` of the format over the numbers)."""
    return functools.partial(next, map("P{:05d}".format, range(1, limit)))


def transceivers_per_cage(design: Design, catalog: Catalog) -> dict[str, int]:
    """Transceivers by part id counted once per cage (a twin-port module serves two links)."""
    ends = media.link_ends(design, catalog)
    seen: dict[tuple[str, int], str] = {}
    for cable in design.cables:
        a, b = ends[cable.link_id]
        for end, part in ((a, cable.transceiver_a), (b, cable.transceiver_b)):
            if part:
                seen.setdefault(end.key, part)
    counts: dict[str, int] = {}
    for part in seen.values():
        counts[part] = counts.get(part, 0) + 1
    return dict(sorted(counts.items()))
