"""Paging of the sheets and the test plan, read back from the PDFs: "continued" markers on both
sides of every table break, running headers that name only what the page holds, no near-empty
spill pages, and no text below 6 pt on an A4 or Letter page (labels: their own floor)."""

from __future__ import annotations

import io
import re
from functools import cache

import pytest
from pypdf import PdfReader
from reportlab.lib.units import mm

from railplan.catalog import load_catalog
from railplan.physical.bom import bom
from railplan.render.pdf_common import MIN_PAGE_PT
from railplan.render.pdf_labels import LABEL_MIN_PT, render_labels
from railplan.render.pdf_sheets import PLACEHOLDER, render_sheets
from railplan.render.pdf_tables import MIN_PIECE, MIN_ROW_H, ROW_H, RowsTable
from railplan.render.pdf_testplan import render_testplan
from tests.test_testplan import cabled, example_plan

#: examples whose handouts are read back here (small to 1k nodes: every table shape occurs)
NAMES = ["seed000-2node", "seed001-64gpu", "seed003-matrix", "h100-1k"]
SHOWN = re.compile(rb"\(((?:\\.|[^\\)])*)\)\s*Tj|/F\d+\s+([0-9.]+)\s+Tf|(BT)\b|(Do)\b")


@cache
def pdfs(name: str) -> dict[str, bytes]:
    design = cabled(name)
    return {
        "sheets": render_sheets(design, bom(design, load_catalog()))[0],
        "testplan": render_testplan(example_plan(name))[0],
        "labels": render_labels(design)[0],
    }


def shown(stream: bytes) -> list[tuple[float, str]]:
    """(font size, text) of every string a content stream shows (a form's default font, set
    when the form opens but never used to show text, does not count)."""
    size = 12.0
    out = []
    for m in SHOWN.finditer(stream):
        if m.group(2):
            size = float(m.group(2))
        elif m.group(1) is not None:
            text = re.sub(rb"\\(.)", rb"\1", m.group(1)).decode("latin-1")
            if text.strip():
                out.append((size, text))
    return out


def page_strings(reader: PdfReader, i: int) -> list[tuple[float, str]]:
    """Strings of page ``i`` and of the forms it places."""
    page = reader.pages[i]
    out = shown(page.get_contents().get_data())
    xobjects = page.get("/Resources", {}).get("/XObject", {}) or {}
    for ref in xobjects.values():
        out += shown(ref.get_object().get_data())
    return out


def page_texts(pdf: bytes) -> list[str]:
    reader = PdfReader(io.BytesIO(pdf))
    return ["\n".join(t for _, t in shown(p.get_contents().get_data())) for p in reader.pages]


# -- "continued" markers ------------------------------------------------------------------------

CONT_NEXT = re.compile(r"^(.+) continued on next page$", re.M)
CONT_HERE = re.compile(r"^(.+) \(continued\)$", re.M)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("doc", ["sheets", "testplan"])
def test_every_table_break_is_marked_on_both_pages(name: str, doc: str) -> None:
    pages = page_texts(pdfs(name)[doc])
    breaks = 0
    for i, text in enumerate(pages):
        for caption in CONT_NEXT.findall(text):
            breaks += 1
            assert caption in CONT_HERE.findall(pages[i + 1]), (name, doc, i + 1, caption)
        for caption in CONT_HERE.findall(text):
            assert caption in CONT_NEXT.findall(pages[i - 1]), (name, doc, i + 1, caption)
    if name in ("seed001-64gpu", "h100-1k") and doc == "sheets":
        assert breaks > 0  # a 64-cable rack straddles pages: the check above did run
    if name == "h100-1k" and doc == "testplan":
        assert breaks > 0


def test_a_rack_straddling_a_page_is_marked() -> None:
    """seed001-64gpu's switch rack holds 64 cables, more than a page: its table is marked."""
    pages = page_texts(pdfs("seed001-64gpu")["sheets"])
    marked = [i for i, t in enumerate(pages) if "Rack R0103 continued on next page" in t]
    assert len(marked) == 1
    assert "Rack R0103 (continued)" in pages[marked[0] + 1]


# -- running headers ----------------------------------------------------------------------------

HEADER = re.compile(r"^(Cable tables|Switch port maps|Patch-panel port maps): (.+)$", re.M)
#: a table's title as the page shows it: "Rack R0101: ...", "p0-spine-01 (spine, ...): ...",
#: "pnl-1 (part, ...)", or a continued piece's "Rack R0101 (continued)"
TITLE = re.compile(r"^(?:(?:Rack|Switch|Panel) )?(\S+?)(?::| \(continued\)| \([^,()]+, )", re.M)


@pytest.mark.parametrize("name", NAMES)
def test_running_headers_name_only_what_the_page_holds(name: str) -> None:
    pages = page_texts(pdfs(name)["sheets"])
    checked = 0
    for i, text in enumerate(pages):
        m = HEADER.search(text)
        if not m:
            continue
        named = [n.split(" ", 1)[1] for n in m.group(2).split(" to ")]
        # what the page holds: tables opened on it, and the one continued from the last page
        here = TITLE.findall(text.replace(m.group(0), ""))
        if not here:  # a page wholly inside one long table: the header names that table
            assert len(named) == 1, (name, i + 1, named)
            continue
        assert named[0] == here[0] and named[-1] == here[-1], (name, i + 1, named, here)
        checked += 1
    assert checked > 0


# -- near-empty pages ---------------------------------------------------------------------------


def test_a_short_remainder_stays_on_the_page_with_tighter_rows() -> None:
    rows = [[f"C{i:05d}", "x"] for i in range(40)]
    table = RowsTable(["Cable", "x"], rows, [50.0, 50.0], caption="Rack R1")
    room = 38 * ROW_H  # 37 rows at full height: 3 would spill onto a page of their own
    parts = table.split(100, room)
    assert len(parts) == 1 and len(parts[0]) == 40
    assert MIN_ROW_H <= parts[0].row_h < ROW_H
    assert parts[0].wrap(100, room)[1] <= room


def test_a_break_leaves_at_least_min_piece_rows_on_each_side() -> None:
    for n in range(1, 120):
        rows = [[str(i)] for i in range(n)]
        for lines in range(2, 60):
            table = RowsTable(["h"], rows, [40.0], caption="T")
            room = lines * ROW_H + 5
            parts = table.split(40, room)
            if not parts:
                continue
            assert parts[0].wrap(40, room)[1] <= room
            assert sum(len(p) for p in parts) == n  # nothing lost, nothing twice
            if len(parts) == 2:
                assert len(parts[0]) >= MIN_PIECE and len(parts[1]) >= MIN_PIECE, (n, lines)
                assert parts[0].continues and parts[1].continued


def _body_fill(reader: PdfReader, i: int) -> float:
    """How far down the text frame the page's body text reaches (0 empty, 1 full)."""
    page = reader.pages[i]
    h = float(page.mediabox.height)
    top, bottom = h - 12 * mm - 9 * mm, 12 * mm + 8 * mm
    ys: list[float] = []

    def visit(text: str, cm: list[float], tm: list[float], *_: object) -> None:
        y = tm[5] * cm[3] + cm[5]
        if text.strip() and bottom < y < top:
            ys.append(y)

    page.extract_text(visitor_text=visit)
    return (top - min(ys)) / (top - bottom) if ys else 0.0


@pytest.mark.parametrize("name", ["seed001-64gpu", "h100-1k"])
@pytest.mark.parametrize("doc", ["sheets", "testplan"])
def test_no_near_empty_spill_page(name: str, doc: str) -> None:
    """A page that only carries on the section of the page before it is at least a fifth full
    (a few last rows are squeezed onto the previous page; notes sit above their table)."""
    reader = PdfReader(io.BytesIO(pdfs(name)[doc]))
    first = {reader.get_destination_page_number(o) for o in reader.outline
             if not isinstance(o, list)}  # fmt: skip
    spills = [i for i in range(len(reader.pages)) if i not in first]
    for i in spills:
        if i + 1 == len(reader.pages) or i + 1 in first:  # the last page of its section
            assert _body_fill(reader, i) >= 0.2, (name, doc, i + 1)


# -- font sizes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_no_text_below_6pt_on_a_page(name: str) -> None:
    for doc in ("sheets", "testplan"):
        reader = PdfReader(io.BytesIO(pdfs(name)[doc]))
        smallest = min(s for i in range(len(reader.pages)) for s, _ in page_strings(reader, i))
        assert smallest >= MIN_PAGE_PT == 6, (name, doc, smallest)


@pytest.mark.parametrize("name", NAMES)
def test_labels_have_no_text_below_6pt(name: str) -> None:
    """Label stock too: every example's labels fit at 6 pt or more (only a name too long to fit
    a label at 6 pt would go smaller, rather than be cut off)."""
    reader = PdfReader(io.BytesIO(pdfs(name)["labels"]))
    smallest = min(s for i in range(len(reader.pages)) for s, _ in page_strings(reader, i))
    assert smallest >= LABEL_MIN_PT == 6


# -- the bill: whole descriptions, placeholder part numbers marked ----------------------------


def test_bom_prints_whole_descriptions_and_marks_family_numbers() -> None:
    design = cabled("h100-1k")
    b = bom(design, load_catalog())
    reader = PdfReader(io.BytesIO(pdfs("h100-1k")["sheets"]))
    last = " ".join(page_texts(pdfs("h100-1k")["sheets"])[-1].split())
    assert len(reader.pages) and "Bill of materials" in last
    for ln in b.lines:
        assert " ".join(ln.description.split()) in last  # wrapped in its cell, never cut
    open_length = [ln for ln in b.lines if ln.part_number and PLACEHOLDER.search(ln.part_number)]
    assert open_length  # MCA7J60-N00x: the family number, no verified per-length number
    assert last.count("order by length") == len(open_length)
    tables = "\n".join(page_texts(pdfs("h100-1k")["sheets"])[:-1])  # cable tables, port maps
    assert not any(str(ln.part_number) in tables for ln in open_length)


def test_catalog_sources_name_public_documents() -> None:
    """Handouts print catalog sources: none cites a working file ("seed 000") users cannot open."""
    from pathlib import Path

    for path in sorted((Path(__file__).parents[1] / "catalogs").glob("*.yaml")):
        text = path.read_text()
        assert not re.search(r"\bseed\s*\d", text, re.I), path.name
