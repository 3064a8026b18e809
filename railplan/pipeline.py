"""complete(design, spec, catalog): lay out the floor, place switches, route and cable every link."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable
from typing import Literal, cast

from railplan.analysis import media
from railplan.analysis.cabling import build_cables, placements_of, positions, routed_lengths
from railplan.analysis.layout import build_floor
from railplan.catalog import Catalog
from railplan.errors import InfeasibleError, SpecError
from railplan.model import Design, Link
from railplan.solve.placement import (
    LinkCoster,
    PlacementReport,
    naive_placement,
    place_switches,
)
from railplan.spec import Spec

OBJECTIVES = ("cost", "power", "length")


class LengthCoster:
    """Placement objective: total routed cable length (metres)."""

    def key(self, link: Link) -> Hashable:
        return "m"

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        return length_m


class PowerCoster:
    """Placement objective: media power (W) of each link at its length, per ``media.select``."""

    def __init__(self, design: Design, catalog: Catalog) -> None:
        self.catalog = catalog
        self.ends = media.link_ends(design, catalog)

    def key(self, link: Link) -> Hashable:
        a, b = self.ends[link.id]
        return (link.rate_gbps, a.form_factor, a.ports_per_cage, b.form_factor, b.ports_per_cage)

    def cost(self, key: Hashable, length_m: float, link: Link) -> float:
        speed, a_ff, a_ppc, b_ff, b_ppc = cast(tuple[int, str, int, str, int], key)
        try:
            choice = media.select(
                self.catalog,
                speed_gbps=speed,
                a_form_factor=a_ff,
                b_form_factor=b_ff,
                length_m=length_m,
                a_ports_per_cage=a_ppc,
                b_ports_per_cage=b_ppc,
            )
        except InfeasibleError:
            return media.UNREACHABLE_USD
        return choice.power_w


def coster_for(design: Design, catalog: Catalog, objective: str) -> LinkCoster:
    if objective == "cost":
        return media.DesignCoster(design, catalog)
    if objective == "power":
        return PowerCoster(design, catalog)
    if objective == "length":
        return LengthCoster()
    raise SpecError(f"objective {objective!r} is not one of {', '.join(OBJECTIVES)}")


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

    ``method="naive"`` puts the switches first-fit into the network racks from the end of
    row 1 instead of solving (the baseline the solver is compared with).
    """
    say = progress or (lambda _msg: None)
    floor = build_floor(design, spec.layout, catalog)
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
    where = positions(design, floor, catalog, placed.rack, placed.u)
    lengths = routed_lengths(design, floor, where)
    cabling = build_cables(design, floor, catalog, where, lengths)
    say(f"cabling: {len(cabling.cables)} cables, media ${cabling.cost_usd:,.0f}")
    done = dataclasses.replace(
        design, racks=floor.racks, placements=placements_of(where), cables=cabling.cables
    )
    report = dataclasses.replace(
        placed.report,
        cable_cost_usd=round(cabling.cost_usd, 2),
        cable_power_w=round(cabling.power_w, 2),
        cables=len(cabling.cables),
        notes=placed.report.notes + tuple(cabling.notes),
    )
    return done, report
