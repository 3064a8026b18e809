"""ROFT and rail-only sizing: the acceptance counts and the closed-form formulas."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from railplan import InfeasibleError, check, plan
from tests.conftest import make_spec


def test_1024_gpus_on_64_port_switches_at_1_to_1(catalog):
    design = plan(make_spec(1024, switches=["qm9700"]), catalog)
    assert design.switch_counts() == {"leaf": 32, "spine": 16, "core": 0, "total": 48}
    links = design.link_counts()
    assert links["node_leaf"] == 1024 and links["leaf_spine"] == 1024
    assert design.sizing.tiers == 2
    assert design.sizing.lower_bound_switches == 48
    assert check(design) == []


def test_every_leaf_sends_equal_bundles_to_every_spine(catalog):
    design = plan(make_spec(1024, switches=["qm9700"]), catalog)
    bundles = Counter((lk.a_device, lk.b_device) for lk in design.links if lk.kind == "leaf-spine")
    assert set(bundles.values()) == {2}  # 32 uplinks over 16 spines
    assert len(bundles) == 32 * 16


def test_rail_k_of_every_node_in_an_su_lands_on_leaf_k(catalog):
    design = plan(make_spec(1024, switches=["qm9700"]), catalog)
    switches = design.switch_by_id()
    nodes = design.node_by_id()
    for lk in design.links:
        if lk.kind == "node-leaf":
            leaf = switches[lk.b_device]
            assert leaf.rail == design.shape.port_rail[lk.a_port] == lk.a_port
            assert leaf.su == nodes[lk.a_device].su


def test_three_tier_16k_gpus(catalog):
    design = plan(make_spec(16384, node="dgx-h100", switches=["qm9700"]), catalog)
    assert design.sizing.tiers == 3
    assert design.switch_counts() == {"leaf": 512, "spine": 512, "core": 256, "total": 1280}
    links = design.link_counts()
    assert links["node_leaf"] == links["leaf_spine"] == links["spine_core"] == 16384
    assert check(design) == []


def test_largest_three_tier_is_r_cubed_over_4_and_one_node_more_is_refused(catalog):
    # R = 64: R^3/4 = 65,536 NIC ports = 65,536 GPUs with one 400G port per GPU.
    spec = make_spec(65536 + 8, node="dgx-h100", switches=["qm9700"])
    with pytest.raises(InfeasibleError, match="at most 65536 GPUs"):
        plan(spec, catalog)


def test_largest_two_tier_is_r_squared_over_2(catalog):
    design = plan(make_spec(2048, switches=["qm9700"]), catalog)
    assert design.sizing.tiers == 2
    assert design.switch_counts()["leaf"] == 64 and design.switch_counts()["spine"] == 32
    design3 = plan(make_spec(2056, switches=["qm9700"]), catalog)
    assert design3.sizing.tiers == 3


@pytest.mark.parametrize("ratio,down,up", [("1:1", 32, 32), ("3:1", 48, 16), ("2:1", 42, 21)])
def test_oversubscription_splits_the_leaf(catalog, ratio, down, up):
    design = plan(make_spec(1024, switches=["qm9700"], oversubscription=ratio), catalog)
    assert (design.sizing.leaf_down, design.sizing.leaf_up) == (down, up)
    leaves = math.ceil(128 / down) * 8
    assert design.switch_counts()["leaf"] == leaves
    assert design.link_counts()["leaf_spine"] == leaves * up
    assert check(design) == []


def test_partial_su_is_provisioned_whole_by_default(catalog):
    whole = plan(make_spec(8 * 40, switches=["qm9700"]), catalog)  # 40 nodes: 1 SU + 8 nodes
    assert whole.switch_counts()["leaf"] == 16
    assert whole.link_counts()["leaf_spine"] == 16 * 32
    lean = plan(make_spec(8 * 40, switches=["qm9700"], whole_su=False), catalog)
    assert lean.switch_counts()["leaf"] == 16
    assert lean.link_counts()["leaf_spine"] < whole.link_counts()["leaf_spine"]
    assert check(lean) == []


def test_leaves_keep_uplinks_even_when_a_rail_fits_one_switch(catalog):
    design = plan(
        make_spec(64, switches=["qm9700"], topology="roft"), catalog
    )  # 8 nodes fit one leaf per rail
    assert design.switch_counts()["spine"] > 0
    assert design.sizing.tiers == 2


def test_two_planes_double_everything_and_stay_apart(catalog):
    one = plan(make_spec(1024, switches=["qm9700"]), catalog)
    two = plan(make_spec(2048, switches=["qm9700"], planes=2), catalog)
    assert two.switch_counts()["total"] == 2 * one.switch_counts()["total"]
    assert {s.plane for s in two.switches} == {0, 1}
    assert check(two) == []


def test_rail_only_one_switch_when_all_ports_fit(catalog):
    design = plan(make_spec(16, topology="rail-only", switches=["cx732q-n"]), catalog)
    assert design.switch_counts()["total"] == 1 and design.sizing.tiers == 1
    assert check(design) == []


def test_rail_only_one_switch_per_rail(catalog):
    design = plan(make_spec(256, topology="rail-only", switches=["cx732q-n"]), catalog)
    assert design.switch_counts()["total"] == 8
    assert {s.rail for s in design.switches} == set(range(8))
    assert check(design) == []


def test_rail_only_refuses_with_the_maximum(catalog):
    with pytest.raises(InfeasibleError, match="at most 32 nodes"):
        plan(make_spec(8 * 33, topology="rail-only", switches=["cx732q-n"]), catalog)


def test_several_allowed_switches_pick_the_cheapest_priced_fabric(catalog):
    from railplan.pipeline.build import build
    from railplan.solve.switch_choice import choose

    spec = make_spec(1024, switches=["qm9700", "cx864e-n"])
    design = plan(spec, catalog)
    _, report = choose(spec, catalog, "cost")
    cheapest = min(report.bases, key=lambda c: c.cost_usd)
    assert design.sizing.switch_model == cheapest.models["leaf"]
    assert build(spec, catalog, layout=False).design == design  # the CLI's answer too


def test_dual_port_nics_give_one_rail_per_port(catalog):
    design = plan(make_spec(32, node="h20-4x2x200g", switches=["cx864e-n"]), catalog)
    assert design.shape.ports == 8 and design.shape.port_speed_gbps == 200
    assert design.sizing.radix == 256
    assert check(design) == []
