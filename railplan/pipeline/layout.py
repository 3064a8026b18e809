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

    def cabled(placed: SwitchPlacement) -> tuple[dict[str, Position], Cabling]:
        say("routing every cable along the trays")
        where = positions(design, floor, catalog, placed.rack, placed.u)
        lengths = routed_lengths(design, floor, where)
        say("choosing media and cabling")
        return where, build_cables(design, floor, catalog, where, lengths, spec.bill.media)

    try:
        where, cabling = cabled(placed)
    except InfeasibleError as exc:
        if placed.fallback is None:
            raise
        # the kicked placement is cheaper by the placement's estimate, which prices links one
        # by one; the search's own placement may still be cabled where it cannot
        note = f"the kicked placement could not be cabled ({exc}); the search's own was used"
        own = placed.fallback
        placed = dataclasses.replace(
            own, report=dataclasses.replace(own.report, notes=(*own.report.notes, note))
        )
        where, cabling = cabled(placed)
    else:
        if placed.fallback is not None:
            placed, where, cabling = _cheaper_cabled(
                placed, placed.fallback, where, cabling, cabled
            )
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
    kicked: SwitchPlacement,
    own: SwitchPlacement,
    where: dict[str, Position],
    cabling: Cabling,
    cabled: Callable[[SwitchPlacement], tuple[dict[str, Position], Cabling]],
) -> tuple[SwitchPlacement, dict[str, Position], Cabling]:
    """The kicked placement or the search's own, whichever is cheaper once cabled.

    Kicks are judged by the placement's estimate, which prices each link alone at an assumed
    switch height; the cabling pairs the two ports of a twin-port cage and rounds to stocked
    lengths, so a kick that lowers the estimate can raise the bill (4,096 GPUs of cx732q-n:
    $10,720 less estimated, $52,001 more billed). Both are cabled and the cheaper kept."""
    try:
        own_where, own_cabling = cabled(own)
    except InfeasibleError:
        return kicked, where, cabling
    if own_cabling.cost_usd >= cabling.cost_usd:
        return kicked, where, cabling
    more = cabling.cost_usd - own_cabling.cost_usd
    note = (
        f"the kicked placement's media came to ${more:,.0f} more than the search's own once "
        "cabled (its estimate prices links one by one); the search's own was used"
    )
    report = dataclasses.replace(own.report, notes=(*own.report.notes, note))
    return dataclasses.replace(own, report=report), own_where, own_cabling
