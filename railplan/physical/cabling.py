"""Cables of a placed design: routed length per link, media cage by cage, labels and colours."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain, count, islice
from operator import attrgetter

import numpy as np

from railplan.catalog import Catalog
from railplan.design import Cable, Design, Link, PatchPanel, Placement, PlantSegment
from railplan.design.ends import every_end
from railplan.design.link_table import LinkTable, link_columns, link_table
from railplan.design.port_names import PortNames
from railplan.physical import media
from railplan.physical.floor import End, Floor, node_slots, switch_units
from railplan.physical.labels import colours_at, end_labeller, short_names
from railplan.physical.media_policy import OPTICS, optics_demand
from railplan.physical.physical_ids import direct_ids
from railplan.physical.plant import (
    PlantReachError,
    PlantResult,
    build_plant,
    plant_ids,
    shift_ids,
)
from railplan.spec.labels import LabelTemplate, parse_label_template


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
    over arrays of the links' ends (``Floor.route_lengths_m``), each device's spot looked up
    once (``link_columns``) and read at its links' ends by index."""
    spots = [End(p.rack, floor.port_height_m(p.u, p.height_u)) for p in where.values()]
    index = {dev: i for i, dev in enumerate(where)}
    columns = link_columns(design.links)
    # the devices run as the links name them, a ends first: a missing one fails as per link
    at = np.fromiter(map(index.__getitem__, columns.devices), np.intp, len(columns.devices))
    lengths = floor.route_lengths_m(spots, at[columns.a_device], at[columns.b_device])
    return dict(zip(columns.ids, lengths, strict=True))


_LINK_ID = attrgetter("id")


def technician_order(design: Design, where: Mapping[str, Position], floor: Floor) -> list[Link]:
    """Links in the order a technician cables them: by the a end's rack (row, position),
    from the top of the rack down, then device and port."""
    return list(map(design.links.__getitem__, technician_rows(design, where, floor).tolist()))


def technician_rows(design: Design, where: Mapping[str, Position], floor: Floor) -> np.ndarray:
    """``technician_order`` as rows of ``design.links``: the a-end devices ranked once by
    (row, position, -u, name), the links by a stable sort of (that rank, a port)."""
    rack = floor.rack_by_id
    spot: dict[str, tuple[int, int, int]] = {}  # (row, position, -u) of every device
    for dev, p in where.items():
        r = rack[p.rack]
        spot[dev] = (r.row, r.position, -p.u)
    columns = link_columns(design.links)
    # the a ends' devices are the first of ``columns.devices``, in the links' order (so a
    # device without a spot fails on the same name as a look-up per link would)
    ends = int(columns.a_device.max()) + 1 if len(columns.ids) else 0
    keys = [(spot[d], d) for d in columns.devices[:ends]]
    rank = np.empty(ends, np.int64)
    rank[sorted(range(ends), key=keys.__getitem__)] = np.arange(ends)
    return np.lexsort((columns.a_port, rank[columns.a_device]))


def build_cables(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Position],
    lengths: Mapping[str, float] | None = None,
    media_policy: str = "cheapest",
) -> Cabling:
    """One Cable per link: media chosen per cage component at the routed length, labels per the
    layout's template, colour by rail or plane; the fibre plant where media need it; with the
    media's cost, power and notes. Physical cables are numbered ``P00001`` on in technician
    order, the point-to-point ones first, then the plant's harnesses, trunks and cords.

    ``media_policy`` is the spec's ``bill.media``: under ``copper-in-rack`` every link between
    two racks runs on optics (copper only inside a rack).

    Raises InfeasibleError naming the link and its length when no catalog part reaches it.
    """
    routed = dict(lengths) if lengths is not None else routed_lengths(design, floor, where)
    # the links in technician order as rows of ``design.links``, which are the link table's
    # rows too when the link ids are distinct (else a link's row is its id's last)
    order_rows = technician_rows(design, where, floor)
    order = list(map(design.links.__getitem__, order_rows.tolist()))
    table = link_table(design, catalog)
    ids = link_columns(design.links).id_array[order_rows].tolist()
    distinct = len(table.row) == len(table)
    rows = order_rows if distinct else _rows_of(table, ids)
    optics = optics_demand(media_policy, design.links, where)
    assignment, chosen, (phys, legs), plant = _media_and_plant(
        design, floor, catalog, where, routed, (order, ids, rows), table, optics
    )
    names = short_names(design)
    switches = design.switch_by_id()
    template = parse_label_template(floor.layout.label_template)  # fields only, bounded widths
    port_of = PortNames(design, switches)
    media_of = list(map(_CABLE, chosen))
    length_of = list(map(float, map(_STOCKED, chosen)))
    if plant.cables:
        if distinct:  # each link's place in ``order``, from its row
            at = _places(rows)[_rows_of(table, plant.cables)].tolist()
        else:  # a repeated id is found at its last place in ``order``
            last = dict(zip(ids, range(len(ids)), strict=True))
            at = list(map(last.__getitem__, plant.cables))
        for i, (media_id, length, ph, leg) in zip(at, plant.cables.values(), strict=True):
            media_of[i], length_of[i], phys[i], legs[i] = media_id, length, ph, leg
    # a template of the ends' own fields (the default) is read from per-device label tables,
    # all ends at once; another is rendered end by end
    end_labels = end_labeller(template, names, where, port_of)
    if end_labels is not None:
        label_a = end_labels.columns(table.devices, table.a.device[rows], table.a.port[rows])
        label_b = end_labels.columns(table.devices, table.b.device[rows], table.b.port[rows])
    else:
        label_a, label_b = _rendered_labels(template, order, where, names, port_of)
    # positional, in Cable's field order: id, link, media, optics a and b, length, labels
    # a and b, colour, physical id, leg
    cables = tuple(
        map(
            Cable,
            numbered("C", len(order)),
            ids,
            media_of,
            map(_TRANSCEIVER_A, chosen),
            map(_TRANSCEIVER_B, chosen),
            length_of,
            label_a,
            label_b,
            colours_at(link_columns(design.links), order_rows, switches, floor.layout.colour_by),
            phys,
            legs,
        )
    )
    return Cabling(
        cables=cables,
        notes=assignment.notes + plant.notes,
        cost_usd=assignment.cost_usd,
        power_w=assignment.power_w,
        routed_m=routed,
        panels=plant.panels,
        panel_placements=plant.placements,
        segments=plant.segments,
    )


_CABLE, _STOCKED = attrgetter("cable"), attrgetter("stocked_length_m")


def _rows_of(table: LinkTable, ids: Iterable[str]) -> np.ndarray:
    """The link-table row of each of ``ids``."""
    return np.fromiter(map(table.row.__getitem__, ids), np.int64)


def numbered(prefix: str, n: int) -> list[str]:
    """``f"{prefix}{i:05d}"`` for i from 1 to ``n`` (``_numbers``)."""
    return list(islice(_numbers(prefix), 1, n + 1))


def _numbers(prefix: str) -> Iterator[str]:
    """``f"{prefix}{i:05d}"`` for i = 0, 1, 2, ...: each a head (the thousands, at least two
    digits, formatted once per thousand) joined in C to a tail (the last three digits), some
    three times faster than a format call per number."""
    return chain.from_iterable(map(f"{prefix}{h:02d}".__add__, _TAILS) for h in count())


_TAILS = tuple(f"{t:03d}" for t in range(1000))


_TRANSCEIVER_A, _TRANSCEIVER_B = attrgetter("transceiver_a"), attrgetter("transceiver_b")


def _rendered_labels(
    template: LabelTemplate,
    order: list[Link],
    where: Mapping[str, Position],
    names: Mapping[str, str],
    port_of: PortNames,
) -> tuple[list[str], list[str]]:
    """The a and b labels of a template that reads the cable or the link, end by end. Its text
    is the str.format form of its pieces (fields only, no conversions or attribute access:
    ``parse_label_template``), so format_map renders what ``LabelTemplate.render`` does; one
    dict of the fields is refilled for every end."""
    render = template.text.format_map
    values: dict[str, object] = {}
    out: tuple[list[str], list[str]] = ([], [])
    for n, link in enumerate(order, start=1):
        values["cable"], values["link"] = f"C{n:05d}", link.id
        values["plane"], values["rail"] = link.plane, link.rail
        for side, dev, port in ((0, link.a_device, link.a_port), (1, link.b_device, link.b_port)):
            p = where[dev]
            values["rack"], values["u"] = p.rack, p.u
            values["device"], values["port"] = names[dev], port_of(dev, port)
            out[side].append(render(values))
    return out


def _media_and_plant(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    where: Mapping[str, Position],
    routed: Mapping[str, float],
    ordered: tuple[list[Link], list[str], np.ndarray],
    table: LinkTable,
    optics: Mapping[str, str] | None = None,
) -> tuple[media.Assignment, list[media.MediaChoice], tuple[list[str], list[str]], PlantResult]:
    """Media, physical ids and the fibre plant. Plant channels that come out longer than
    their modules reach (their panels stand further apart than their switches, or the next
    stocked trunk is too long) are retried: multimode ones on single-mode optics, then
    single-mode ones on point-to-point media, where their cages allow any. Each retry moves
    more links, so the loop ends; a channel nothing else can carry is refused.

    ``ordered`` is the links in technician ``order``, their ids and their rows in ``table``.
    Physical ids are drawn once the plant stands: the point-to-point cables take P00001 on in
    ``order``, the plant's pieces the numbers after them (the plant numbers its own from 1
    while it is tried, then moves them up). Each link's choice, its id and leg come as lists
    in ``order`` (id and leg "" for a link through the plant)."""
    order, ids, rows = ordered
    fibre: dict[str, str] = dict(optics or {})  # OPTICS: optics of either fibre (media policy)
    direct: set[str] = set()
    planned: set[str] | None = None  # the links the first assignment sent through the plant
    limit = len(design.links) * 4 + 10
    while True:
        assignment = media.assign_design(design, catalog, routed, fibre, direct)
        through = plant_ids(assignment.choices)
        if planned is None:
            planned = through
        try:
            plant = build_plant(
                design,
                floor,
                catalog,
                where,
                assignment.choices,
                order,
                _numbering(limit),
                through=_in_order(through, order, rows, table),
            )
        except PlantReachError as exc:
            if exc.fibre == "mmf" and any(fibre.get(x, "") in ("", OPTICS) for x in exc.links):
                fibre.update({link: "smf" for link in exc.links})
            elif any(link not in direct for link in exc.links):
                direct.update(exc.links)
            else:
                raise
            continue
        break
    chosen = list(map(assignment.choices.__getitem__, ids))
    phys, legs, cables = direct_ids(
        catalog, order, table, assignment.choices, _numbering(limit), rows=rows, chosen=chosen
    )
    plant = shift_ids(plant, cables)
    retried = {k: v for k, v in fibre.items() if v == "smf"}  # the loop's only fibre demand
    notes = _retry_notes(retried, direct, planned, assignment.choices)
    if notes:
        plant = dataclasses.replace(plant, notes=(*plant.notes, *notes))
    return assignment, chosen, (phys, legs), plant


def _in_order(
    ids: Collection[str], order: Sequence[Link], rows: np.ndarray, table: LinkTable
) -> list[Link] | None:
    """The links ``ids`` names (a few of them), in ``order``: each one's place in ``order``
    from its link-table row (``rows[i]`` is ``order[i]``'s row), rather than every link of
    ``order`` tested; None when link ids repeat (every link with one of them is meant, and
    rows name only an id's last link)."""
    if len(table.row) != len(table):
        return None
    if not ids:
        return []
    at = np.sort(_places(rows)[_rows_of(table, ids)])
    return list(map(order.__getitem__, at.tolist()))


def _places(rows: np.ndarray) -> np.ndarray:
    """Each link-table row's place in the technician order (``rows[i]`` is the row of the
    i-th link in that order; the rows are every row once: link ids are distinct)."""
    place = np.empty(len(rows), np.int64)
    place[rows] = np.arange(len(rows))
    return place


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
    """Physical cable ids P00001, P00002, ... below P{limit} in the order asked (each drawn
    by a call into C: ``next`` on ``_numbers``)."""
    return functools.partial(next, islice(_numbers("P"), 1, limit))


def transceivers_per_cage(design: Design, catalog: Catalog) -> dict[str, int]:
    """Transceivers by part id counted once per cage (a twin-port module serves two links)."""
    ends = every_end(media.link_ends(design, catalog))  # read for every cable
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
