"""plan(spec) -> Design: resolve the node, try each allowed switch, keep the best checked design."""

from __future__ import annotations

from railplan.catalog import Catalog, SwitchModel, load_catalog
from railplan.errors import InfeasibleError, SpecError
from railplan.model import Design
from railplan.spec import Spec
from railplan.topology import GENERATORS
from railplan.topology.shape import resolve_shape
from railplan.validate import check


def allowed_switches(spec: Spec, catalog: Catalog, speed_gbps: int) -> list[SwitchModel]:
    """The spec's switch shortlist, or every catalog switch that runs the NIC port speed."""
    if spec.fabric.switches:
        return [catalog.switch(s) for s in spec.fabric.switches]
    models = [m for m in catalog.switches.values() if m.radix(speed_gbps)]
    if not models:
        raise InfeasibleError(f"no catalog switch runs {speed_gbps}G ports; add one to catalogs/")
    return sorted(models, key=lambda m: m.id)


def _rank(design: Design, catalog: Catalog) -> tuple[int, float, str]:
    price = catalog.switch(design.sizing.switch_model).price_usd.value
    return (len(design.switches), price * len(design.switches), design.sizing.switch_model)


def plan(spec: Spec, catalog: Catalog | None = None, topology: str | None = None) -> Design:
    """Plan the spec's fabric (or ``topology`` instead of the spec's); the result passes check."""
    catalog = catalog or load_catalog()
    family = topology or spec.fabric.topology
    if family not in GENERATORS:
        known = ", ".join(GENERATORS)
        raise SpecError(
            f"fabric.topology: {family!r} is not a topology railplan plans; use {known}"
        )
    shape = resolve_shape(spec, catalog)
    designs: list[Design] = []
    reasons: list[str] = []
    for model in allowed_switches(spec, catalog, shape.port_speed_gbps):
        try:
            designs.append(GENERATORS[family](spec, shape, model))
        except InfeasibleError as exc:
            reasons.append(str(exc))
    if not designs:
        if len(reasons) == 1:
            raise InfeasibleError(reasons[0])
        raise InfeasibleError(
            f"no allowed switch can build this {family} fabric: " + "; ".join(reasons)
        )
    best = min(designs, key=lambda d: _rank(d, catalog))
    problems = check(best)
    if problems:
        raise AssertionError(f"generated design fails check: {problems[:5]}")
    return best
