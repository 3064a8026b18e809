"""check(design): re-derive every hard rule from the wiring alone, trusting no generator or solver.

Imports only the Design and the catalog: never a generator, a solver or an analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    import numpy as np

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


#: the last wiring every rule of RULES passed on. A laid-out design shares its nodes,
#: switches, links and devices with the design it was laid out from (``dataclasses.replace``
#: keeps those tuples), and all of it is immutable, so checking the laid-out design re-runs
#: only the rules that read what the layout added (racks, placements, cables, the plant)
_SOUND: list[tuple[object, ...]] = []


def _wiring(design: Design) -> tuple[object, ...]:
    """Everything RULES read: the frozen objects (compared by identity), then plain values."""
    return (
        design.nodes,
        design.switches,
        design.links,
        design.devices,
        design.shape,
        design.sizing,
        design.routing,
        design.topology,
        design.planes,
        design.gpus,
    )


def _known_sound(wiring: tuple[object, ...]) -> bool:
    return _same(_SOUND, wiring)


#: a wiring whose rules run elsewhere (``build(..., deferred=True)``: a forked child) and whose verdict
#: is awaited before anything made from it is used or written
_PROMISED: list[tuple[object, ...]] = []


def wiring_known_sound(design: Design) -> bool:
    """True when ``check`` found this very wiring sound (the same objects): every port of it
    is used by one link, every link lands on a port its device has; or when its check runs
    elsewhere and is awaited before any result is used (``promise_sound``), so the cage
    structure need not walk the cages itself."""
    wiring = _wiring(design)
    return _known_sound(wiring) or _same(_PROMISED, wiring)


def promise_sound(design: Design) -> None:
    """Mark the wiring of ``design`` as being checked elsewhere: the caller awaits the verdict
    before using what is made from it, then calls ``settle_promise``. ``check`` still runs
    every rule on it until then."""
    _PROMISED[:] = [_wiring(design)]


def settle_promise(design: Design, problems: list[str]) -> None:
    """The verdict of a check run elsewhere on this wiring: none (sound) lets ``check`` skip
    the wiring rules from now on, as if it had found it sound itself; the promise ends."""
    wiring = _wiring(design)
    if _same(_PROMISED, wiring):
        _PROMISED.clear()
    if not problems:
        _SOUND[:] = [wiring]


def _same(held: list[tuple[object, ...]], wiring: tuple[object, ...]) -> bool:
    if not held:
        return False
    first = held[0]
    return all(a is b for a, b in zip(first[:7], wiring[:7], strict=True)) and (
        first[7:] == wiring[7:]
    )


def check(design: Design, catalog: Catalog | None = None) -> list[str]:
    """Every violated rule as a sentence; an empty list means the design is sound.

    A laid-out design (with cables) is also checked for one cable per link, media that reach
    their routed lengths and fit their cages (against ``catalog``, default the bundled one),
    and devices that sit inside their racks without overlapping. The wiring rules run once
    per wiring: the very objects found sound before are not checked again (``_SOUND``).
    """
    problems: list[str] = []
    wiring = _wiring(design)
    rules = () if _known_sound(wiring) else RULES
    for rule in rules:
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
    if rules and not problems:
        _SOUND[:] = [wiring]
    if design.cables or design.placements:
        problems.extend(one_cable_per_link(design, *_link_rows(design, catalog)))
        problems.extend(racks(design))
        problems.extend(placements(design))
        if design.cables:
            problems.extend(check_cables(design, catalog or load_catalog()))
    return problems[:MAX_REPORTED]


def _link_rows(design: Design, catalog: Catalog | None) -> tuple[int | None, np.ndarray | None]:
    """How many distinct link ids there are and each cable's link as a link-table row
    (``cable_rows``), for the cable-count rule; (None, None) when the table cannot be made (a
    design whose devices the catalog does not know: the rule then hashes the ids itself)."""
    if not design.cables:
        return None, None
    from railplan.design.cable_rows import table_and_rows  # numpy loads here

    found = table_and_rows(design, catalog or load_catalog())
    if found is None:
        return None, None
    return len(found[0].row), found[1]


__all__ = ["check", "check_cables", "promise_sound", "settle_promise", "wiring_known_sound"]
