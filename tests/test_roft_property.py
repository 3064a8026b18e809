"""Property tests: random valid specs give designs that pass check and follow the formulas."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import InfeasibleError, check, plan
from railplan.topology.shape import divisors, leaf_split
from tests.conftest import make_spec

NODES = ["hgx-h100-8x400g", "dgx-h100", "h20-4x2x200g"]
SWITCHES = ["cx732q-n", "qm9700", "cx864e-n", "s9827-128dh", "sn5600"]


@st.composite
def roft_specs(draw):  # type: ignore[no-untyped-def]
    node = draw(st.sampled_from(NODES))
    switch = draw(st.sampled_from(SWITCHES))
    planes = draw(st.sampled_from([1, 2]))
    nodes = draw(st.integers(min_value=1, max_value=300))
    ratio = draw(st.sampled_from(["1:1", "2:1", "3:1"]))
    whole = draw(st.booleans())
    return make_spec(
        nodes * 8,
        node=node,
        switches=[switch],
        planes=planes,
        oversubscription=ratio,
        whole_su=whole,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roft_specs())
def test_random_roft_specs_pass_check_and_follow_the_sizing_formulas(spec):
    catalog_switch = spec.fabric.switches[0]
    try:
        design = plan(spec)
    except InfeasibleError:
        return
    assert check(design) == []
    assert len(design.switches) >= design.sizing.lower_bound_switches
    assert design.sizing.switch_model == catalog_switch
    shape = design.shape
    radix = design.sizing.radix
    split = leaf_split(radix, spec.fabric.oversubscription_ratio)
    n = len(design.nodes)
    rails = shape.ports // spec.fabric.planes
    leaves_per_plane = rails * math.ceil(n / split.down)
    counts = design.switch_counts()
    assert counts["leaf"] == spec.fabric.planes * leaves_per_plane
    assert design.link_counts()["node_leaf"] == n * shape.ports
    if spec.fabric.whole_su:
        assert design.link_counts()["leaf_spine"] == counts["leaf"] * split.up
    # 2 tiers exactly when every leaf of a plane fits one spine's ports
    assert (design.sizing.tiers == 2) == (leaves_per_plane <= radix)
    if design.sizing.tiers == 2 and spec.fabric.whole_su:
        spines = min(s for s in divisors(split.up) if leaves_per_plane * split.up // s <= radix)
        assert counts["spine"] == spec.fabric.planes * spines
        assert counts["core"] == 0


@settings(max_examples=40, deadline=None)
@given(
    nodes=st.integers(min_value=1, max_value=64),
    switch=st.sampled_from(SWITCHES),
    planes=st.sampled_from([1, 2, 4, 8]),
)
def test_random_rail_only_specs_pass_check(nodes, switch, planes):
    spec = make_spec(nodes * 8, switches=[switch], topology="rail-only", planes=planes)
    try:
        design = plan(spec)
    except InfeasibleError as exc:
        assert "rail-only holds at most" in str(exc)
        return
    assert check(design) == []
    assert design.sizing.tiers == 1
    assert len(design.switches) >= design.sizing.lower_bound_switches
