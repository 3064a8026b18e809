"""`railplan bom`: the .xlsx opens with its four sheets, its counts are `plan --json`'s, the CSV
has the same rows, a hostile user-catalog description stays text, and the bytes repeat."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from functools import cache
from pathlib import Path

import openpyxl
import pytest
import yaml

from railplan.render.bom_files import BILL_COLUMNS
from tests.cli_outputs import run
from tests.conftest import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent
H100 = EXAMPLES / "h100-1k.yaml"
HOSTILE = '=HYPERLINK("http://evil.example/x","click")'


@cache
def plan_bom() -> list[dict[str, object]]:
    code, out, err = run(["plan", str(H100), "--json"])
    assert code == 0, err
    return json.loads(out)["bom"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def bills(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("bom")
    out = {}
    for suffix in ("xlsx", "csv", "json"):
        path = folder / f"bom.{suffix}"
        code, _, err = run(["bom", str(H100), "-o", str(path)])
        assert code == 0, err
        out[suffix] = path
    return out


def test_xlsx_has_the_four_sheets_with_frozen_headers(bills: dict[str, Path]) -> None:
    wb = openpyxl.load_workbook(bills["xlsx"])
    assert wb.sheetnames == ["bill", "spares", "tco", "sources"]
    for ws in wb.worksheets:
        assert ws.freeze_panes == "A2"
    header = [c.value for c in wb["bill"][1]]
    assert tuple(header) == BILL_COLUMNS
    tco = {row[0]: row for row in wb["tco"].iter_rows(min_row=2, values_only=True)}
    assert set(tco) == {"capital", "spares", "energy", "replacements", "total"}
    low, typical, high = tco["total"][1:4]
    assert low < typical < high
    assert typical == pytest.approx(sum(tco[t][2] for t in tco if t != "total"), abs=0.05)


def test_bill_quantities_are_the_plan_json_counts(bills: dict[str, Path]) -> None:
    wb = openpyxl.load_workbook(bills["xlsx"])
    rows = list(wb["bill"].iter_rows(min_row=2, values_only=True))
    col = {c: i for i, c in enumerate(BILL_COLUMNS)}
    plan = plan_bom()
    assert len(rows) == len(plan)
    for row, line in zip(rows, plan, strict=True):
        assert (row[col["part"]], row[col["kind"]]) == (line["part"], line["kind"])
        assert row[col["qty_installed"]] == line["count"]
        assert row[col["ext_typical_usd"]] == pytest.approx(line["total_usd"], abs=0.01)
        assert row[col["length_m"]] == line["length_m"]
        tiers = [
            c
            for c in BILL_COLUMNS
            if c.startswith("qty_") and c not in ("qty_installed", "qty_spare")
        ]
        assert sum(row[col[t]] for t in tiers) == line["count"]  # the tier split adds up
        assert row[col["unit_low_usd"]] <= row[col["unit_typical_usd"]] <= row[col["unit_high_usd"]]
    spare = [r[col["qty_spare"]] for r in rows]
    assert all(s >= 1 for s in spare)  # every active part and cable keeps one, at least


def test_csv_has_the_same_rows(bills: dict[str, Path]) -> None:
    wb = openpyxl.load_workbook(bills["xlsx"])
    xlsx = [["" if v is None else v for v in row] for row in wb["bill"].iter_rows(values_only=True)]
    with bills["csv"].open(encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert len(rows) == len(xlsx)
    for a, b in zip(rows, xlsx, strict=True):
        assert [_same(x) for x in a] == [_same(y) for y in b]


def _same(v: object) -> object:
    """A cell as a number when it reads as one (CSV keeps 20000.0, openpyxl gives 20000)."""
    try:
        return float(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return v


def test_json_spares_are_their_own_section(bills: dict[str, Path]) -> None:
    data = json.loads(bills["json"].read_text(encoding="utf-8"))
    assert [r["qty_installed"] for r in data["bill"]] == [ln["count"] for ln in plan_bom()]
    assert {r["part"] for r in data["spares"]} <= {r["part"] for r in data["bill"]}
    assert all(s["kind"] and s["date"] for s in data["sources"])
    assert data["tco"]["years"] == 5 and data["tco"]["pue"] == 1.56


def test_the_xlsx_bytes_repeat(bills: dict[str, Path], tmp_path: Path) -> None:
    again = tmp_path / "again.xlsx"
    assert run(["bom", str(H100), "-o", str(again)])[0] == 0
    assert again.read_bytes() == bills["xlsx"].read_bytes()


def test_a_hostile_description_is_written_as_text(tmp_path: Path) -> None:
    doc = yaml.safe_load((ROOT / "catalogs" / "switches.yaml").read_text(encoding="utf-8"))
    qm = next(s for s in doc["switches"] if s["id"] == "qm9700")
    qm["name"] = HOSTILE
    qm["price_usd"] = {
        "typical": 14000,
        "low": 14000,
        "high": 14000,
        "date": "2026-11-30",
        "source": {"kind": "quote", "ref": "ACME Networks quote Q-1234"},
    }
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "mine.yaml").write_text(yaml.safe_dump({"switches": [qm]}), encoding="utf-8")
    xlsx, csv_path = tmp_path / "b.xlsx", tmp_path / "b.csv"
    for path in (xlsx, csv_path):
        code, _, err = run(["bom", str(H100), "--catalog", str(cat), "-o", str(path)])
        assert code == 0, err
    wb = openpyxl.load_workbook(xlsx)
    cell = wb["bill"]["C2"]
    assert cell.value == HOSTILE and cell.data_type == "s" and cell.quotePrefix
    with zipfile.ZipFile(xlsx) as z:
        sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/")]
        assert all(b"<f>" not in z.read(n) and b"<f " not in z.read(n) for n in sheets)
    row = next(r for r in csv.DictReader(io.StringIO(csv_path.read_text(encoding="utf-8"))))
    assert row["description"] == "'" + HOSTILE  # quoted as text
    assert row["price_kind"] == "quote" and row["unit_typical_usd"] == "14000.0"
    assert row["price_source"] == "quote: ACME Networks quote Q-1234 (2026-11-30)"
    sources = {r[0]: r for r in wb["sources"].iter_rows(min_row=2, values_only=True)}
    assert sources["switch:qm9700"][1:] == ("quote", "ACME Networks quote Q-1234", "2026-11-30")


def test_a_wrong_suffix_is_refused(tmp_path: Path) -> None:
    code, _, err = run(["bom", str(H100), "-o", str(tmp_path / "bom.txt")])
    assert code == 2 and ".xlsx, .csv or .json" in err
