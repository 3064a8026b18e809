"""The DOT export: quoted by the graphviz package, tiers as ranks, one page at 1k-16k GPUs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from railplan import load_spec, plan
from railplan.render import dot
from railplan.render.fabric_graph import MAX_PER_RANK, fabric_graph

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
NEEDS_DOT = pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
SIZES = ["seed000-2node", "h100-1k", "matrix-4k", "superpod-h100-4su", "h100-16k-3tier"]


@pytest.fixture(scope="module")
def designs(catalog):
    return {ex: plan(load_spec(EXAMPLES / f"{ex}.yaml"), catalog) for ex in SIZES}


@pytest.mark.parametrize("example", SIZES)
def test_every_link_is_drawn_and_every_row_fits(designs, example: str) -> None:
    design = designs[example]
    graph = fabric_graph(design)
    assert sum(n for _, _, n in graph.bundles) == len(design.links)
    devices = len(design.nodes) + len(design.switches) + len(design.devices)
    assert sum(box.count for box in graph.boxes) == devices
    per_rank: dict[int, int] = {}
    for box in graph.boxes:
        per_rank[box.rank] = per_rank.get(box.rank, 0) + 1
    assert max(per_rank.values()) <= MAX_PER_RANK
    assert graph.grouped == (example != "seed000-2node")


def svg_of(text: str) -> tuple[str, str]:
    out = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout, out.stderr


@NEEDS_DOT
@pytest.mark.parametrize("example", SIZES)
def test_graphviz_draws_it_on_one_page_without_warnings(designs, example: str) -> None:
    svg, warnings = svg_of(dot.render(designs[example]))
    assert warnings == ""
    width_pt = int(re.search(r'<svg width="(\d+)pt"', svg)[1])  # type: ignore[index]
    assert width_pt < (4000 if example != "h100-1k" else 1200)
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert texts and not any("\\" in t for t in texts)  # no literal \n in any label
    if example == "h100-1k":
        assert {"nodes SU1", "(32)", "leaves SU1", "(8)"} <= set(texts)


def test_names_are_quoted_by_the_library(designs) -> None:
    text = dot.render(designs["h100-1k"])
    assert text.startswith('graph "h100-1k" {')
    assert '"t0-node-000" [label="nodes SU1\\n(32)"' in text  # a DOT line break, not "\\\\n"
    assert "\\\\n" not in text


def test_cables_dot_skips_the_layout(cli, monkeypatch) -> None:
    from railplan.pipeline.source import DesignSource

    def no_layout(*args, **kwargs):
        raise AssertionError("the DOT export must not lay out, place or cable")

    monkeypatch.setattr(DesignSource, "built", no_layout)
    res = cli("cables", EXAMPLES / "h100-1k.yaml", "--format", "dot")
    assert res.code == 0 and res.out.startswith('graph "h100-1k" {')
