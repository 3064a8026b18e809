"""The topology figure's grouping and lines: one SU numbering on every row (Matrix B leaves by
the node SU they serve), SU groups that keep pods whole, and lines past a row that bend round
its boxes instead of crossing them."""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from itertools import pairwise

import yaml

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.pipeline.build import build
from railplan.render.fabric_graph import fabric_graph
from railplan.render.pdf_topology import _detour, _Layout, _ordered, figure_graph
from railplan.spec import spec_from_dict

from .conftest import EXAMPLES


@cache
def design(example: str, gpus: int) -> Design:
    data = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text(encoding="utf-8"))
    data["cluster"]["gpus"] = gpus
    return build(spec_from_dict(data), load_catalog(), layout=False).design


def su_span(title: str) -> str:
    found = re.search(r"SU[0-9-]+", title)
    assert found, title
    return found.group()


def test_matrix_b_leaves_are_numbered_by_the_su_of_the_nodes_they_serve() -> None:
    d = design("matrix-4k", 2048)  # 256 nodes: grouped rows, 2 SUs of 128 nodes
    graph = figure_graph(d)
    assert graph.grouped
    box = {b.key: b for b in graph.boxes}
    checked = 0
    for a, b, _ in graph.bundles:
        roles = {box[a].role: box[a], box[b].role: box[b]}
        if set(roles) == {"node", "leaf-b"}:
            assert su_span(roles["leaf-b"].title) == su_span(roles["node"].title)
            checked += 1
    assert checked == len([b for b in graph.boxes if b.role == "node"])


def test_su_groups_keep_pods_whole() -> None:
    d = design("h100-16k-3tier", 8192)  # 32 SUs in 8 pods of 4: 3 SUs a box would split pods
    graph = fabric_graph(d, 12, 0)
    box = {b.key: b for b in graph.boxes}
    ups: dict[str, set[str]] = defaultdict(set)
    for a, b, _ in graph.bundles:
        if {box[a].role, box[b].role} == {"leaf", "spine"}:
            leaf, spine = (a, b) if box[a].role == "leaf" else (b, a)
            ups[leaf].add(spine)
    leaves = [b for b in graph.boxes if b.role == "leaf"]
    assert len(leaves) == 8 and all(su_span(b.title).count("-") for b in leaves)
    assert all(len(ups[b.key]) == 1 for b in leaves)  # each box's uplinks into one pod group


def test_lines_past_a_row_never_cross_its_boxes() -> None:
    # the row layout's detours, for any graph whose lines skip a row: the Matrix graph laid
    # out in rows has them (the Matrix itself is drawn in columns, tests/test_figures_matrix.py)
    d = design("matrix-4k", 2048)
    graph = figure_graph(d)
    lay = _Layout(graph, 780.0, 500.0, 45.0)
    crossed = 0
    for a, b, _ in _ordered(graph, lay):
        ra, rb = lay.row_of[a], lay.row_of[b]
        if rb - ra < 2:
            continue
        xa, ya, wa = lay.pos[a]
        xb, yb, wb = lay.pos[b]
        pts = _detour(lay, ra, rb, (xa + wa * 0.82, ya), (xb + wb * 0.82, yb + lay.box_h))
        segs = list(zip(pts[0::2], pts[1::2], strict=True))
        for box in lay.rows[ra + 1]:
            bx, by, bw = lay.pos[box.key]
            for (x0, y0), (x1, y1) in pairwise(segs):
                for k in range(21):  # points along the segment stay outside the box
                    x, y = x0 + (x1 - x0) * k / 20, y0 + (y1 - y0) * k / 20
                    assert not (bx < x < bx + bw and by < y < by + lay.box_h), (a, b, box.key)
        crossed += 1
    assert crossed > 0
