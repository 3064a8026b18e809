"""compare() and the figures behind it: Matrix vs ROFT from the wiring, hops, examples."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from railplan import check, load_spec, plan, spec_from_dict
from railplan.design import Design
from railplan.design.metrics import inter_switch_links, max_hops
from railplan.pipeline.compare import FAMILIES, compare

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MY_EXAMPLES = ["seed003-matrix", "seed003-roft", "fat-tree-1k", "matrix-4k"]


def spec(gpus: int, node: str, switch: str, family: str = "roft", **fabric: Any) -> Any:
    return spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": node},
            "fabric": {"topology": family, "switches": [switch], **fabric},
        }
    )


def every_port_used(design: Design) -> bool:
    """True when every switch has all its ports cabled (whole leaves, whole spines)."""
    used: Counter[str] = Counter()
    for lk in design.links:
        used[lk.a_device] += 1
        used[lk.b_device] += 1
    return all(used[s.id] == s.radix for s in design.switches)


def pair(node: str, switch: str, nodes: int, catalog: Any) -> tuple[Design | None, Design]:
    """Matrix and ROFT for the same cluster; no Matrix where ROFT needs more than 2 tiers."""
    roft = plan(spec(nodes * 8, node, switch, "roft"), catalog)
    if roft.sizing.tiers != 2:
        return None, roft
    return plan(spec(nodes * 8, node, switch, "matrix"), catalog), roft


# -- Matrix vs 2-tier ROFT, derived from the generated wiring ----------------------------------


@pytest.mark.parametrize(
    "node,switch,sus",
    [
        ("h20-4x2x200g", "cx732q-n", range(1, 9)),  # 64x200G
        ("hgx-h100-8x400g", "qm9700", range(1, 9)),  # 64x400G, NICs split 4 A / 4 B
        ("h20-4x2x200g", "qm9700", (1, 2, 3, 4, 6, 8, 16)),  # 128x200G
        ("dgx-h100", "cx864e-n", (1, 2, 3, 4, 8)),  # 128x400G
        ("h20-4x2x200g", "cx864e-n", (1, 2, 4)),  # 256x200G
    ],
)
def test_matrix_uses_two_thirds_of_the_switches_and_half_the_links_when_leaves_are_whole(
    catalog, node, switch, sus
):
    su_nodes = plan(spec(8, node, switch), catalog).sizing.su_nodes
    whole_sizes = []
    for k in sus:
        matrix, roft = pair(node, switch, k * su_nodes, catalog)
        assert matrix is not None
        if not (every_port_used(matrix) and every_port_used(roft)):
            continue
        whole_sizes.append(k)
        assert Fraction(len(matrix.switches), len(roft.switches)) == Fraction(2, 3)
        assert Fraction(inter_switch_links(matrix), inter_switch_links(roft)) == Fraction(1, 2)
        # the same NIC ports land on the same number of leaves; Matrix drops the spines
        assert matrix.switch_counts()["leaf"] == roft.switch_counts()["leaf"]
    assert 1 in whole_sizes and 2 in whole_sizes and len(whole_sizes) >= 3


@pytest.mark.parametrize(
    "node,switch,sizes",
    [
        ("h20-4x2x200g", "cx732q-n", range(1, 257, 7)),
        ("dgx-h100", "cx732q-n", range(1, 65)),
        ("h20-4x2x200g", "qm9700", (100, 333, 640, 777, 1000)),
    ],
)
def test_partial_sizes_keep_the_stated_bound(catalog, node, switch, sizes):
    """At 1:1 with whole SUs, for every size a 2-tier ROFT holds, Matrix uses at most 3/4 of
    its switches and 11/20 of its switch-to-switch links (whole leaves: exactly 2/3 and 1/2),
    and at most 3/2 of Matrix's own closed-form lower bound.
    """
    for nodes in sizes:
        matrix, roft = pair(node, switch, nodes, catalog)
        if matrix is None:
            continue
        assert len(matrix.switches) <= Fraction(3, 4) * len(roft.switches), nodes
        assert inter_switch_links(matrix) <= Fraction(11, 20) * inter_switch_links(roft), nodes
        lower = matrix.sizing.lower_bound_switches
        assert lower <= len(matrix.switches) <= Fraction(3, 2) * lower, nodes


# -- hops and links from the wiring ------------------------------------------------------------


@pytest.mark.parametrize(
    "gpus,node,switch,family,hops",
    [
        (1024, "h20-4x2x200g", "cx864e-n", "matrix", 2),
        (1024, "hgx-h100-8x400g", "qm9700", "roft", 3),
        (16384, "dgx-h100", "qm9700", "roft", 5),
        (16, "hgx-h100-8x400g", "cx732q-n", "rail-only", 1),  # one switch
        (256, "hgx-h100-8x400g", "cx732q-n", "rail-only", 1),  # one switch per rail
        (32, "hgx-h100-8x400g", "qm9700", "fat-tree", 1),  # one rack, one ToR
        (256, "hgx-h100-8x400g", "qm9700", "fat-tree", 3),
    ],
)
def test_max_hops_follow_the_family(catalog, gpus, node, switch, family, hops):
    design = plan(spec(gpus, node, switch, family), catalog)
    assert max_hops(design) == hops
    links = design.link_counts()
    assert (
        inter_switch_links(design) == links["leaf_spine"] + links["spine_core"] + links["leaf_leaf"]
    )


def test_max_hops_is_derived_from_the_wiring(catalog):
    design = plan(spec(1024, "h20-4x2x200g", "cx864e-n", "matrix"), catalog)
    a, b = "p0-leafA-r0-01", "p0-leafB-01"
    cut = tuple(lk for lk in design.links if (lk.a_device, lk.b_device) != (a, b))
    # without its direct links, A->B traffic of that pair detours A -> B' -> A' -> B
    assert max_hops(replace(design, links=cut)) == 4
    assert inter_switch_links(replace(design, links=cut)) == inter_switch_links(design) - 32


# -- compare() ---------------------------------------------------------------------------------


def test_compare_plans_every_family_side_by_side(catalog):
    rows = compare(load_spec(EXAMPLES / "seed003-matrix.yaml"), catalog)
    assert [r.family for r in rows] == list(FAMILIES)
    for row in rows:
        assert row.design is not None and row.reason == ""
        assert row.design.topology == row.family
        assert check(row.design) == []
        assert row.max_hops == max_hops(row.design)
        assert row.inter_switch_links == inter_switch_links(row.design)
    by = {r.family: r for r in rows}
    assert by["matrix"].max_hops == 2 and by["roft"].max_hops == 3
    assert by["rail-only"].max_hops == 1


def test_compare_gives_the_reason_when_a_family_cannot_hold_the_cluster(catalog):
    rows = compare(spec(8 * 257, "h20-4x2x200g", "cx732q-n"), catalog)  # 64x200G: R^2/4 NICs
    by = {r.family: r for r in rows}
    assert by["roft"].design is not None and by["fat-tree"].design is not None
    assert by["matrix"].design is None and "at most 256 nodes" in by["matrix"].reason
    assert by["rail-only"].design is None and "rail-only holds at most" in by["rail-only"].reason
    assert by["matrix"].max_hops is None and by["matrix"].inter_switch_links is None


def test_compare_reports_a_spec_the_family_cannot_use(catalog):
    # 8 planes leave one port per node and plane: no A/B split for a Matrix
    rows = compare(spec(64, "hgx-h100-8x400g", "cx864e-n", planes=8), catalog)
    by = {r.family: r for r in rows}
    assert by["matrix"].design is None and "fabric.planes" in by["matrix"].reason
    assert by["roft"].design is not None


# -- examples ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", MY_EXAMPLES)
def test_examples_plan_and_pass_check(catalog, name):
    s = load_spec(EXAMPLES / f"{name}.yaml")
    design = plan(s, catalog)
    assert design.topology == s.fabric.topology
    assert check(design) == []


def test_seed003_testbed_in_both_families(catalog):
    matrix = plan(load_spec(EXAMPLES / "seed003-matrix.yaml"), catalog)
    roft = plan(load_spec(EXAMPLES / "seed003-roft.yaml"), catalog)
    assert len(matrix.nodes) == len(roft.nodes) == 4
    assert matrix.shape.nics == 4 and matrix.shape.ports_per_nic == 2
    assert matrix.switch_counts()["total"] < roft.switch_counts()["total"]
    assert inter_switch_links(matrix) < inter_switch_links(roft)
