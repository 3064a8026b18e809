"""check(design): re-derive every hard rule from the wiring alone, trusting no generator or solver.

Imports only the Design and the catalog: never a generator, a solver or an analysis.
"""

from __future__ import annotations

from collections.abc import Callable

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design
from railplan.validate.cables import check_cables
from railplan.validate.families import (
    matrix_bipartite,
    matrix_groups,
    matrix_oversubscription,
    plane_copies,
    rack_membership,
)
from railplan.validate.physical import one_cable_per_link, placements, racks
from railplan.validate.tiers import attachment, isl_bundles, port_sections, reserved_ports
from railplan.validate.wiring import (
    MAX_REPORTED,
    connected,
    counts,
    ends,
    even_spreading,
    every_switch_used,
    nic_ports_cabled_once,
    oversubscription,
    rail_alignment,
    unique_ids,
)

RULES: list[Callable[[Design], list[str]]] = [
    unique_ids,
    ends,
    nic_ports_cabled_once,
    every_switch_used,
    counts,
    oversubscription,
    even_spreading,
    rail_alignment,
    connected,
    matrix_bipartite,
    matrix_groups,
    matrix_oversubscription,
    rack_membership,
    plane_copies,
    port_sections,
    reserved_ports,
    attachment,
    isl_bundles,
]


def check(design: Design, catalog: Catalog | None = None) -> list[str]:
    """Every violated rule as a sentence; an empty list means the design is sound.

    A laid-out design (with cables) is also checked for one cable per link, media that reach
    their routed lengths and fit their cages (against ``catalog``, default the bundled one),
    and devices that sit inside their racks without overlapping.
    """
    problems: list[str] = []
    for rule in RULES:
        try:
            problems.extend(rule(design))
        except (KeyError, IndexError):
            # rules look link ends up by id and port: a design whose ends are broken (an
            # edited design.json, already reported by ``unique_ids`` or ``ends``) can stop
            # one; on a sound design that is a bug and must surface
            if not problems:
                raise
        if len(problems) >= MAX_REPORTED:
            return problems[:MAX_REPORTED]
    if design.cables or design.placements:
        problems.extend(one_cable_per_link(design))
        problems.extend(racks(design))
        problems.extend(placements(design))
        if design.cables:
            problems.extend(check_cables(design, catalog or load_catalog()))
    return problems[:MAX_REPORTED]


__all__ = ["check", "check_cables"]
