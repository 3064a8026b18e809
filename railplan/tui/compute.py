"""What the TUI shows, computed by the library calls the CLI makes (no textual, no domain logic)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from railplan.analysis.bom import Bom, bom
from railplan.analysis.collisions import summary_for_compare
from railplan.catalog import Catalog
from railplan.compare import FAMILIES, compare
from railplan.errors import RailplanError
from railplan.model import Design
from railplan.pipeline import complete
from railplan.planner import plan
from railplan.spec import Spec
from railplan.summary import plan_summary
from railplan.tui.runner import InlineRunner, Task


@dataclass(frozen=True)
class FamilyResult:
    """One row of the compare table: a family's design and its figures, or why it failed."""

    family: str
    summary: dict[str, Any] | None = None
    design: Design | None = None
    reason: str = ""
    max_hops: int | None = None
    inter_switch_links: int | None = None
    totals: dict[str, Any] | None = None
    collisions: dict[str, Any] | None = None
    full: Design | None = None
    bom: Bom | None = None
    warning: str = ""


@dataclass(frozen=True)
class Outcome:
    """Everything the main screen shows for one spec; filled in stage by stage."""

    spec: Spec
    compare_mode: bool
    design: Design | None = None
    summary: dict[str, Any] | None = None
    error: str = ""
    full: Design | None = None
    bom: Bom | None = None
    totals: dict[str, Any] | None = None
    collisions: dict[str, Any] | None = None
    rows: tuple[FamilyResult, ...] = ()
    warnings: tuple[str, ...] = ()
    stage: str = "planning"
    done: bool = False

    @property
    def cheapest(self) -> str | None:
        """The billed family with the lowest cost; before any bill, the fewest switches."""
        billed = [r for r in self.rows if r.totals and "cost_usd" in r.totals]
        if billed:
            return min(billed, key=lambda r: float(r.totals["cost_usd"])).family  # type: ignore[index]
        feasible = [r for r in self.rows if r.summary is not None]
        if not feasible:
            return None
        return min(feasible, key=lambda r: r.summary["switches"]["total"]).family  # type: ignore[index]


#: live bills lay the floor out first-fit (fast), as ``--naive`` does on the CLI
LIVE_PLACEMENT: Literal["naive", "cp-sat"] = "naive"


def bill(
    design: Design,
    spec: Spec,
    catalog: Catalog,
    method: Literal["naive", "cp-sat"] = LIVE_PLACEMENT,
) -> tuple[Design | None, Bom | None, dict[str, Any] | None, str]:
    """Cable the design (``pipeline.complete``) and bill it (``analysis.bom.bom``).

    Returns the completed design, the Bom, its totals and a warning ("" when all went well);
    a design that cannot be cabled from the catalog still shows its counts, with the reason.
    """
    try:
        full = complete(design, spec, catalog, method=method)[0]
        result = bom(full, catalog)
    except RailplanError as exc:
        return None, None, None, f"bill: {exc}"
    return full, result, result.totals.as_dict(), ""


def collision_summary(design: Design) -> dict[str, Any]:
    """Pair-test and all-to-all figures (``analysis.collisions.summary_for_compare``)."""
    return summary_for_compare(design)


def compare_family(spec: Spec, catalog: Catalog, family: str) -> FamilyResult:
    """One family of ``railplan.compare.compare`` (as ``railplan compare``) as a FamilyResult."""
    (row,) = compare(spec, catalog, families=(family,))
    return FamilyResult(
        family=row.family,
        design=row.design,
        summary=plan_summary(row.design) if row.design is not None else None,
        reason=row.reason,
        max_hops=row.max_hops,
        inter_switch_links=row.inter_switch_links,
    )


def plan_design(spec: Spec, catalog: Catalog) -> tuple[Design, dict[str, Any]]:
    """``railplan.plan`` and its summary (what ``railplan plan --json`` prints)."""
    design = plan(spec, catalog)
    return design, plan_summary(design)


def warnings_of(design: Design, *more: str) -> tuple[str, ...]:
    """The planner's notes on a design and any warnings of later stages."""
    return tuple(design.sizing.notes) + tuple(m for m in more if m)


def _value(ok: bool, value: Any) -> Any:
    """A task's result; its RailplanError is raised again, other exceptions too (bugs)."""
    if not ok:
        raise value
    return value


Cancelled = Callable[[], bool]


def _single(out: Outcome, catalog: Catalog, runner: Any, cancelled: Cancelled) -> Iterator[Outcome]:
    for _, ok, value in runner.run([("plan", plan_design, (out.spec, catalog))], cancelled):
        design, summary = _value(ok, value)
        out = replace(out, design=design, summary=summary, warnings=warnings_of(design))
        yield replace(out, stage="billing, analyzing traffic")
    if out.design is None:
        return
    design = out.design
    tasks = [
        ("bill", bill, (design, out.spec, catalog)),
        ("traffic", collision_summary, (design,)),
    ]
    warning = ""
    for key, ok, value in runner.run(tasks, cancelled):
        if key == "bill":
            full, bom, totals, warning = _value(ok, value)
            out = replace(out, full=full, bom=bom, totals=totals)
        else:
            out = replace(out, collisions=_value(ok, value))
        out = replace(out, warnings=warnings_of(design, warning))
        yield out
    yield replace(out, stage="done", done=True)


def _with_best(out: Outcome) -> Outcome:
    best = next((r for r in out.rows if r.family == out.cheapest), None)
    if best is None or best.design is None:
        reasons = "; ".join(f"{r.family}: {r.reason}" for r in out.rows)
        return replace(out, error=f"no family can build this cluster: {reasons}")
    return replace(
        out,
        design=best.design,
        summary=best.summary,
        full=best.full,
        bom=best.bom,
        totals=best.totals,
        collisions=best.collisions,
        warnings=warnings_of(best.design, best.warning),
    )


def _compare(
    out: Outcome, catalog: Catalog, runner: Any, cancelled: Cancelled
) -> Iterator[Outcome]:
    tasks = [(f, compare_family, (out.spec, catalog, f)) for f in FAMILIES]
    found = {key: _value(ok, value) for key, ok, value in runner.run(tasks, cancelled)}
    if len(found) < len(FAMILIES):
        return
    rows = {f: found[f] for f in FAMILIES}
    out = _with_best(replace(out, rows=tuple(rows.values()), stage="billing, analyzing traffic"))
    yield out
    if out.error:
        yield replace(out, stage="done", done=True)
        return
    feasible = [r for r in rows.values() if r.design is not None]
    work: list[Task] = [(("bill", r.family), bill, (r.design, out.spec, catalog)) for r in feasible]
    work += [(("traffic", r.family), collision_summary, (r.design,)) for r in feasible]
    for (what, family), ok, value in runner.run(work, cancelled):
        row = rows[family]
        if what == "bill":
            full, bom, totals, warning = _value(ok, value)
            rows[family] = replace(row, full=full, bom=bom, totals=totals, warning=warning)
        else:
            rows[family] = replace(row, collisions=_value(ok, value))
        out = _with_best(replace(out, rows=tuple(rows.values())))
        yield out
    yield replace(out, stage="done", done=True)


def stages(
    spec: Spec,
    catalog: Catalog,
    compare_mode: bool,
    runner: Any = None,
    cancelled: Cancelled = lambda: False,
) -> Iterator[Outcome]:
    """The outcome in stages (plan, then bill and traffic), yielded as each piece arrives.

    Compare plans every family; the design shown is the cheapest one. ``runner`` runs the
    library calls (in child processes for the app, see runner.py); ``cancelled`` stops early.
    """
    if runner is None:
        runner = InlineRunner()
    out = Outcome(spec=spec, compare_mode=compare_mode)
    try:
        if compare_mode:
            yield from _compare(out, catalog, runner, cancelled)
        else:
            yield from _single(out, catalog, runner, cancelled)
    except RailplanError as exc:
        yield replace(out, error=str(exc), stage="done", done=True)
