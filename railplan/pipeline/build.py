"""build(spec): the whole pipeline: switch choice, topology, placement and cabling, BOM, check."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design
from railplan.gc_pause import paused
from railplan.pipeline.plan import (
    as_built_family,
    family_of,
    honour_attachment,
    needs_choice,
    plan,
)
from railplan.spec import Spec
from railplan.topology.shape import rack_scale_spec
from railplan.validate import check

if TYPE_CHECKING:
    from railplan.physical.bom import Bom
    from railplan.solve.placement import PlacementReport
    from railplan.solve.switch_choice import SolverReport

#: run-to-run varying figures kept out of JSON so the same spec gives byte-identical output
_VOLATILE = ("wall_time_s",)


@dataclass(frozen=True)
class Build:
    """A finished design with its bill and the reports of the solvers that shaped it."""

    design: Design
    bom: Bom | None
    placement: PlacementReport | None
    switch_choice: SolverReport | None

    def solver_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.switch_choice is not None:
            out["switch_choice"] = self.switch_choice.to_json()
        if self.placement is not None:
            report = self.placement.as_dict()
            out["placement"] = {k: v for k, v in report.items() if k not in _VOLATILE}
            out["placement"]["notes"] = list(self.placement.notes)
        return out


def several_models(spec: Spec, catalog: Catalog | None = None, topology: str | None = None) -> bool:
    """True when the spec leaves a switch model open in some tier (no shortlist, or several)."""
    return needs_choice(spec, catalog or load_catalog(), topology)


def build(
    spec: Spec,
    catalog: Catalog | None = None,
    *,
    topology: str | None = None,
    layout: bool = True,
    objective: str = "cost",
    time_limit_s: float | None = None,
    progress: Callable[[str], None] | None = None,
    method: Literal["cp-sat", "naive"] = "cp-sat",
    bill: bool = True,
    planned: Build | None = None,
) -> Build:
    """Plan ``spec`` end to end; the result passes ``check`` (cables included when laid out).

    With several allowed switch models CP-SAT picks the one that minimises ``objective``
    over the priced fabric; ``layout=False`` stops after the topology (fast at any size);
    ``method="naive"`` places switches first-fit from the row end instead of solving;
    ``bill=False`` leaves the bill out (``cables`` writes the cabling only);
    ``planned``: this spec's ``build(..., layout=False)`` (same spec, catalog and topology),
    whose topology is laid out instead of planned again.
    """
    catalog = catalog or load_catalog()
    with paused():  # millions of acyclic objects at scale: see railplan/gc_pause.py
        return _build(
            spec,
            catalog,
            topology,
            layout,
            objective,
            time_limit_s,
            progress,
            method,
            bill,
            planned,
        )


def _build(
    spec: Spec,
    catalog: Catalog,
    topology: str | None,
    layout: bool,
    objective: str,
    time_limit_s: float | None,
    progress: Callable[[str], None] | None,
    method: Literal["cp-sat", "naive"],
    bill: bool = True,
    planned: Build | None = None,
) -> Build:
    say = progress or (lambda _msg: None)
    from railplan.physical.media_policy import catalog_for

    catalog = catalog_for(catalog, spec.bill.media)
    topology = family_of(spec, topology, catalog)  # topology: auto takes the field rule
    spec = as_built_family(spec, topology)
    chosen: SolverReport | None = None
    spec = rack_scale_spec(spec, catalog)  # an NVL72's trays fill its rack, one rack per domain
    if planned is not None:  # planned from this spec already: the same topology
        design, chosen = planned.design, planned.switch_choice
    elif several_models(spec, catalog, topology):
        from railplan.solve.switch_choice import choose  # OR-Tools loads only when choosing

        say("choosing the switch model")
        design, chosen = choose(
            spec, catalog, objective if objective != "length" else "cost", topology=topology
        )
        honour_attachment(design, topology or spec.fabric.topology)
    else:
        say("planning the topology")
        design = plan(spec, catalog, topology=topology)
    if not layout:
        return Build(design=design, bom=None, placement=None, switch_choice=chosen)
    from railplan.physical.bom import bom
    from railplan.pipeline.layout import complete  # layout libraries load only to lay out

    say("placing switches and cabling")
    design, placement = complete(
        design,
        spec,
        catalog,
        objective=objective,
        time_limit_s=time_limit_s,
        progress=say,
        method=method,
    )
    say("checking the laid-out design")
    problems = check(design, catalog)
    if problems:
        raise AssertionError(f"built design fails check: {problems[:5]}")
    if not bill:
        return Build(design=design, bom=None, placement=placement, switch_choice=chosen)
    say("billing")
    return Build(design=design, bom=bom(design, catalog), placement=placement, switch_choice=chosen)


def plan_json(built: Build) -> dict[str, Any]:
    """The ``railplan plan --json`` object of a build: summary, bill, totals, solver reports."""
    from railplan.design.summary import plan_summary

    summary = plan_summary(built.design)
    if built.bom is not None:
        bill = built.bom.to_json()
        summary["bom"] = bill["bom"]
        summary["totals"] = bill["totals"]
        summary["bom_notes"] = bill["notes"]
    solver = built.solver_json()
    if solver:
        summary["solver"] = solver
    return summary
