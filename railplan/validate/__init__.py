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

#: rules every later rule relies on: ids are unique and every link end exists
STRUCTURE: list[Callable[[Design], list[str]]] = [unique_ids, ends]
RULES: list[Callable[[Design], list[str]]] = [
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
    problems = [p for rule in STRUCTURE for p in rule(design)]
    if problems:  # the other rules look ends up by id; report the broken structure alone
        return problems[:MAX_REPORTED]
    for rule in RULES:
        problems.extend(rule(design))
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
