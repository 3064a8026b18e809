"""PDFs: the sheets list every cable exactly once (read back with pypdf), byte-stable output,
page furniture, landscape tables, the aggregated topology diagram and the test plan PDF."""

from __future__ import annotations

import io
import re
from collections import Counter
from functools import cache

import pytest
from pypdf import PdfReader

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.physical.bom import bom
from railplan.render import cables_csv
from railplan.render.pdf_document import DocInfo
from railplan.render.pdf_labels import render_labels
from railplan.render.pdf_sheets import NOT_LAID_OUT, cable_rows, render_sheets, sheets_story
from railplan.render.pdf_tables import RowsTable
from railplan.render.pdf_testplan import render_testplan
from railplan.render.pdf_topology import MAX_BOXES, figure_graph
from railplan.render.sheet_rows import legs_together
from tests.test_testplan import cabled, example_params, example_plan

CABLE = re.compile(r"\bC\d{5,}\b")
#: examples rendered and read back (the 16k one with RAILPLAN_SLOW=1; the bench reads it too)
#: hpn-pod's sheets take about 20 s to render and read back: with RAILPLAN_SLOW=1 (CI sets it)
READ_BACK = example_params(frozenset({"hpn-pod"}))


@cache
def sheets(name: str) -> bytes:
    design = cabled(name)
    pdf, _ = render_sheets(design, bom(design, load_catalog()))
    return pdf


def sections(pdf: bytes) -> tuple[PdfReader, dict[str, tuple[int, int]]]:
    """The reader and each top-level outline section's page range [first, last)."""
    reader = PdfReader(io.BytesIO(pdf))
    top = [(o.title, reader.get_destination_page_number(o)) for o in reader.outline
           if not isinstance(o, list)]  # fmt: skip
    bounds = {}
    for i, (title, first) in enumerate(top):
        last = top[i + 1][1] if i + 1 < len(top) else len(reader.pages)
        bounds[title] = (first, max(last, first + 1))
    return reader, bounds


SHOWN = re.compile(rb"\(((?:\\.|[^\\)])*)\)\s*Tj")


def text_of(reader: PdfReader, span: tuple[int, int]) -> str:
    """Every string the pages of ``span`` show, in drawing order (read from the content
    streams with pypdf: as exact as extract_text and fifty times faster on long tables)."""
    out = []
    for i in range(*span):
        data = reader.pages[i].get_contents().get_data()
        for m in SHOWN.finditer(data):
            raw = re.sub(rb"\\(.)", rb"\1", m.group(1))
            out.append(raw.decode("latin-1"))
    return "\n".join(out)


# -- acceptance: every cable exactly once -------------------------------------------------------


@pytest.mark.parametrize("name", READ_BACK)
def test_sheets_list_every_cable_exactly_once(name: str) -> None:
    design = cabled(name)
    schedule = [row.cable.id for row in cables_csv.schedule(design)]
    reader, parts = sections(sheets(name))
    listed = CABLE.findall(text_of(reader, parts["Cable tables"]))
    assert Counter(listed) == Counter(schedule)  # each schedule cable once, nothing else
    # in the schedule's order (rack by rack, top down), the legs of a physical cable together
    assert listed == [r.id for r in legs_together(cable_rows(design))]
    ports = Counter(CABLE.findall(text_of(reader, parts["Switch port maps"])))
    switches = {s.id for s in design.switches}
    links = {lk.id: lk for lk in design.links}
    ends = Counter()
    for c in design.cables:
        lk = links[c.link_id]
        ends[c.id] = (lk.a_device in switches) + (lk.b_device in switches)
    assert ports == ends  # every cabled switch port once


@pytest.mark.parametrize("name", example_params())
def test_story_lists_every_cable_exactly_once(name: str) -> None:
    """The same check on the flowables (no rendering), cheap enough for the large examples."""
    design = cabled(name)
    story = sheets_story(design, DocInfo("Cabling sheets", design.name, "r", "h"), None)
    start = next(i for i, f in enumerate(story) if getattr(f, "key", "") == "cables")
    end = next(i for i, f in enumerate(story) if getattr(f, "key", "") == "ports")
    seen: Counter[str] = Counter()
    for flowable in story[start:end]:
        if isinstance(flowable, RowsTable):
            seen.update(row[2] for row in flowable.all_rows())  # link cable id
    assert seen == Counter(c.id for c in design.cables)


# -- acceptance: byte-identical -----------------------------------------------------------------


def test_pdfs_are_byte_identical_for_the_same_input() -> None:
    design = cabled("seed001-64gpu")
    b = bom(design, load_catalog())
    assert render_sheets(design, b)[0] == render_sheets(design, b)[0]
    assert render_labels(design)[0] == render_labels(design)[0]
    tp = example_plan("seed001-64gpu")
    assert render_testplan(tp)[0] == render_testplan(tp)[0]


# -- look -----------------------------------------------------------------------------------------


def test_every_page_has_header_and_page_x_of_y() -> None:
    pdf = sheets("seed001-64gpu")
    reader = PdfReader(io.BytesIO(pdf))
    n = len(reader.pages)
    for i, page in enumerate(reader.pages, start=1):
        text = page.extract_text()
        assert "seed001-64gpu" in text and "Cabling sheets" in text
        assert f"page {i} of" in text and str(n) in text
        assert re.search(r"design [0-9a-f]{12}", text)


def test_wide_tables_are_landscape_and_cover_is_portrait() -> None:
    reader, parts = sections(sheets("seed001-64gpu"))
    cover = reader.pages[0].mediabox
    assert cover.width < cover.height
    for title in ("Cable tables", "Switch port maps", "Bill of materials"):
        box = reader.pages[parts[title][0]].mediabox
        assert box.width > box.height, title


def test_colour_names_print_beside_swatches() -> None:
    """A black-and-white copy still tells rails apart: the TIA-598 name is in the text."""
    reader, parts = sections(sheets("seed000-2node"))
    first, last = parts["Cable tables"]
    text = "\n".join(reader.pages[i].extract_text() for i in range(first, last))
    for colour in ("blue", "orange", "green", "brown", "slate", "white", "red", "black"):
        assert re.search(rf"\b{colour}\b", text)


def test_cover_carries_summary_bom_totals_and_hash() -> None:
    reader, parts = sections(sheets("seed001-64gpu"))
    text = text_of(reader, parts["Cover"])
    for word in ("64 GPUs", "BOM totals", "Revision / design hash", "roft", "switches"):
        assert word in text
    assert "Topology" in parts and "Rack elevations" in parts


def test_sheets_without_layout_say_not_laid_out() -> None:
    from railplan.pipeline.plan import plan
    from railplan.spec import load_spec
    from tests.test_testplan import ROOT

    design = plan(load_spec(ROOT / "examples" / "seed000-2node.yaml"))
    assert not design.cables
    pdf, _ = render_sheets(design)
    reader = PdfReader(io.BytesIO(pdf))
    text = "\n".join(p.extract_text() for p in reader.pages)
    assert NOT_LAID_OUT in text
    assert len(CABLE.findall(text)) == 0 and "NL000016" in text


def test_labels_grid_holds_both_ends_of_every_cable() -> None:
    design = cabled("seed001-64gpu")
    pdf, pages = render_labels(design, "avery-l7159")  # 3 x 8 per sheet
    assert pages == -(-2 * len(design.cables) // 24)
    reader = PdfReader(io.BytesIO(pdf))
    text = "\n".join(p.extract_text() for p in reader.pages)
    for c in design.cables[:10]:
        assert c.label_a in text and c.label_b in text
    assert text.count("A end of") == text.count("B end of") == len(design.cables)


@pytest.mark.parametrize("name", ["h100-1k", "matrix-4k", "fat-tree-1k", "h100-16k-3tier"])
def test_topology_diagram_aggregates_at_scale(name: str) -> None:
    design = cabled(name) if name != "h100-16k-3tier" else _planned(name)
    graph = figure_graph(design)  # the DOT export's grouping (fabric_graph), plane 0
    per_rank: dict[int, int] = {}
    for box in graph.boxes:
        per_rank[box.rank] = per_rank.get(box.rank, 0) + 1
    assert max(per_rank.values()) <= MAX_BOXES
    switches = sorted(m for box in graph.boxes if box.tier > 0 for m in box.members)
    assert switches == sorted(s.id for s in design.switches if s.plane == 0)
    nodes = [m for box in graph.boxes if box.role == "node" for m in box.members]
    assert sorted(nodes) == sorted(n.id for n in design.nodes)
    assert all(box.count == len(box.members) for box in graph.boxes)
    plane0 = [lk for lk in design.links if lk.plane == 0]
    assert sum(n for _, _, n in graph.bundles) == len(plane0)


@cache
def _planned(name: str) -> Design:
    from railplan.pipeline.plan import plan
    from railplan.spec import load_spec
    from tests.test_testplan import ROOT

    return plan(load_spec(ROOT / "examples" / f"{name}.yaml"))


def test_testplan_pdf_holds_every_test_and_its_numbers() -> None:
    tp = example_plan("seed001-64gpu")
    pdf, _ = render_testplan(tp)
    reader, parts = sections(pdf)
    assert list(parts)[:2] == ["Cover", "1. Node checks"]
    text = "\n".join(p.extract_text() for p in reader.pages)
    for t in tp.tests():
        assert t.id in text
    pair = tp.section("pairs").tests[0].checks[0]
    assert f"{pair.expected:g} GB/s" in text and f">= {pair.threshold:g}" in text
    assert "Why these numbers" in text and "Asterfusion CX732Q-N" in text
    assert not re.search(r"seed \d{3}", text)


def test_cli_sheets_writes_both_pdfs(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from tests.test_testplan import ROOT

    spec = ROOT / "examples" / "seed000-2node.yaml"
    r = cli("sheets", spec, "-o", tmp_path, "--naive", "--revision", "B", "--labels", "avery-l7159")
    assert r.code == 0, r.err
    assert (tmp_path / "sheets.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "labels.pdf").exists()
    assert "revision B" in PdfReader(tmp_path / "sheets.pdf").pages[0].extract_text()
    bad = cli("sheets", spec, "-o", tmp_path, "--labels", "nope")
    assert bad.code == 2 and "--labels" in bad.err
