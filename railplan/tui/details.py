"""Rows for the drill-down screens, from the library's BOM, cable schedule and analyzer."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.physical.bom import Bom
from railplan.pipeline.layout import complete
from railplan.render import cables_csv
from railplan.spec import Spec
from railplan.traffic.collisions import analyze
from railplan.traffic.flows import PATTERNS
from railplan.tui.compute import Method, design_of
from railplan.tui.topotext import topology_text


@dataclass(frozen=True)
class Rows:
    """A table for a drill-down: column names, rows of cell text, and a note under it."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if value % 1 else f"{value:,.0f}"
    return "" if value is None else str(value)


#: counts and prices beside the part, where an 80-column screen shows them; the long
#: description and source last (Right scrolls to them)
BOM_COLUMNS = (
    "part",
    "count",
    "length_m",
    "unit_price_usd",
    "total_usd",
    "total_power_w",
    "kind",
    "description",
    "source",
)


def bom_rows(bom: Bom | None, why_not: str = "") -> Rows:
    """BOM lines (``railplan.physical.bom``), with the totals and notes under them."""
    if bom is None:
        return Rows(("",), (), why_not or "no bill of materials for this design")
    rows = tuple(tuple(_cell(getattr(ln, c)) for c in BOM_COLUMNS) for ln in bom.lines)
    t = bom.totals
    note = (
        f"total ${t.cost_usd:,.0f}; {t.power_w / 1000:,.1f} kW typical, "
        f"{t.power_max_w / 1000:,.1f} kW max; {t.switches} switches, {t.transceivers} "
        f"transceivers, {t.cables} cables, {t.rack_units} U."
    )
    return Rows(BOM_COLUMNS, rows, " ".join([note, *bom.notes]))


def cable_rows(design: Design) -> Rows:
    """The cable schedule exactly as ``railplan cables`` writes it (its CSV, row by row)."""
    lines = list(csv.reader(io.StringIO(cables_csv.render(design))))
    return Rows(tuple(lines[0]), tuple(tuple(r) for r in lines[1:]))


def filter_rows(rows: Sequence[tuple[str, ...]], query: str) -> list[tuple[str, ...]]:
    """Rows where every word of ``query`` appears in some cell (case-insensitive)."""
    words = query.lower().split()
    if not words:
        return list(rows)
    return [r for r in rows if all(any(w in c.lower() for c in r) for w in words)]


HOT_COLUMNS = ("link", "from", "to", "flows", "offered_load", "test")


def hot_links(design: Design, pattern: str) -> Rows:
    """The hottest links of a pattern, as ``railplan analyze --pattern P`` reports them."""
    report = analyze(design, pattern=pattern)
    data = report.to_json()
    rows = tuple(tuple(_cell(hot.get(c)) for c in HOT_COLUMNS) for hot in data["hottest_links"])
    bw = data["bandwidth"]
    note = (
        f"{data['pairs']} node pairs under {data['routing']} routing: "
        f"{data['fraction_full']:.1%} at full rate, {data['fraction_half_or_less']:.1%} at half "
        f"or less; per pair min {bw['min']:.2f} median {bw['median']:.2f} mean {bw['mean']:.2f}"
    )
    if data.get("collective_fraction") is not None:
        note += f"; collective pace {data['collective_fraction']:.2f}"
    return Rows(HOT_COLUMNS, rows, "; ".join([note, *data["notes"]]))


# -- child-process tasks: each builds the design again (deterministic) and returns text ------


def hot_links_of(spec: Spec, catalog: Catalog, family: str, pattern: str) -> Rows:
    """Build the family (as ``railplan plan --topology``) and report its hottest links."""
    return hot_links(design_of(spec, catalog, family), pattern)


def cables_of(spec: Spec, catalog: Catalog, family: str, method: Method) -> Rows:
    """The family's cable schedule on the rack layout its bill used (``railplan cables``)."""
    design = complete(design_of(spec, catalog, family), spec, catalog, method=method)[0]
    return cable_rows(design)


def topology_of(spec: Spec, catalog: Catalog, family: str) -> str:
    """The family's tiers, groups and bundles as text."""
    return topology_text(design_of(spec, catalog, family))


__all__ = [
    "PATTERNS",
    "Rows",
    "bom_rows",
    "cable_rows",
    "cables_of",
    "filter_rows",
    "hot_links",
    "hot_links_of",
    "topology_of",
]


GROWTH_COLUMNS = ("step", "GPUs", "links added", "cables moved", "bound", "bought USD", "tests")


def growth_of(spec: Spec, catalog: Catalog) -> Rows:
    """The spec's phases (``railplan grow SPEC``): each step's change, then the pre-install
    choices; a note when the spec has no phases."""
    from railplan.change.grow import grow_phases
    from railplan.change.preinstall import choices
    from railplan.render.change_report import choice_rows

    if not spec.phases:
        return Rows(
            ("",), (), "no phases: type them above (e.g. su2=512, su4=1024) and press Enter"
        )
    phased = grow_phases(spec, catalog)
    rows = [
        (
            f"{g.before.name} -> {g.after.name}",
            f"{g.before.gpus:,} -> {g.after.gpus:,}",
            f"{len(g.change.added):,}",
            f"{g.moved:,}",
            f"{g.lower_bound:,}",
            f"{g.change.cost_usd:,.0f}",
            f"{len(g.tests.links):,} links, {len(g.tests.pairs):,} pairs",
        )
        for g in phased.steps
    ]
    for c in choice_rows(choices(phased, catalog)):
        rows.append((f"{c[0]}: {c[1]}", "pre-install", c[2], "0", "", c[3], ""))
    note = (
        "each phase is cut from the final design: its cabling is a subset of the next "
        "(checked). railplan grow SPEC -o DIR writes the delta bill, moves, sheets and tests."
    )
    return Rows(GROWTH_COLUMNS, tuple(rows), note)
