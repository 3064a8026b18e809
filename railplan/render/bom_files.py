"""The bill purchasing opens: rows of the bill, spares, TCO and sources as CSV, JSON or .xlsx.

The bill sheet has one row per bill line (the counts of ``plan --json`` ``bom``) with its
spares beside it, never added in; the .xlsx has the sheets ``bill``, ``spares``, ``tco`` and
``sources`` with number formats and frozen headers. Every text cell that a spreadsheet would
run as a formula is written as text: CSV cells through ``cables_csv.neutralise``, .xlsx cells
as string cells with the quote prefix set. The .xlsx is byte-identical for the same input
(fixed document dates and zip entry times).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from typing import Any

from railplan.catalog import Catalog
from railplan.costs import PricedBill, SpareLine, Tco, priced_bill, spares, tco
from railplan.physical.bom import TIERS, Bom
from railplan.render.cables_csv import FORMULA_STARTS, to_csv
from railplan.safe_text import cell as safe_cell
from railplan.safe_text import visible
from railplan.spec import Spec

SWITCH_ROLES = ("leaf", "spine", "core")
TIER_COLUMNS = SWITCH_ROLES + TIERS
BILL_COLUMNS = (
    "part",
    "part_number",
    "description",
    "vendor",
    "kind",
    "length_m",
    "qty_installed",
    "qty_spare",
    "unit_low_usd",
    "unit_typical_usd",
    "unit_high_usd",
    "ext_low_usd",
    "ext_typical_usd",
    "ext_high_usd",
    "unit_power_w",
    "total_power_w",
    "price_kind",
    "price_source",
    "price_date",
    "power_source",
    *(f"qty_{t}" for t in TIER_COLUMNS),
)
SPARE_COLUMNS = (
    "part",
    "part_number",
    "description",
    "kind",
    "length_m",
    "qty_installed",
    "qty_spare",
    "afr_per_year",
    "expected_failures_per_lead_time_per_site",
    "unit_typical_usd",
    "ext_low_usd",
    "ext_typical_usd",
    "ext_high_usd",
    "afr_source",
)
TCO_COLUMNS = ("term", "low_usd", "typical_usd", "high_usd", "rule")
SOURCE_COLUMNS = ("price", "kind", "reference", "date")
#: .xlsx number formats by column-name suffix
_FORMATS = {"_usd": "#,##0.00", "_w": "#,##0.0", "_m": "0.0#", "afr_per_year": "0.0%"}
#: the fixed time of every zip entry and document date in the .xlsx (determinism)
_FIXED = (2000, 1, 1, 0, 0, 0)
_FIXED_ISO = "2000-01-01T00:00:00Z"


@dataclass(frozen=True)
class BillTables:
    """The four tables of a bill file, rows as tuples in their column order."""

    bill: list[tuple[Any, ...]]
    spares: list[tuple[Any, ...]]
    tco: list[tuple[Any, ...]]
    sources: list[tuple[Any, ...]]
    tco_data: dict[str, Any]
    notes: tuple[str, ...]


def tables(bom: Bom, catalog: Catalog, spec: Spec) -> BillTables:
    """The bill, spares, TCO and sources of a finished bill, priced from ``catalog``."""
    bill: PricedBill = priced_bill(bom, catalog)
    spare_lines = spares(bill, catalog, spec.spares)
    cost = tco(bom, bill, spare_lines, catalog, spec.costs)
    spare_of = {id(s.priced.line): s for s in spare_lines}
    bill_rows = []
    for p in bill.lines:
        ln = p.line
        spare = spare_of.get(id(ln))
        lo, ty, hi = p.extended()
        bill_rows.append(
            (
                ln.part,
                ln.part_number,
                ln.description,
                p.vendor,
                ln.kind,
                ln.length_m,
                ln.count,
                spare.count if spare else 0,
                p.low_usd,
                p.typical_usd,
                p.high_usd,
                round(lo, 2),
                round(ty, 2),
                round(hi, 2),
                ln.unit_power_w,
                ln.total_power_w,
                p.kind,
                ln.source,
                p.date or "undated",
                ln.power_source,
                *(ln.per_tier.get(t, 0) for t in TIER_COLUMNS),
            )
        )
    return BillTables(
        bill=bill_rows,
        spares=[_spare_row(s) for s in spare_lines],
        tco=_tco_rows(cost),
        sources=[(s["part"], s["kind"], s["ref"], s["date"]) for s in bill.sources()],
        tco_data=cost.to_json(),
        notes=bom.notes,
    )


def _spare_row(s: SpareLine) -> tuple[Any, ...]:
    ln = s.priced.line
    lo, ty, hi = s.extended()
    return (
        ln.part,
        ln.part_number,
        ln.description,
        ln.kind,
        ln.length_m,
        ln.count,
        s.count,
        s.afr,
        s.expected_per_lead_time,
        s.priced.typical_usd,
        round(lo, 2),
        round(ty, 2),
        round(hi, 2),
        s.afr_source,
    )


def _tco_rows(cost: Tco) -> list[tuple[Any, ...]]:
    def row(term: str, t: tuple[float, float, float], rule: str) -> tuple[Any, ...]:
        return (term, round(t[0], 2), round(t[1], 2), round(t[2], 2), rule)

    return [
        row("capital", cost.capital, "the bill at low, typical and high prices"),
        row("spares", cost.spares, "the spares section at the same prices, bought once"),
        row(
            "energy",
            cost.energy,
            f"{cost.power_w:,.1f} W typical x 8,766 h x {cost.years} years x PUE {cost.pue:g} "
            f"x {cost.usd_per_kwh:g} USD/kWh",
        ),
        row(
            "replacements",
            cost.replacements,
            f"transceivers and cables: count x afr x {cost.years} years at unit price",
        ),
        row("total", cost.total, f"total cost of ownership over {cost.years} years"),
    ]


def render_csv(t: BillTables) -> str:
    """The bill sheet as CSV (header first)."""
    return to_csv(BILL_COLUMNS, t.bill)


def render_json(t: BillTables) -> str:
    """Every table as JSON objects keyed by column, with the TCO terms and the bill's notes."""

    def objects(columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
        return [dict(zip(columns, r, strict=True)) for r in rows]

    data = {
        "bill": objects(BILL_COLUMNS, t.bill),
        "spares": objects(SPARE_COLUMNS, t.spares),
        "tco": t.tco_data,
        "sources": objects(SOURCE_COLUMNS, t.sources),
        "notes": list(t.notes),
    }
    return json.dumps(data, indent=2) + "\n"


def render_xlsx(t: BillTables) -> bytes:
    """The .xlsx workbook: sheets bill, spares, tco and sources."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    wb = Workbook()
    first = wb.active
    assert first is not None
    wb.remove(first)
    for name, columns, rows in (
        ("bill", BILL_COLUMNS, t.bill),
        ("spares", SPARE_COLUMNS, t.spares),
        ("tco", TCO_COLUMNS, t.tco),
        ("sources", SOURCE_COLUMNS, t.sources),
    ):
        ws = wb.create_sheet(name)
        ws.append(list(columns))
        for cell in ws[1]:
            cell.font = Font(bold=True)
        for r, row in enumerate(rows, start=2):
            for c, value in enumerate(row, start=1):
                _put(ws.cell(row=r, column=c), value, columns[c - 1])
        ws.freeze_panes = "A2"
        for c, column in enumerate(columns, start=1):
            width = max([len(column), *(len(str(row[c - 1])) for row in rows)])
            ws.column_dimensions[ws.cell(row=1, column=c).column_letter].width = min(width + 2, 60)
    buf = io.BytesIO()
    wb.save(buf)
    return _fixed_times(buf.getvalue())


def _put(cell: Any, value: Any, column: str) -> None:
    """One cell: numbers with their column's format, text always as text."""
    if value is None:
        return
    if isinstance(value, str):
        from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

        # control characters an .xlsx cannot hold are shown as escapes (safe_text.visible)
        cell.value = ILLEGAL_CHARACTERS_RE.sub(lambda m: visible(m.group()), value)
        cell.data_type = "s"  # never a formula, whatever it starts with
        if value.startswith(FORMULA_STARTS) or safe_cell(value) != value:
            cell.quotePrefix = True  # shown as text when edited, after any blank-like prefix
        return
    cell.value = value
    for suffix, fmt in _FORMATS.items():
        if column.endswith(suffix):
            cell.number_format = fmt


_DATES = re.compile(rb"(<dcterms:(created|modified)[^>]*>)[^<]*(</dcterms:)")


def _fixed_times(data: bytes) -> bytes:
    """The workbook zip with fixed entry times and document dates."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            body = src.read(info.filename)
            if info.filename == "docProps/core.xml":
                body = _DATES.sub(lambda m: m.group(1) + _FIXED_ISO.encode() + m.group(3), body)
            fixed = zipfile.ZipInfo(info.filename, date_time=_FIXED)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = info.external_attr
            dst.writestr(fixed, body)
    return out.getvalue()


FORMATS = {".xlsx": render_xlsx, ".csv": render_csv, ".json": render_json}
