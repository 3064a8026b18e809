"""The Matrix topology figure, measured on its geometry (``matrix_figure``), not its pixels:
A and B leaf groups as columns on opposite sides of the nodes, node lines that never pass
through a switch box, one labelled A-B bundle between the groups, one SU numbering for
nodes, A leaves and B leaves, and a legend for every line style drawn."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import pytest
import yaml
from shapely.geometry import LineString, Polygon
from shapely.geometry import box as frame_box

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.pipeline.build import build
from railplan.render.drawing_files import drawing_bytes
from railplan.render.pdf_topology import FIGURE_SIZE, figure_drawing, figure_graph
from railplan.render.topology_matrix import KEYS, MatrixFigure, matrix_figure
from railplan.spec import spec_from_dict

from .conftest import EXAMPLES

#: seed003 (4 nodes, 4 A leaves, 1 B leaf: one box a device), matrix-4k at 1, 4 and 16 SUs
CASES = [("seed003-matrix", 32), ("matrix-4k", 1024), ("matrix-4k", 4096), ("matrix-4k", 16384)]
#: the sheets' topology page (A4 landscape less margins and the heading) and the stand-alone
SIZES = [FIGURE_SIZE, (770.0, 470.0)]


@cache
def design(example: str, gpus: int, planes: int = 1) -> Design:
    data = yaml.safe_load((EXAMPLES / f"{example}.yaml").read_text(encoding="utf-8"))
    data["cluster"]["gpus"] = gpus
    data["fabric"]["planes"] = planes
    return build(spec_from_dict(data), load_catalog(), layout=False).design


def figure(example: str, gpus: int, size: tuple[float, float] = FIGURE_SIZE) -> MatrixFigure:
    d = design(example, gpus)
    return matrix_figure(d, figure_graph(d), *size)


def polygon(fig: MatrixFigure, key: str) -> Polygon:
    x, y, w, h = fig.frames[key]
    return frame_box(x, y, x + w, y + h)


def role_of(d: Design) -> dict[str, str]:
    out = {n.id: "node" for n in d.nodes}
    out.update({sw.id: sw.role for sw in d.switches if sw.plane == 0})
    return out


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(("example", "gpus"), CASES)
def test_node_lines_never_pass_through_a_box(example: str, gpus: int, size) -> None:
    fig = figure(example, gpus, size)
    d = design(example, gpus)
    role = role_of(d)
    node_leaf = [lk for lk in d.links if lk.plane == 0 and "node" in (role[lk.a_device],
                                                                      role[lk.b_device])]  # fmt: skip
    assert sum(ln.links for ln in fig.lines) == len(node_leaf)  # every node link is drawn
    assert {ln.side for ln in fig.lines} == {"A", "B"}
    for ln in fig.lines:
        seg = LineString([ln.start, ln.end])
        for key in fig.frames:
            box = polygon(fig, key)
            if key in (ln.node, ln.leaf):  # it ends on the edge of its two boxes, no further
                assert seg.intersects(box) and seg.intersection(box).length == 0, (ln, key)
            else:
                assert not seg.intersects(box), (ln.node, ln.leaf, key)
    # the bus and its stubs touch no box but the leaf each stub taps
    bus = LineString(fig.bus)
    assert not any(bus.intersects(polygon(fig, k)) for k in fig.frames)
    for start, end in fig.stubs:
        stub = LineString([start, end])
        touched = [k for k in fig.frames if stub.intersects(polygon(fig, k))]
        assert len(touched) == 1 and fig.column[touched[0]] in ("A", "B")
        assert stub.intersection(polygon(fig, touched[0])).length == 0


@pytest.mark.parametrize(("example", "gpus"), CASES)
def test_a_and_b_groups_sit_on_opposite_sides_with_the_bundle_between(example, gpus) -> None:
    fig = figure(example, gpus)
    cols = {c: [fig.frames[k] for k, v in fig.column.items() if v == c] for c in ("A", "node", "B")}
    right = {c: max(x + w for x, _, w, _ in f) for c, f in cols.items()}
    left = {c: min(x for x, _, _, _ in f) for c, f in cols.items()}
    assert right["A"] < left["node"] and right["node"] < left["B"]
    # the bus runs from the A column's outer side over every box to the B column's outer side
    (x0, _), (_, y_top), _, (x1, _) = fig.bus
    assert x0 < left["A"] and x1 > right["B"]
    assert y_top > max(y + h for f in cols.values() for _, y, _, h in f)
    # each leaf of both groups is tapped onto it
    tapped = {k for k in fig.frames for s in fig.stubs if LineString(s).intersects(polygon(fig, k))}
    assert tapped == {k for k, c in fig.column.items() if c in ("A", "B")}
    # one label for the whole bundle, between the two groups, with its link count
    x, y, text = fig.bus_label
    assert right["A"] < x < left["B"] and y > max(y + h for f in cols.values() for _, y, _, h in f)
    d = design(example, gpus)
    role = role_of(d)
    pairs = Counter(
        frozenset((lk.a_device, lk.b_device))
        for lk in d.links
        if {role.get(lk.a_device), role.get(lk.b_device)} == {"leaf-a", "leaf-b"}
    )
    a = sum(1 for r in role.values() if r == "leaf-a")
    b = sum(1 for r in role.values() if r == "leaf-b")
    assert len(pairs) == a * b  # complete bipartite, as the label says
    assert f"({sum(pairs.values()):,} links)" in text and "complete bipartite" in text
    assert f"{set(pairs.values()).pop():,} link" in text
    assert sum(n for ka, kb, n in fig.graph.bundles
               if {fig.column[ka], fig.column[kb]} == {"A", "B"}) == sum(pairs.values())  # fmt: skip


KINDS = ("leaf-a", "leaf-b")


def test_a_multi_plane_matrix_draws_plane_0_and_says_so() -> None:
    d = design("matrix-4k", 4096, 2)
    fig = matrix_figure(d, figure_graph(d), *FIGURE_SIZE)
    assert "plane 0 of 2; the other planes are wired the same" in fig.legend[0]
    role = role_of(d)  # plane 0's switches
    plane0 = [lk for lk in d.links if lk.plane == 0]
    nodes = sum(1 for lk in plane0 if "node" in (role.get(lk.a_device), role.get(lk.b_device)))
    assert sum(ln.links for ln in fig.lines) == nodes
    leaf = {sw.id: sw.role for sw in d.switches if sw.role in ("leaf-a", "leaf-b")}
    ab = Counter(
        lk.plane for lk in d.links if {leaf.get(lk.a_device), leaf.get(lk.b_device)} == set(KINDS)
    )
    assert set(ab) == {0, 1}  # both planes have their A-B bundle; the figure labels plane 0's
    assert fig.bus_label[2].endswith(f"({ab[0]:,} links)")


def test_matrix_4k_bundle_is_the_examples_16_by_16_by_8() -> None:
    # examples/matrix-4k.yaml: 16 A leaves, 16 B leaves, 8 links between every A-B pair
    _, _, text = figure("matrix-4k", 4096).bus_label
    assert text == (
        "A-B bundle, complete bipartite: each of the 16 A leaves to each of the 16 B leaves, "
        "8 links a pair (2,048 links)"
    )


def su_span(title: str) -> str:
    found = re.search(r"SU[0-9]+(-[0-9]+)?$", title)
    assert found, title
    return found.group()


@pytest.mark.parametrize("gpus", [1024, 4096, 16384])
def test_groups_follow_one_su_definition_row_by_row(gpus: int) -> None:
    fig = figure("matrix-4k", gpus)
    d = design("matrix-4k", gpus)
    su = {n.id: n.su for n in d.nodes}
    boxes = {b.key: b for b in fig.graph.boxes}
    by_col = {c: sorted(k for k, v in fig.column.items() if v == c) for c in ("A", "node", "B")}
    spans = {c: [su_span(boxes[k].title) for k in keys] for c, keys in by_col.items()}
    assert spans["A"] == spans["node"] == spans["B"]  # the same groups in every column
    for key in by_col["node"]:  # a node box's title names its nodes' own SUs
        sus = sorted({su[m] + 1 for m in boxes[key].members})
        want = f"SU{sus[0]}" + (f"-{sus[-1]}" if len(sus) > 1 else "")
        assert su_span(boxes[key].title) == want
    for ln in fig.lines:  # each node box links only to the leaves of its SUs, on its own row
        assert su_span(boxes[ln.leaf].title) == su_span(boxes[ln.node].title)
        assert ln.start[1] == pytest.approx(ln.end[1])
    assert len(fig.lines) == 2 * len(by_col["node"])
    assert len(fig.line_labels) == len(fig.lines) and not fig.captions
    assert fig.legend[1].endswith("so each row is one SU.")  # and the legend says so


def test_fanned_lines_get_one_caption_per_gap() -> None:
    fig = figure("seed003-matrix", 32)  # 4 nodes to each of 4 A leaves, 4 nodes to 1 B leaf
    assert not fig.line_labels
    assert len(fig.legend) == 1  # a box a device: no SU rows to speak of
    assert sorted(t for _, _, t in fig.captions) == [
        "16 lines of 1 link each (16 links)",
        "4 lines of 4 links each (16 links)",
    ]


@pytest.mark.parametrize(("example", "gpus"), CASES)
def test_the_legend_keys_every_line_style_drawn(example: str, gpus: int) -> None:
    fig = figure(example, gpus)
    assert fig.keys == ("A", "B", "bus")
    assert fig.legend and fig.legend[0].startswith("matrix, 1 tier(s), no spine, plane 0 of 1")
    styles = {(str(KEYS[k][0]), str(KEYS[k][1])) for k in fig.keys}
    assert len(styles) == 3  # three styles that differ, each with its key
    svg = drawing_bytes(figure_drawing(design(example, gpus)), "svg").decode()
    for key in fig.keys:
        assert KEYS[key][3] in svg
    assert fig.legend[0].split(";")[0] in svg


def test_roft_figures_keep_their_legend() -> None:
    d = design("h100-1k", 1024)
    svg = drawing_bytes(figure_drawing(d), "svg").decode()
    assert "links between adjacent rows" in svg and "plane 0 of 1" in svg
    assert "A-B bundle" not in svg


def test_matrix_figure_is_byte_stable() -> None:
    d = design("matrix-4k", 4096)
    assert drawing_bytes(figure_drawing(d), "pdf") == drawing_bytes(figure_drawing(d), "pdf")


@pytest.mark.parametrize(("example", "gpus"), CASES)
def test_dot_export_draws_the_matrix_as_three_columns_and_one_bundle(example, gpus) -> None:
    from railplan.render import dot
    from railplan.render.fabric_graph import fabric_graph

    d = design(example, gpus)
    text = dot.render(d)
    assert "rankdir=LR" in text
    graph = fabric_graph(d, per_role=True)
    role = {b.key: b.role for b in graph.boxes}
    edges = re.findall(r'^\t+"?([^"\s]+)"? -- "?([^"\s]+)"? \[([^\]]*)\]', text, re.M)
    seen = [(a, b) for a, b, attrs in edges if "invis" not in attrs]
    assert len(seen) == len(graph.bundles) - len(
        [1 for a, b, _ in graph.bundles if {role[a], role[b]} == {"leaf-a", "leaf-b"}]
    ) + len([k for k in role if role[k] != "node"])  # node edges, and one a leaf box
    # no edge joins an A box to a B box: they meet only in the one bundle node
    assert not any({role.get(a), role.get(b)} == {"leaf-a", "leaf-b"} for a, b in seen)
    hub = [a if a in role else b for a, b in seen if "a-b-bundle" in (a, b)]
    leaves = sorted(k for k, r in role.items() if r in ("leaf-a", "leaf-b"))
    assert sorted(hub) == leaves  # every leaf box joined to the bundle once
    role_of_device = role_of(d)
    ab = sum(1 for lk in d.links
             if {role_of_device.get(lk.a_device), role_of_device.get(lk.b_device)}
             == {"leaf-a", "leaf-b"})  # fmt: skip
    assert f"({ab:,} links)" in text and "complete bipartite" in text
    # the columns left to right: every A box before the nodes, the nodes before every B box
    ranks = re.findall(r"subgraph rank(\d) \{(.*?)\n\t\}", text, re.S)
    members = {
        int(r): set(re.findall(r'^\t\t"?([^"\s]+)"? \[label', body, re.M)) for r, body in ranks
    }
    assert members[0] == {k for k, r in role.items() if r == "leaf-a"}
    assert members[2] == {k for k, r in role.items() if r == "leaf-b"}
    assert members[1] == {k for k, r in role.items() if r == "node"} | {"a-b-bundle"}
