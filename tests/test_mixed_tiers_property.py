"""Sweep: fabrics whose tiers differ (leaf radix != spine radix, down speed != up speed) keep the
non-blocking and oversubscription rules tier by tier, re-derived here from the links alone."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import InfeasibleError, check, plan
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.spec.tiers import ratio_value
from tests.conftest import make_spec

CATALOG = load_catalog()

#: (node, leaf model, leaf up Gb/s, spine model, spine up Gb/s, core model)
SCENARIOS = [
    ("h20-4x2x200g", "cx864e-n", 400, "s9827-128dh", None, "s9827-128dh"),  # 200/400, 128 spine
    ("h20-4x2x200g", "s9827-128dh", 400, "cx864e-n", None, "sn5600"),
    ("h20-4x2x200g", "cx864e-n", 400, "cx864e-n", 800, "sn5600"),  # 200 / 400 / 800
    ("hgx-h100-8x400g", "cx864e-n", 800, "sn5600", None, "cx864e-n"),  # 400 down, 800 up
    ("hgx-h100-8x400g", "qm9700", None, "q3400", None, "q3400"),  # 64-port leaves, 288 spines
    ("dgx-h100", "cx732q-n", None, "s9827-128dh", None, "cx864e-n"),  # 32-port leaves
]
LEAF_RATIOS = ["1:1", "3:1", "17:15", "1.5"]
SPINE_RATIOS = [None, "1:1", "2:1"]


@st.composite
def mixed_specs(draw: Any) -> Any:
    node, leaf, leaf_up, spine, spine_up, core = draw(st.sampled_from(SCENARIOS))
    spine_ratio = draw(st.sampled_from(SPINE_RATIOS))
    tiers = draw(st.sampled_from(["auto", 3]))
    fabric: dict[str, Any] = {
        "leaf": {"switches": [leaf], "oversubscription": draw(st.sampled_from(LEAF_RATIOS))},
        "spine": {"switches": [spine]},
        "core": {"switches": [core]},
        "planes": draw(st.sampled_from([1, 2])),
        "whole_su": draw(st.booleans()),
        "tiers": tiers,
    }
    if leaf_up:
        fabric["leaf"]["up_gbps"] = leaf_up
    if spine_up:
        fabric["spine"]["up_gbps"] = spine_up
    if spine_ratio and tiers == 3:
        fabric["spine"]["oversubscription"] = spine_ratio
    nodes = draw(st.integers(min_value=1, max_value=320))
    return make_spec(nodes * 8, node=node, **fabric)


def per_switch_bandwidth(d: Design) -> tuple[Counter[str], Counter[str]]:
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    for lk in d.links:
        if lk.kind != "leaf-leaf":
            up[lk.a_device] += lk.rate_gbps
            down[lk.b_device] += lk.rate_gbps
    return down, up


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_specs())
def test_mixed_tier_fabrics_keep_every_tier_within_its_ratio(spec: Any) -> None:
    try:
        design = plan(spec, CATALOG)
    except InfeasibleError:
        return
    assert check(design, CATALOG) == []
    f = spec.fabric
    leaf_ratio = ratio_value(f.oversubscription)
    spine_ratio = ratio_value(f.spine.oversubscription) if f.spine.oversubscription else Fraction(1)
    down, up = per_switch_bandwidth(design)
    models = {sw.role: sw.model for sw in design.switches}
    assert models["leaf"] == f.leaf.switches[0] and models["spine"] == f.spine.switches[0]
    nic = design.shape.port_speed_gbps
    leaf_up = f.leaf.up_gbps or nic
    for sw in design.switches:
        if sw.role == "leaf":
            assert up[sw.id] > 0 and down[sw.id] <= leaf_ratio * up[sw.id]
            if leaf_ratio == 1:  # non-blocking: every node port has its uplink bandwidth
                assert down[sw.id] <= up[sw.id]
            _fits_cages(sw.model, design, sw.id)
        elif sw.role == "spine" and design.sizing.tiers == 3:
            assert down[sw.id] <= spine_ratio * up[sw.id]
            if spine_ratio == 1:
                assert down[sw.id] <= up[sw.id]
    for lk in design.links:
        want = {"node-leaf": nic, "leaf-spine": leaf_up, "spine-core": f.spine.up_gbps or leaf_up}
        assert lk.rate_gbps == want[lk.kind]
    total_nodes = sum(up[s.id] for s in design.switches if s.role == "leaf")
    if leaf_ratio == 1:  # the leaf tier as a whole never narrows the nodes' bandwidth
        assert sum(down[s.id] for s in design.switches if s.role == "leaf") <= total_nodes


def _fits_cages(model_id: str, design: Design, sw_id: str) -> None:
    """The ports a leaf uses fit its model's cages; at two speeds no cage mixes them."""
    sw = design.switch_by_id()[sw_id]
    down_cages = {sw.cage_of(lk.b_port)[0] for lk in design.links if lk.b_device == sw_id}
    up_cages = {sw.cage_of(lk.a_port)[0] for lk in design.links if lk.a_device == sw_id}
    assert max(down_cages | up_cages) < CATALOG.switch(model_id).cages
    if sw.mixed_speed:
        assert down_cages.isdisjoint(up_cages)
        assert max(down_cages) < min(up_cages)
