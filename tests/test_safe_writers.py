"""Every writer railplan has, fed other people's text (hypothesis): no CSV or .xlsx cell starts a
formula, and no control byte or Rich markup from a capture reaches the terminal or a report.

``tests/test_safe_text.py`` proves the rules of ``railplan/safe_text.py`` over any text; here
the writers themselves are driven: the bill's .xlsx and CSV, the cable schedule, the NetBox
files (site names, labels, vendors), and capture names through ``asbuilt`` to the terminal and
its ``--report``.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
import zipfile
from functools import cache
from pathlib import Path

import openpyxl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import railplan
from railplan.design import Design, design_from_dict
from railplan.render import bom_files, cables_csv, netbox
from railplan.safe_text import cell
from tests.conftest import ROOT
from tests.test_safe_text import HOSTILE, starts_formula

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_every_csv_is_written_by_the_one_cell_writer() -> None:
    """No module but ``safe_text`` builds CSV with the csv module or by joining cells."""
    offenders = []
    for path in sorted((ROOT / "railplan").rglob("*.py")):
        if path.name == "safe_text.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r"csv\.(writer|DictWriter)\(|\.writerows?\(", text):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def _csv_cells(text: str) -> list[str]:
    return [v for row in csv.reader(io.StringIO(text, newline="")) for v in row]


def _no_formula(values: list[str]) -> None:
    for value in values:
        assert not starts_formula(value) or value.startswith("'"), repr(value)
        assert not value.startswith(("\t", "\r", "\n")), repr(value)


@cache
def _design() -> Design:
    import json

    data = json.loads((ROOT / "designs" / "seed001-64gpu" / "design.json").read_text())
    return design_from_dict(data, "design.json")


@FAST
@given(st.lists(HOSTILE, min_size=4, max_size=4))
def test_cable_labels_of_any_text_start_no_formula(texts: list[str]) -> None:
    design = _design()
    cables = list(design.cables)
    for i, text in enumerate(texts):
        c = cables[i]
        cables[i] = dataclasses.replace(c, label_a=text, label_b=text[::-1], colour=text)
    hostile = dataclasses.replace(design, cables=tuple(cables))
    out = cables_csv.render(hostile)
    values = _csv_cells(out)
    _no_formula(values)
    assert len(list(csv.reader(io.StringIO(out, newline="")))) == len(design.cables) + 1


@FAST
@given(HOSTILE)
def test_netbox_files_with_any_site_name_start_no_formula(site: str) -> None:
    catalog = railplan.load_catalog()
    files = netbox.render(_design(), catalog, site=site or "x")
    for name, text in files.items():
        if name.endswith(".csv"):
            _no_formula(_csv_cells(text))


@cache
def _tables() -> bom_files.BillTables:
    from railplan.physical.bom import bom
    from railplan.spec import spec_from_dict

    design = _design()
    catalog = railplan.load_catalog()
    return bom_files.tables(bom(design, catalog), catalog, spec_from_dict(design.spec))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(HOSTILE, min_size=3, max_size=3))
def test_the_bill_xlsx_and_csv_hold_text_never_a_formula(texts: list[str]) -> None:
    t = _tables()
    rows = [
        tuple(texts[j % 3] if isinstance(v, str) else v for j, v in enumerate(r))
        for r in t.bill[:3]
    ]
    hostile = dataclasses.replace(t, bill=rows + t.bill[3:])
    _no_formula(_csv_cells(bom_files.render_csv(hostile)))
    data = bom_files.render_xlsx(hostile)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/"):
                body = z.read(name)
                assert b"<f>" not in body and b"<f " not in body  # no formula anywhere
    sheet = openpyxl.load_workbook(io.BytesIO(data))["bill"]
    for row in sheet.iter_rows(min_row=2, max_row=4):
        for c in row:
            if isinstance(c.value, str):
                assert c.data_type == "s", (c.coordinate, c.value)
                if cell(c.value) != c.value:  # what a spreadsheet would read as a formula
                    assert c.quotePrefix, (c.coordinate, repr(c.value))


#: a capture name a hostile switch could announce: every class of the rules at once
NAMES = st.lists(
    st.sampled_from(
        ["[/x]", "[link=https://evil.example/]", "\x1b]8;;https://e/\x07", "\x1b[31m", "<script>",
         "<img src=x onerror=alert(1)>", "[a](javascript:alert(1))", "\x9b", "\u202e", "\r", "x"]
    ),
    min_size=1,
    max_size=4,
).map("".join)  # fmt: skip


@settings(
    max_examples=8,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(NAMES)
def test_capture_names_reach_the_terminal_and_report_escaped(
    cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    # a terminal wide enough that the table shows a long escaped name whole rather than cut
    # to "..." (two OSC 8 escapes before a "[link=" pushed it past 80 columns)
    monkeypatch.setenv("COLUMNS", "400")
    capture = (ROOT / "examples" / "field" / "ibnetdiscover.txt").read_text(encoding="utf-8")
    descs = re.findall(r'# "([^"]*)"', capture)
    assert descs
    name = "MARK" + name  # the route is taken: the name is shown (escaped), not dropped
    for desc in descs[:3]:
        capture = capture.replace(f'"{desc}"', f'"{name}"', 1)
    folder = tmp_path / str(abs(hash(name)))
    folder.mkdir(exist_ok=True)
    (folder / "ib.txt").write_text(capture, encoding="utf-8")
    report = folder / "report.md"
    result = cli(
        "asbuilt",
        ROOT / "examples" / "field" / "ib-design.json",
        "--ibnetdiscover",
        folder / "ib.txt",
        "--report",
        report,
    )
    assert result.code in (0, 1, 2), result.err
    for stream in (result.out, result.err):
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", stream), repr(stream[-500:])
        assert "MarkupError" not in stream
    if result.code != 2:  # (a CR in a name breaks its line: a refusal, checked above)
        assert "MARK" in result.out
        if "[link=" in name:  # Rich markup shown as written, never made a link or a style
            assert "[link=" in result.out
    if report.exists():
        body = report.read_text(encoding="utf-8")
        assert "MARK" in body or result.code == 2
        assert not re.search(r"<[a-zA-Z/]", body), body[-500:]  # no tag
        assert "](javascript:" not in body and not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", body)
