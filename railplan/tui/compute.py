"""What the TUI shows, computed by the library calls the CLI makes (no textual, no domain logic).

Each topology family is worked out by one stream that runs in a child process and sends back
small results as they come: its counts (``build(layout=False)``, as ``railplan plan``), the
collision figures (``summary_for_compare``, as ``railplan compare``), a quick bill on a
first-fit rack layout (``complete(method="naive")`` + ``bom``, as ``--naive``), then the bill
on the solved placement (``complete`` + ``bom``, the figures ``railplan plan --json`` prints).
Designs stay in the children; a screen that needs one builds it again (deterministic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.summary import plan_summary
from railplan.errors import CatalogError, RailplanError
from railplan.physical.bom import Bom, bom
from railplan.pipeline.build import build
from railplan.pipeline.compare import FAMILIES, compare
from railplan.pipeline.layout import complete
from railplan.pipeline.source import catalog_reference_problems
from railplan.spec import Spec
from railplan.spec.requirements import DEFAULT_ALLTOALL, DEFAULT_PAIRS_FULL
from railplan.traffic.summary import summary_for_compare
from railplan.tui.runner import InlineRunner, Runner

Method = Literal["naive", "cp-sat"]
#: how the bill's racks are laid out, by the form's Placement choice
METHODS: dict[str, tuple[Method, ...]] = {"solve": ("naive", "cp-sat"), "first-fit": ("naive",)}
METHOD_NAMES = {"naive": "first-fit", "cp-sat": "solved"}
Cancelled = Callable[[], bool]


@dataclass(frozen=True)
class FamilyResult:
    """One family's figures (a column of the compare table), or why it cannot be built."""

    family: str
    summary: dict[str, Any] | None = None
    reason: str = ""
    notes: tuple[str, ...] = ()
    max_hops: int | None = None
    inter_switch_links: int | None = None
    bom: Bom | None = None
    totals: dict[str, Any] | None = None
    #: the layout the bill is on: "" (none yet), "first-fit" or "solved"
    placement: str = ""
    collisions: dict[str, Any] | None = None
    warning: str = ""


@dataclass(frozen=True)
class Outcome:
    """Everything the main screen shows for one spec; filled in stage by stage."""

    spec: Spec
    compare_mode: bool
    rows: tuple[FamilyResult, ...] = ()
    #: the family on show: the spec's own (when comparing: the recommended one when the spec
    #: leaves its topology to railplan, until then the cheapest)
    shown: FamilyResult | None = None
    error: str = ""
    stage: str = "planning"
    done: bool = False

    @property
    def summary(self) -> dict[str, Any] | None:
        return self.shown.summary if self.shown else None

    @property
    def totals(self) -> dict[str, Any] | None:
        return self.shown.totals if self.shown else None

    @property
    def bom(self) -> Bom | None:
        return self.shown.bom if self.shown else None

    @property
    def collisions(self) -> dict[str, Any] | None:
        return self.shown.collisions if self.shown else None

    @property
    def warnings(self) -> tuple[str, ...]:
        if self.shown is None:
            return ()
        return self.shown.notes + ((self.shown.warning,) if self.shown.warning else ())

    @property
    def family(self) -> str | None:
        return self.shown.family if self.shown else None

    @property
    def recommended(self) -> str | None:
        """The cheapest billed family whose traffic meets the default requirements (every
        pair test at full rate, all-to-all pace >= 0.9: ``railplan recommend``'s defaults);
        None until the bills and the traffic are in, or when no family meets them."""
        known = [r for r in self.rows if r.totals and r.collisions]
        meeting = [r for r in known if _meets_defaults(r.collisions)]
        if not meeting:
            return None
        return min(meeting, key=lambda r: (float(r.totals["cost_usd"]), r.family)).family  # type: ignore[index]

    @property
    def cheapest(self) -> str | None:
        """The billed family with the lowest cost; before any bill, the fewest switches."""
        billed = [r for r in self.rows if r.totals]
        if billed:
            return min(billed, key=lambda r: float(r.totals["cost_usd"])).family  # type: ignore[index]
        feasible = [r for r in self.rows if r.summary is not None]
        if not feasible:
            return None
        return min(feasible, key=lambda r: r.summary["switches"]["total"]).family  # type: ignore[index]


def _meets_defaults(figures: dict[str, Any] | None) -> bool:
    pairs = (figures or {}).get("pairs")
    a2a = (figures or {}).get("alltoall")
    full = 1.0 if pairs is None else float(pairs.get("fraction_full", 0.0))
    pace = 1.0 if a2a is None else float(a2a.get("collective_fraction", 0.0))
    return full >= DEFAULT_PAIRS_FULL - 1e-9 and pace >= DEFAULT_ALLTOALL - 1e-9


def _on_show(out: Outcome, feasible: list[FamilyResult]) -> FamilyResult | None:
    """The spec's own family when it is compared; for ``topology: auto`` the recommended
    family (the cheapest until the traffic is in): comparing never swaps the design edited."""
    own = out.spec.fabric.topology
    pick = own if own in FAMILIES else (out.recommended or out.cheapest)
    return next((r for r in feasible if r.family == pick), None)


# -- library calls (run in child processes; arguments and results pickle) ---------------------


def design_of(spec: Spec, catalog: Catalog, family: str) -> Design:
    """One family's design, built as ``railplan plan --topology FAMILY`` builds it."""
    return build(spec, catalog, topology=family, layout=False).design


def bill(design: Design, spec: Spec, catalog: Catalog, method: Method) -> tuple[Bom | None, str]:
    """Lay out and cable the design (``pipeline.complete``) and bill it (``analysis.bom``).

    A design that cannot be cabled from the catalog keeps its counts; the reason is returned.
    """
    try:
        return bom(complete(design, spec, catalog, method=method)[0], catalog), ""
    except RailplanError as exc:
        return None, f"bill: {exc}"


def family_stream(
    spec: Spec, catalog: Catalog, family: str | None, methods: tuple[Method, ...] = ("naive",)
) -> Iterator[tuple[str, Any]]:
    """Build one family (None: the spec's own), then analyze its traffic and bill it.

    Yields ("plan", FamilyResult), ("traffic", figures), then ("bill", (method, Bom | None,
    warning)) for each placement method in turn. A family that cannot be built stops after
    its plan, with the reason (the spec's own family raises it, as ``railplan plan`` does).
    """
    if family is None:
        unknown = catalog_reference_problems(spec, catalog)  # named by field, as the CLI does
        if unknown:
            raise CatalogError("\n".join(unknown))
        design = build(spec, catalog, layout=False).design
        yield "plan", _result(design.topology, design)
    else:
        (row,) = compare(spec, catalog, families=(family,))
        yield "plan", _result(family, row.design, row.reason, row.max_hops, row.inter_switch_links)
        if row.design is None:
            return
        design = row.design
    yield "traffic", summary_for_compare(design)
    for method in methods:
        yield "bill", (method, *bill(design, spec, catalog, method))


def _result(
    family: str,
    design: Design | None,
    reason: str = "",
    hops: int | None = None,
    links: int | None = None,
) -> FamilyResult:
    if design is None:
        return FamilyResult(family=family, reason=reason)
    return FamilyResult(
        family=family,
        summary=plan_summary(design),
        notes=tuple(design.sizing.notes),
        max_hops=hops,
        inter_switch_links=links,
    )


# -- putting the outcome together --------------------------------------------------------------


def _merge(row: FamilyResult, what: str, value: Any) -> FamilyResult:
    if what == "plan":
        return replace(value, collisions=row.collisions) if row.summary else value
    if what == "traffic":
        return replace(row, collisions=value)
    method, result, warning = value
    if result is None and row.totals is not None:
        return replace(row, warning=warning)  # keep the first-fit bill if solving fails
    totals = result.totals.as_dict() if result is not None else None
    return replace(row, bom=result, totals=totals, placement=METHOD_NAMES[method], warning=warning)


def _single(
    out: Outcome,
    catalog: Catalog,
    runner: Runner,
    cancelled: Cancelled,
    methods: tuple[Method, ...],
) -> Iterator[Outcome]:
    """The spec's own family, as ``railplan plan`` builds it."""
    row = FamilyResult(family="")
    task = ("spec", family_stream, (out.spec, catalog, None, methods))
    for _, ok, value in runner.run([task], cancelled):
        if not ok:
            raise value
        row = _merge(row, *value)
        out = replace(out, rows=(row,), shown=row, stage=_stage(row, methods))
        yield out
    if out.shown is not None:
        yield replace(out, stage="done", done=True)


def _stage(row: FamilyResult, methods: tuple[Method, ...]) -> str:
    if row.collisions is None:
        return "analyzing traffic"
    if not row.placement:
        return "billing"
    return "solving the placement" if len(methods) > 1 and row.placement != "solved" else "done"


def _compare(
    out: Outcome,
    catalog: Catalog,
    runner: Runner,
    cancelled: Cancelled,
    methods: tuple[Method, ...],
) -> Iterator[Outcome]:
    """Every family at once, one stream each (as ``railplan compare``); the spec's own family
    is shown (``_on_show``), the recommended one marked."""
    rows = {f: FamilyResult(family=f, reason="planning...") for f in FAMILIES}
    tasks = [(f, family_stream, (out.spec, catalog, f, methods)) for f in FAMILIES]
    planned: set[Any] = set()
    for family, ok, value in runner.run(tasks, cancelled):
        if not ok:
            raise value
        what, payload = value
        rows[family] = _merge(rows[family], what, payload)  # type: ignore[index]
        if what == "plan":
            planned.add(family)
        if len(planned) < len(FAMILIES):
            continue  # the table appears once every family has its counts
        feasible = [r for r in rows.values() if r.summary is not None]
        busy = [_stage(r, methods) for r in feasible if _stage(r, methods) != "done"]
        out = replace(out, rows=tuple(rows.values()), stage=busy[0] if busy else "done")
        out = replace(out, shown=_on_show(out, feasible))
        if out.shown is None:
            yield replace(out, error=_no_family(list(rows.values())), done=True)
            return
        yield out
    if out.rows:
        yield replace(out, stage="done", done=True)


def _no_family(rows: list[FamilyResult]) -> str:
    """Why nothing can be built: the one reason when every family gives it, else each one."""
    reasons = {r.reason for r in rows}
    if len(reasons) == 1:
        return reasons.pop()
    return "\n".join(f"{r.family}: not possible: {r.reason}" for r in rows)


def stages(
    spec: Spec,
    catalog: Catalog,
    compare_mode: bool,
    runner: Runner | None = None,
    cancelled: Cancelled = lambda: False,
    placement: str = "solve",
) -> Iterator[Outcome]:
    """The outcome in stages (counts, traffic, bills), yielded as each piece arrives.

    ``runner`` runs the library calls (child processes in the app, see runner.py);
    ``cancelled`` stops early; ``placement`` is "solve" (first-fit bill, then the solved one)
    or "first-fit". Errors come back as ``Outcome.error`` in the CLI's words.
    """
    out = Outcome(spec=spec, compare_mode=compare_mode)
    work = _compare if compare_mode else _single
    try:
        yield from work(out, catalog, runner or InlineRunner(), cancelled, METHODS[placement])
    except RailplanError as exc:
        yield replace(out, error=str(exc), stage="done", done=True)
