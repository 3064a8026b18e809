"""complete(design, spec, catalog): lay out the floor, place switches, route and cable every link."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Literal

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.physical.cabling import (
    Cabling,
    Position,
    build_cables,
    placements_of,
    positions,
    routed_lengths,
)
from railplan.physical.costers import OBJECTIVES, coster_for
from railplan.physical.floor import build_floor
from railplan.physical.plant_panels import required_panel_units
from railplan.solve.placement import (
    PlacementReport,
    SwitchPlacement,
    naive_placement,
    place_switches,
)
from railplan.spec import Spec
from railplan.topology.shape import rack_scale_spec

__all__ = ["OBJECTIVES", "complete"]

#: where every device stands and the cabling made from it
Cabled = tuple[dict[str, Position], Cabling]


def complete(
    design: Design,
    spec: Spec,
    catalog: Catalog,
    *,
    objective: str = "cost",
    time_limit_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    method: Literal["cp-sat", "naive"] = "cp-sat",
) -> tuple[Design, PlacementReport]:
    """A new Design with racks, placements and cables filled, and how the placement was found.

    ``time_limit_s`` overrides the spec's ``layout.placement.deterministic_time_s``: CP-SAT's
    budget in deterministic seconds (machine-independent work units, not the wall clock).
    ``method="naive"`` puts the switches first-fit into the network racks from the end of
    row 1 instead of solving (the baseline the solver is compared with).
    """
    say = progress or (lambda _msg: None)
    spec = rack_scale_spec(spec, catalog)  # an NVL72's trays fill its rack, as when planned
    floor = build_floor(design, spec.layout, catalog, required_panel_units(design, catalog))
    say(f"layout: {len(floor.racks)} racks, {len(floor.network_racks)} for switches")
    if method == "naive":
        placed = naive_placement(design, floor, catalog)
    else:
        placed = place_switches(
            design,
            floor,
            catalog,
            coster_for(design, catalog, objective),
            spec.layout.placement,
            time_limit_s=time_limit_s,
            progress=say,
        )

    def cabled(placed: SwitchPlacement) -> Cabled:
        say("routing every cable along the trays")
        where = positions(design, floor, catalog, placed.rack, placed.u)
        lengths = routed_lengths(design, floor, where)
        say("choosing media and cabling")
        return where, build_cables(design, floor, catalog, where, lengths, spec.bill.media)

    placed, (where, cabling) = _cheaper_cabled(placed, cabled)
    say(f"cabling: {len(cabling.cables)} cables, media ${cabling.cost_usd:,.0f}")
    placed_all = placements_of(where) + cabling.panel_placements
    done = dataclasses.replace(
        design,
        racks=floor.racks,
        placements=tuple(sorted(placed_all, key=lambda p: (p.rack, -p.u, p.device))),
        cables=cabling.cables,
        panels=cabling.panels,
        segments=cabling.segments,
    )
    report = dataclasses.replace(
        placed.report,
        cable_cost_usd=round(cabling.cost_usd, 2),
        cable_power_w=round(cabling.power_w, 2),
        cables=len(cabling.cables),
        notes=placed.report.notes + tuple(cabling.notes),
    )
    return done, report


def _cheaper_cabled(
    placed: SwitchPlacement, cabled: Callable[[SwitchPlacement], Cabled]
) -> tuple[SwitchPlacement, Cabled]:
    """The placement cabled; when kicks replaced the search's own (``placed.fallback``), the
    one of the two that cables and costs less once cabled, with a note when it is the own.

    Kicks are judged by the placement's estimate, which prices each link alone at an assumed
    switch height; the cabling pairs the two ports of a twin-port cage and rounds to stocked
    lengths, so a kicked placement can cost more once cabled (4,096 GPUs of cx732q-n: $10,720
    less estimated, $52,001 more billed) or not cable at all (a node link left at 117.2 m on
    a cage held to 100 m, test_plant's stretched floor)."""
    own = placed.fallback
    if own is None:
        return placed, cabled(placed)
    try:
        kicked = cabled(placed)
    except InfeasibleError as exc:
        note = f"the kicked placement could not be cabled ({exc}); the search's own was used"
        return _noted(own, note), cabled(own)
    try:
        mine = cabled(own)
    except InfeasibleError:
        return placed, kicked
    more = kicked[1].cost_usd - mine[1].cost_usd
    if more <= 0:
        return placed, kicked
    note = (
        f"the kicked placement's media came to ${more:,.0f} more than the search's own once "
        "cabled (its estimate prices links one by one); the search's own was used"
    )
    return _noted(own, note), mine


def _noted(placed: SwitchPlacement, note: str) -> SwitchPlacement:
    report = dataclasses.replace(placed.report, notes=(*placed.report.notes, note))
    return dataclasses.replace(placed, report=report)
