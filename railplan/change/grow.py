"""Growth from an installed design to a larger one: the change, its work orders and tests.

``grow(before, after)`` takes two laid-out designs. When ``before``'s cabling is a subset of
``after``'s (a phase cut from the final design, or any design that happens to be one) the change
is read off directly: nothing moves. Otherwise ``after`` is re-aligned to what is installed
(``change.align``: installed switches re-paired by CP-SAT, switch ports re-numbered so the most
cables stay), laid out again and compared; the moves are reported with the proved lower bound.
``grow_phases(spec)`` plans the final size once and cuts every phase from it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from railplan.catalog import Catalog
from railplan.change.align import Alignment, align
from railplan.change.delta import Delta, delta
from railplan.change.phases import PhasePlan, plan_phases, subset_problems
from railplan.change.testplan import DeltaTestPlan, delta_testplan
from railplan.design import Design
from railplan.errors import InfeasibleError, SpecError
from railplan.identifiers import ID_RULE, is_id, shown
from railplan.spec import Spec
from railplan.validate import check


@dataclass(frozen=True)
class Growth:
    """One step of growth: the designs, the change, how it was aligned, and its tests."""

    before: Design
    after: Design
    change: Delta
    tests: DeltaTestPlan
    #: None when ``before`` is a subset of ``after`` (no re-alignment was needed)
    alignment: Alignment | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def moved(self) -> int:
        """Installed cables moved or taken out."""
        return len(self.change.moves) + len(self.change.removed)

    @property
    def lower_bound(self) -> int:
        """Fewest installed cables any alignment must move or take out (proved)."""
        return 0 if self.alignment is None else self.alignment.lower_bound_moves

    @property
    def gap(self) -> int:
        return self.moved - self.lower_bound


def _spec_of(design: Design) -> Spec:
    from railplan.spec.load import spec_from_dict

    if not design.spec:
        raise SpecError(
            f"design {design.name} carries no spec; plan it with railplan plan so it can be "
            "laid out again"
        )
    return spec_from_dict(design.spec, design.name)


def grow(
    before: Design,
    after: Design,
    catalog: Catalog,
    *,
    after_spec: Spec | None = None,
    seed: int = 0,
    budget_s: float = 10.0,
) -> Growth:
    """The change from installed ``before`` to ``after`` (both laid out) with fewest moves."""
    if not before.cables or not after.cables:
        raise SpecError("grow compares laid-out designs: give specs or design.json with cables")
    if before.shape != after.shape:
        raise SpecError(
            f"grow: {before.name} and {after.name} have different nodes "
            f"({before.shape.model} vs {after.shape.model}); growth keeps the node model"
        )
    if not subset_problems(before, after):
        change = delta(before, after, catalog)
        return Growth(before, after, change, delta_testplan(before, after, change, seed))
    from railplan.pipeline.layout import complete

    aligned = align(before, after, budget_s=budget_s)
    problems = check(aligned.after, catalog)
    if problems:
        raise InfeasibleError(f"the re-numbered design fails a check: {problems[0]}")
    laid, _ = complete(aligned.after, after_spec or _spec_of(after), catalog)
    problems = check(laid, catalog)
    if problems:
        raise InfeasibleError(f"the re-aligned design fails a check: {problems[0]}")
    change = delta(aligned.before, laid, catalog)
    notes = [*aligned.notes]
    if change.reracked:
        notes.append(
            f"{len(change.reracked)} installed switch(es) stand elsewhere in {after.name}'s "
            "layout (listed as re-racked); their cables keep their ports but are re-routed"
        )
    return Growth(
        aligned.before,
        laid,
        change,
        delta_testplan(aligned.before, laid, change, seed),
        alignment=aligned,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class PhasedGrowth:
    """A phased build-out: every phase cut from the final design and each step's growth."""

    plan: PhasePlan
    steps: tuple[Growth, ...]


def grow_phases(
    spec: Spec,
    catalog: Catalog,
    phases: list[tuple[str, int]] | None = None,
    *,
    seed: int = 0,
) -> PhasedGrowth:
    """Plan ``spec`` at its final size, cut each phase (``spec.phases`` or ``phases``) from it.

    Raises SpecError without phases, InfeasibleError if a phase fails a check or a step is not
    a subset of the next (which would be a bug of the cut, reported rather than hidden).
    """
    from railplan.pipeline.build import build
    from railplan.spec.load import spec_from_dict, spec_to_dict

    wanted = phases if phases is not None else [(p.name, p.gpus) for p in spec.phases]
    if not wanted:
        raise SpecError(
            "no phases: add phases: [{name, gpus}, ...] to the spec or give --phase NAME=GPUS"
        )
    for name, _ in wanted:
        if not is_id(name):
            raise SpecError(f"phase name {shown(name)}: use {ID_RULE} characters")
    if wanted[-1][1] != spec.cluster.gpus:
        last = "final" if all(name != "final" for name, _ in wanted) else f"{spec.name}-final"
        wanted = [*wanted, (last, spec.cluster.gpus)]
    final = build(spec, catalog).design
    per_node = final.shape.gpus
    for name, gpus in wanted:
        if gpus % per_node or not 0 < gpus <= final.gpus:
            raise SpecError(
                f"phase {name}: {gpus} GPUs is not whole {per_node}-GPU nodes up to the "
                f"final {final.gpus}; give a multiple of {per_node} no larger than cluster.gpus"
            )
    bounds = []
    for _, gpus in wanted:
        raw = spec_to_dict(spec)
        raw["cluster"]["gpus"] = gpus
        raw.pop("phases", None)
        # the phase's own closed-form bound: the fewest switches that size could ever need
        alone = build(spec_from_dict(raw, "phase"), catalog, layout=False).design
        bounds.append(alone.sizing.lower_bound_switches)
    plan = plan_phases(final, wanted, catalog, bounds)
    if plan.problems:
        raise InfeasibleError(plan.problems[0])
    steps = tuple(
        Growth(a.design, b.design, d, delta_testplan(a.design, b.design, d, seed))
        for (a, b), d in zip(itertools.pairwise(plan.phases), plan.steps, strict=True)
    )
    return PhasedGrowth(plan, steps)
