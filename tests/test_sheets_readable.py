"""Cabling sheets read back from the PDF: every cable's id, ends, ports and labels whole.

Each design's sheets are rendered, the text of every page extracted (poppler's pdftotext) and
each cable-table row found by its link cable id: the row must carry the physical cable and leg,
both ends' rack and U, device and port, the cable part and both labels, all whole (an
ellipsis anywhere on a page fails). The bill lists every part whole, its sources once per part,
and no page is under a fifth full except the last page of a section. seed003-matrix and matrix-4k's
nodes and switch on 512 GPUs (Matrix, 200G dual-port NICs: the longest optics and labels of the
bundled examples) run here; matrix-4k itself, the 16k three-tier ROFT and a B300-class two-plane
fabric with RAILPLAN_SLOW=1.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest
import yaml

import railplan
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.physical.bom import Bom, bom
from railplan.pipeline.layout import complete
from railplan.render.pdf_sheets import bom_sources, render_sheets
from railplan.render.sheet_rows import cable_rows
from tests import pdf_pages
from tests.conftest import EXAMPLES

SLOW = os.environ.get("RAILPLAN_SLOW") == "1"
pytestmark = pytest.mark.skipif(
    not pdf_pages.available(), reason="pdftotext (poppler-utils) is not installed"
)


def _matrix_512() -> dict[str, object]:
    """matrix-4k's nodes, switch and naming on 512 GPUs: its widest cells, an eighth of its pages."""
    spec = yaml.safe_load((EXAMPLES / "matrix-4k.yaml").read_text(encoding="utf-8"))
    spec["name"] = "matrix-512"
    spec["cluster"]["gpus"] = 512
    return dict(spec)


DESIGNS: dict[str, Path | dict[str, object]] = {
    "seed003-matrix": EXAMPLES / "seed003-matrix.yaml",
    "matrix-512": _matrix_512(),
    "matrix-4k": EXAMPLES / "matrix-4k.yaml",
    "h100-16k-3tier": EXAMPLES / "h100-16k-3tier.yaml",
    "b300-2plane": {
        "name": "b300-2plane",
        "cluster": {"gpus": 1024, "node": "hgx-b300-8x2x400g"},
        "fabric": {"planes": 2, "plane_assignment": "port"},
    },
}
FAST = ["seed003-matrix", "matrix-512"]
PARAMS = [
    pytest.param(n, marks=[] if n in FAST or SLOW else pytest.mark.skip("RAILPLAN_SLOW=1"))
    for n in DESIGNS
]


@cache
def sheets(name: str, folder: str) -> tuple[Design, Bom, Path]:
    """The design laid out (first-fit: fast, the same names), its bill and its sheets.pdf."""
    source = DESIGNS[name]
    spec = (
        railplan.load_spec(source) if isinstance(source, Path) else railplan.spec_from_dict(source)
    )
    catalog = load_catalog()
    design, _ = complete(railplan.plan(spec, catalog), spec, catalog, method="naive")
    bill = bom(design, catalog)
    pdf, _pages = render_sheets(design, bill)
    path = Path(folder) / f"{name}.pdf"
    path.write_bytes(pdf)
    return design, bill, path


@cache
def pages_of(pdf: Path) -> list[pdf_pages.Page]:
    return pdf_pages.read_pages(pdf)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("sheets"))


def _section(pdf: Path, pages: list[pdf_pages.Page], title: str) -> list[pdf_pages.Page]:
    starts = pdf_pages.section_starts(pdf)
    first = next(p for p, t in starts if t == title)
    later = [p for p, _ in starts if p > first]
    stop = later[0] if later else len(pages) + 1
    return pages[first - 1 : stop - 1]


@pytest.mark.parametrize("name", PARAMS)
def test_every_cable_reads_whole_on_the_sheets(name: str, folder: str) -> None:
    design, _bill, pdf = sheets(name, folder)
    pages = pages_of(pdf)
    cut = [(p.number, w[4]) for p in pages for w in p.words if "\u2026" in w[4]]
    assert cut == [], f"{len(cut)} cut cells, first {cut[:5]}"
    by_id: dict[str, str] = {}
    for page in _section(pdf, pages, "Cable tables"):
        for line in page.lines():
            first = line.split(" ", 3)
            for word in first[:3]:
                if word.startswith("C") and word[1:].isdigit():
                    assert word not in by_id, f"{word} printed twice in the cable tables"
                    by_id[word] = f" {line} "
    rows = cable_rows(design)
    assert len(by_id) == len(rows) == len(design.cables)
    for r in rows:
        line = by_id[r.id]
        for value in (r.item, r.a.where, r.a.device, r.a.port, r.b.where, r.b.device,
                      r.b.port, r.label_a, r.label_b):  # fmt: skip
            assert f" {value} " in line, (r.id, value, line)


@pytest.mark.parametrize("name", PARAMS)
def test_the_bill_lists_every_part_whole_and_each_source_once(name: str, folder: str) -> None:
    _design, bill, pdf = sheets(name, folder)
    pages = pages_of(pdf)
    text = "\n".join(line for p in _section(pdf, pages, "Bill of materials") for line in p.lines())
    words = set(text.split())
    for ln in bill.lines:
        assert ln.part in words, ln.part
    sources = bom_sources(bill)
    parts = [ln.part for ln in bill.lines]
    assert len(sources) == len(set(parts))
    for part in dict.fromkeys(parts):
        assert sum(1 for line in text.splitlines() if line.startswith(f"{part}: price")) == 1


@pytest.mark.parametrize("name", PARAMS)
def test_no_page_is_under_a_fifth_full_but_a_sections_last(name: str, folder: str) -> None:
    _design, _bill, pdf = sheets(name, folder)
    pages = pages_of(pdf)
    assert pdf_pages.sparse_pages(pdf, pages) == []
