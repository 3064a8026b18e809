"""Property tests per family: random valid specs give designs that pass check() and the bounds."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from railplan import InfeasibleError, Spec, SpecError, check, plan, spec_from_dict
from railplan.catalog import load_catalog
from railplan.topology.matrix import matrix_capacity, matrix_groups
from railplan.topology.shape import leaf_split, resolve_shape

NODES = ["hgx-h100-8x400g", "dgx-h100", "h20-4x2x200g"]
SWITCHES = ["cx732q-n", "qm9700", "cx864e-n", "s9827-128dh", "sn5600"]
RATIOS = ["1:1", "2:1", "3:1"]
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CATALOG = load_catalog()


def make(
    family: str, nodes: int, node: str, layout: dict[str, Any] | None = None, **fabric: Any
) -> Spec:
    return spec_from_dict(
        {
            "cluster": {"gpus": nodes * 8, "node": node},
            "fabric": {"topology": family, **fabric},
            "layout": {"node_height_u": 4, **(layout or {})},
        }
    )


@st.composite
def matrix_specs(draw: st.DrawFn) -> Spec:
    node = draw(st.sampled_from(NODES))
    fabric: dict[str, Any] = {
        "switches": [draw(st.sampled_from(SWITCHES))],
        "planes": draw(st.sampled_from([1, 2, 4])),
        "oversubscription": draw(st.sampled_from(RATIOS)),
        "whole_su": draw(st.booleans()),
    }
    if fabric["planes"] == 1 and node != "h20-4x2x200g" and draw(st.booleans()):
        fabric["matrix"] = {"a_ports": sorted(draw(st.permutations(range(8)))[:4])}
    return make("matrix", draw(st.integers(1, 300)), node, **fabric)


@FAST
@given(matrix_specs())
def test_random_matrix_specs_pass_check_or_exceed_the_capacity(spec):
    shape = resolve_shape(spec, CATALOG)
    radix = CATALOG.switch(spec.fabric.switches[0]).radix(shape.port_speed_gbps)
    rails = matrix_groups(spec, shape)[0].rails
    most = matrix_capacity(rails, leaf_split(radix, spec.fabric.oversubscription_ratio))
    nodes = spec.cluster.gpus // 8
    try:
        design = plan(spec, CATALOG)
    except InfeasibleError as exc:
        assert nodes > most and f"at most {most} nodes" in str(exc)
        event("refused: beyond the Matrix capacity")
        return
    event("planned")
    assert nodes <= most
    assert check(design) == []
    assert len(design.switches) >= design.sizing.lower_bound_switches
    bundles = Counter((lk.a_device, lk.b_device) for lk in design.links if lk.kind == "leaf-leaf")
    a = sum(s.role == "leaf-a" for s in design.switches)
    b = sum(s.role == "leaf-b" for s in design.switches)
    assert len(bundles) * spec.fabric.planes == a * b and len(set(bundles.values())) == 1


@st.composite
def fat_tree_specs(draw: st.DrawFn) -> Spec:
    return make(
        "fat-tree",
        draw(st.integers(1, 300)),
        draw(st.sampled_from(NODES)),
        layout={"nodes_per_rack": draw(st.integers(1, 8))},
        switches=[draw(st.sampled_from(SWITCHES))],
        planes=draw(st.sampled_from([1, 2])),
        oversubscription=draw(st.sampled_from(RATIOS)),
        whole_su=draw(st.booleans()),
        fat_tree={"tors_per_rack": draw(st.sampled_from([1, 2]))},
    )


@FAST
@given(fat_tree_specs())
def test_random_fat_tree_specs_pass_check(spec):
    try:
        design = plan(spec, CATALOG)
    except InfeasibleError as exc:
        assert "layout.nodes_per_rack" in str(exc) or "at most" in str(exc)
        event("refused")
        return
    event("planned")
    assert check(design) == []
    assert len(design.switches) >= design.sizing.lower_bound_switches
    per_rack = spec.layout.nodes_per_rack
    racks = math.ceil(len(design.nodes) / per_rack)
    tors = spec.fabric.fat_tree.tors_per_rack
    assert design.switch_counts()["leaf"] == spec.fabric.planes * racks * tors
    assert all(n.rack == n.index // per_rack for n in design.nodes)


@FAST
@given(
    family=st.sampled_from(["roft", "matrix", "fat-tree", "rail-only"]),
    node=st.sampled_from(NODES),
    switch=st.sampled_from(SWITCHES),
    nodes=st.integers(1, 64),
    planes=st.sampled_from([1, 2, 4, 8]),
    assignment=st.sampled_from(["auto", "port", "nic"]),
)
def test_random_multi_plane_specs_give_separate_identical_planes(
    family, node, switch, nodes, planes, assignment
):
    spec = make(family, nodes, node, switches=[switch], planes=planes, plane_assignment=assignment)
    try:
        design = plan(spec, CATALOG)
    except SpecError as exc:
        assert "fabric.planes" in str(exc)  # the ports do not split into these planes
        event("refused: planes")
        return
    except InfeasibleError as exc:
        assert "at most" in str(exc)
        event("refused: capacity")
        return
    event(f"planned {family}")
    assert check(design) == []
    assert len(design.switches) >= design.sizing.lower_bound_switches
    per_plane = Counter(s.plane for s in design.switches)
    assert set(per_plane) == set(range(planes)) and len(set(per_plane.values())) == 1
    switches = design.switch_by_id()
    for lk in design.links:
        assert switches[lk.b_device].plane == lk.plane
        if lk.a_device in switches:
            assert switches[lk.a_device].plane == lk.plane
        else:
            assert design.shape.port_plane[lk.a_port] == lk.plane
