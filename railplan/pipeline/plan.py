"""plan(spec) -> Design: resolve the node, pick the switch model, build the family, check it."""

from __future__ import annotations

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design
from railplan.errors import SpecError
from railplan.spec import Spec
from railplan.topology import GENERATORS
from railplan.topology.shape import allowed_switches, resolve_shape
from railplan.validate import check


def plan(spec: Spec, catalog: Catalog | None = None, topology: str | None = None) -> Design:
    """Plan the spec's fabric (or ``topology`` instead of the spec's); the result passes check.

    With one allowed switch model this is the closed-form construction. With several (or none
    listed: every catalog switch at the NIC speed) the model whose fabric costs least, priced
    with media at nominal lengths, is chosen by ``railplan.solve.switch_choice.choose``: the
    same answer ``railplan plan`` and ``build`` give.
    """
    catalog = catalog or load_catalog()
    family = topology or spec.fabric.topology
    if family not in GENERATORS:
        known = ", ".join(GENERATORS)
        raise SpecError(
            f"fabric.topology: {family!r} is not a topology railplan plans; use {known}"
        )
    shape = resolve_shape(spec, catalog)
    models = allowed_switches(spec, catalog, shape.port_speed_gbps)
    if len(models) > 1:
        from railplan.solve.switch_choice import choose  # the solver package owns ortools

        return choose(spec, catalog, "cost", topology=family)[0]
    design = GENERATORS[family](spec, shape, models[0])
    problems = check(design)
    if problems:
        raise AssertionError(f"generated design fails check: {problems[:5]}")
    return design
