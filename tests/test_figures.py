"""Stand-alone figures: the sheets' topology figure (``sheets --figure``) drawn from the DOT
export's grouping, and the ``compare --chart`` cost, power and traffic chart; byte-stable."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from pypdf import PdfReader

from railplan import load_spec, plan
from railplan.render.drawing_files import png_available
from railplan.render.pdf_topology import figure_graph

from .conftest import EXAMPLES

SVG_NS = "{http://www.w3.org/2000/svg}"


def svg_texts(path: Path) -> list[str]:
    root = ET.parse(path).getroot()  # well-formed XML, or this raises
    assert root.tag == f"{SVG_NS}svg"
    return ["".join(t.itertext()).strip() for t in root.iter(f"{SVG_NS}text")]


@pytest.mark.parametrize("example", ["h100-1k", "matrix-4k"])
def test_sheets_figure_svg_and_pdf_draw_the_fabric_graph_boxes(cli, tmp_path, example):
    design = plan(load_spec(EXAMPLES / f"{example}.yaml"))
    graph = figure_graph(design)
    spec = EXAMPLES / f"{example}.yaml"
    for name in ("a.svg", "b.svg", "topo.pdf"):
        out = tmp_path / name
        result = cli("sheets", spec, "--naive", "--labels", "none", "-o", tmp_path, "--figure", out)
        assert result.code == 0, result.err
        assert f"wrote {out}" in result.err
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    texts = svg_texts(tmp_path / "a.svg")
    titles = {box.title for box in graph.boxes}
    assert titles <= set(texts)  # every box of the shared grouping is drawn, by its title
    groups = {f"{box.count:,} nodes" for box in graph.boxes if box.role == "node"}
    assert groups <= set(texts)  # each group box says how many devices it stands for
    pdf_text = PdfReader(io.BytesIO((tmp_path / "topo.pdf").read_bytes())).pages[0].extract_text()
    for title in titles:
        assert title in pdf_text
    # the sheets' own topology page carries the same figure
    sheets = PdfReader(io.BytesIO((tmp_path / "sheets.pdf").read_bytes()))
    page = next(p.extract_text() for p in sheets.pages if "leaves SU1" in p.extract_text())
    assert all(title in page for title in titles)


def test_h100_1k_figure_is_grouped_by_su_with_the_spine_mesh(cli, tmp_path):
    out = tmp_path / "topo.svg"
    spec = EXAMPLES / "h100-1k.yaml"
    result = cli("sheets", spec, "--naive", "--labels", "none", "-o", tmp_path, "--figure", out)
    assert result.code == 0, result.err
    texts = svg_texts(out)
    assert {"nodes SU1", "nodes SU4", "leaves SU1", "leaves SU4", "32 nodes"} <= set(texts)
    assert "full mesh: every box to every box, 32 links each (1,024 links)" in texts
    assert texts.count("256") == 4  # 32 nodes x 8 ports into each SU's 8 leaves


@pytest.mark.parametrize("flag", ["--figure"])
@pytest.mark.parametrize("name", ["topo.gif", "topo"])
def test_figure_refuses_other_formats(cli, tmp_path, flag, name):
    result = cli("sheets", EXAMPLES / "seed000-2node.yaml", "-o", tmp_path, flag, tmp_path / name)
    assert result.code == 2
    assert "give a file name ending .svg, .pdf or .png" in result.err
    assert "Traceback" not in result.err and not (tmp_path / "sheets.pdf").exists()


@pytest.mark.skipif(png_available(), reason="rlPyCairo is installed: PNG is drawn")
@pytest.mark.parametrize("command", ["sheets", "compare"])
def test_png_without_rlpycairo_is_refused_in_one_sentence(cli, tmp_path, command):
    flag = "--figure" if command == "sheets" else "--chart"
    result = cli(command, EXAMPLES / "seed000-2node.yaml", flag, tmp_path / "x.png")
    assert result.code == 2
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and "rlPyCairo" in lines[0] and "Traceback" not in result.err
    assert not (tmp_path / "x.png").exists()


def test_compare_chart_draws_the_compare_figures(cli, tmp_path):
    spec = EXAMPLES / "h100-1k.yaml"
    listed = cli("compare", spec, "--naive", "--json")
    assert listed.code == 0, listed.err
    result = json.loads(listed.out)
    for name in ("a.svg", "b.svg", "c.pdf"):
        done = cli("compare", spec, "--naive", "--chart", tmp_path / name)
        assert done.code == 0, done.err
    assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
    texts = svg_texts(tmp_path / "a.svg")
    for d in result["designs"]:
        assert d["topology"] in texts
        assert f"{d['totals']['cost_usd'] / 1e6:.2f}" in texts
        assert f"{d['totals']['power_w'] / 1e3:.1f}" in texts
        for test in ("pairs", "alltoall", "pd"):
            key = "fraction_full" if test == "pairs" else "collective_fraction"
            assert f"{d['traffic'][test][key]:.2f}" in texts
    for item in result["infeasible"]:  # rail-only cannot hold 1,024 GPUs on qm9700
        assert any(t.startswith(f"{item['topology']}: not possible") for t in texts)
    pdf = PdfReader(io.BytesIO((tmp_path / "c.pdf").read_bytes())).pages[0].extract_text()
    assert "(million USD)" in pdf and "traffic (of line rate)" in pdf


def test_compare_chart_without_bill_or_traffic_says_so(cli, tmp_path):
    out = tmp_path / "chart.svg"
    done = cli("compare", EXAMPLES / "h100-1k.yaml", "--no-layout", "--no-traffic", "--chart", out)
    assert done.code == 0, done.err
    texts = svg_texts(out)
    assert texts.count("not billed (compare --no-layout)") == 2
    assert "no traffic figures (compare --no-traffic)" in texts
    assert not any(re.fullmatch(r"\d+\.\d\d", t) for t in texts)  # no bar drawn from nothing
