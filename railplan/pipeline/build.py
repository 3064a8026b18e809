"""build(spec): the whole pipeline: switch choice, topology, placement and cabling, BOM, check."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
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
    refuse_unsound,
)
from railplan.spec import Spec
from railplan.topology.shape import rack_scale_spec
from railplan.validate import check, promise_sound, settle_promise

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
    #: False for ``build(..., deferred=True)``: laid out, not yet checked nor billed (``finish``)
    finished: bool = True
    #: the catalog the design was laid out against (its media policy's), for ``finish``
    catalog: Catalog | None = field(default=None, repr=False, compare=False)
    #: a deferred build's topology check, running in a forked child: waits for its problems
    pending: Callable[[], list[str]] | None = field(default=None, repr=False, compare=False)

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
    deferred: bool = False,
    on_topology: Callable[[Design], None] | None = None,
) -> Build:
    """Plan ``spec`` end to end; the result passes ``check`` (cables included when laid out).

    With several allowed switch models CP-SAT picks the one that minimises ``objective``
    over the priced fabric; ``layout=False`` stops after the topology (fast at any size);
    ``method="naive"`` places switches first-fit from the row end instead of solving;
    ``bill=False`` leaves the bill out (``cables`` writes the cabling only);
    ``planned``: this spec's ``build(..., layout=False)`` (same spec, catalog and topology),
    whose topology is laid out instead of planned again;
    ``deferred=True`` stops after the layout, before the check and the bill: the result
    (``finished`` False) must go through ``finish`` before it is used or written; a topology
    planned here is then checked in a forked child while it is laid out (``pending``);
    ``on_topology`` is called with the topology before it is laid out (``plan -o`` starts encoding
    its links for design.json in a child there: ``design.io.rows_text_beside``).
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
            deferred,
            on_topology,
        )


def finish(
    built: Build, *, bill: bool = True, progress: Callable[[str], None] | None = None
) -> Build:
    """A laid-out build checked (``AssertionError`` naming the problems when it fails) and,
    with ``bill``, billed; a finished build comes back as it is."""
    if built.finished:
        return built
    from railplan.physical.bom import bom

    built = settled(built)
    say = progress or (lambda _msg: None)
    catalog = built.catalog or load_catalog()
    with paused():
        say("checking the laid-out design")
        problems = check(built.design, catalog)
        if problems:
            raise AssertionError(f"built design fails check: {problems[:5]}")
        if bill:
            say("billing")
        priced = bom(built.design, catalog) if bill else None
    return Build(built.design, priced, built.placement, built.switch_choice, True, catalog)


def settled(built: Build) -> Build:
    """``built`` once its topology check (``pending``) has answered: the generator's failed
    check raised, else the wiring known sound here (``check`` skips its rules)."""
    if built.pending is None:
        return built
    _await_verdict(built.design, built.pending)
    return dataclasses.replace(built, pending=None)


def _await_verdict(design: Design, pending: Callable[[], list[str]]) -> None:
    """Wait for the topology check running beside the layout; raise what it found."""
    problems = pending()
    settle_promise(design, problems)
    refuse_unsound(problems)


def _checked_beside(design: Design) -> Callable[[], list[str]]:
    """Check ``design``'s topology in a forked child (``railplan.forked``); the returned call
    waits for its problems. Meanwhile the cage structure takes the wiring as sound
    (``promise_sound``): the verdict is awaited before anything made from it is used."""
    from railplan.forked import json_in_child

    pending: Callable[[], list[str]] = json_in_child(lambda: check(design))
    promise_sound(design)
    return pending


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
    deferred: bool = False,
    on_topology: Callable[[Design], None] | None = None,
) -> Build:
    say = progress or (lambda _msg: None)
    from railplan.physical.media_policy import catalog_for

    catalog = catalog_for(catalog, spec.bill.media)
    topology = family_of(spec, topology, catalog)  # topology: auto takes the field rule
    spec = as_built_family(spec, topology)
    chosen: SolverReport | None = None
    pending: Callable[[], list[str]] | None = None
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
        beside = deferred and layout  # its check runs in a child while it is laid out
        design = plan(spec, catalog, topology=topology, checked=not beside)
        pending = _checked_beside(design) if beside else None
    if not layout:
        return Build(design=design, bom=None, placement=None, switch_choice=chosen)
    from railplan.pipeline.layout import complete  # layout libraries load only to lay out

    if on_topology is not None:
        on_topology(design)
    say("placing switches and cabling")
    try:
        laid_out, placement = complete(
            design,
            spec,
            catalog,
            objective=objective,
            time_limit_s=time_limit_s,
            progress=say,
            method=method,
        )
    except Exception:
        if pending is not None:  # a wiring the check refuses: its problems say why
            _await_verdict(design, pending)
        raise
    laid = Build(laid_out, None, placement, chosen, False, catalog, pending)
    return laid if deferred else finish(laid, bill=bill, progress=say)


def plan_json(built: Build, bill: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``railplan plan --json`` object of a build: summary, bill, totals, solver reports
    (``bill``: the bill's ``to_json()`` worked out elsewhere, in place of ``built.bom``'s)."""
    from railplan.design.summary import plan_summary

    summary = plan_summary(built.design)
    if bill is None and built.bom is not None:
        bill = built.bom.to_json()
    if bill is not None:
        summary["bom"] = bill["bom"]
        summary["totals"] = bill["totals"]
        summary["bom_notes"] = bill["notes"]
    solver = built.solver_json()
    if solver:
        summary["solver"] = solver
    return summary
