"""Per-rack fat-tree: rack membership, 1 or 2 ToRs, uplinks, tiers and refusals."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any

import pytest

from railplan import InfeasibleError, SpecError, check, plan, spec_from_dict
from railplan.design import Design
from railplan.design.metrics import max_hops


def ft_spec(gpus: int, node: str = "hgx-h100-8x400g", per_rack: int = 4, **fabric: Any) -> Any:
    fabric.setdefault("switches", ["qm9700"])
    layout = {"nodes_per_rack": per_rack, "node_height_u": 4}  # 4U nodes: 8 fit a 42U rack
    return spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": node},
            "fabric": {"topology": "fat-tree", **fabric},
            "layout": layout,
        }
    )


def test_every_nic_of_a_node_goes_to_its_racks_tor(catalog):
    design = plan(ft_spec(8 * 30), catalog)  # 30 nodes: 7 full racks + one of 2
    switches = design.switch_by_id()
    nodes = design.node_by_id()
    for lk in design.links:
        if lk.kind == "node-leaf":
            tor = switches[lk.b_device]
            node = nodes[lk.a_device]
            assert tor.role == "tor" and tor.rack == node.rack == node.su == node.index // 4
            assert tor.id == f"p0-tor-rk{node.rack + 1:03d}-a"
    assert design.switch_counts()["leaf"] == 8  # racks
    # qm9700 is InfiniBand: the subnet manager's static D-mod-k, not a hash
    assert design.topology == "fat-tree" and design.routing.policy == "dmodk"
    assert check(design) == []


def test_two_tors_per_rack_alternate_a_nodes_ports(catalog):
    design = plan(ft_spec(8 * 16, fat_tree={"tors_per_rack": 2}), catalog)
    on: dict[str, list[str]] = defaultdict(list)
    for lk in design.links:
        if lk.kind == "node-leaf":
            on[lk.a_device].append(lk.b_device[-1])
    assert all(Counter(tors) == {"a": 4, "b": 4} for tors in on.values())
    assert design.switch_counts()["leaf"] == 2 * 4
    assert check(design) == []


def test_tor_uplinks_match_the_rack_and_the_ratio(catalog):
    design = plan(ft_spec(8 * 64, oversubscription="3:1"), catalog)  # 32 ports per rack
    ups = Counter(lk.a_device for lk in design.links if lk.kind == "leaf-spine")
    assert set(ups.values()) == {math.ceil(32 / 3)}
    assert check(design) == []


def test_partial_rack_is_provisioned_whole_by_default(catalog):
    whole = plan(ft_spec(8 * 5), catalog)  # one full rack and a rack with 1 node
    lean = plan(ft_spec(8 * 5, whole_su=False), catalog)
    up = Counter(lk.a_device for lk in whole.links if lk.kind == "leaf-spine")
    up_lean = Counter(lk.a_device for lk in lean.links if lk.kind == "leaf-spine")
    assert up["p0-tor-rk002-a"] >= 32
    assert 8 <= up_lean["p0-tor-rk002-a"] < 32
    assert check(whole) == [] and check(lean) == []


def test_rack_wider_than_a_tor_is_refused_with_the_maximum(catalog):
    # 8 nodes x 8 ports = 64 ports, a 64-port ToR has 32 down ports at 1:1
    with pytest.raises(InfeasibleError, match=r"layout\.nodes_per_rack") as exc:
        plan(ft_spec(8 * 16, per_rack=8), catalog)
    assert "at most 4 nodes per rack" in str(exc.value)
    design = plan(ft_spec(8 * 16, per_rack=8, fat_tree={"tors_per_rack": 2}), catalog)
    assert check(design) == []


def test_two_tors_for_a_single_port_rack_are_refused(catalog):
    with pytest.raises(SpecError, match=r"fabric\.fat_tree\.tors_per_rack"):
        plan(ft_spec(8, per_rack=1, planes=8, fat_tree={"tors_per_rack": 2}), catalog)


def test_three_tiers_when_the_racks_outgrow_two(catalog):
    design = plan(ft_spec(8 * 1024), catalog)  # 256 racks of 64-port ToRs: beyond 2 tiers
    assert design.sizing.tiers == 3
    counts = design.switch_counts()
    assert counts["core"] > 0 and counts["leaf"] == 256
    assert {s.pod for s in design.switches if s.role == "tor"} == set(range(design.sizing.pods))
    assert max_hops(design) == 5
    assert len(design.switches) >= design.sizing.lower_bound_switches
    assert check(design) == []


def test_two_tiers_forced_beyond_capacity_is_refused(catalog):
    with pytest.raises(InfeasibleError, match="at most 2048 GPUs"):
        plan(ft_spec(8 * 1024, tiers=2), catalog)  # 64 racks of 64-port ToRs at most


def test_dmodk_routing_is_recorded_when_asked(catalog):
    design = plan(ft_spec(8 * 16, routing={"policy": "dmodk"}), catalog)
    assert design.routing.policy == "dmodk"


# -- check() catches a broken fat-tree ---------------------------------------------------------


@pytest.fixture(scope="module")
def racks() -> Design:
    return plan(ft_spec(8 * 16))


def test_check_reports_a_node_on_another_racks_tor(racks):
    links = list(racks.links)
    i = next(
        i for i, lk in enumerate(links) if lk.kind == "node-leaf" and lk.a_device == "node0001"
    )
    links[i] = replace(links[i], b_device="p0-tor-rk002-a", b_port=racks.sizing.leaf_down - 1)
    problems = check(replace(racks, links=tuple(links)))
    assert any("node0001 of rack 1 is cabled to p0-tor-rk002-a of rack 2" in p for p in problems)


def test_check_reports_a_tor_holding_a_foreign_rack(racks):
    switches = tuple(replace(s, rack=5) if s.id == "p0-tor-rk001-a" else s for s in racks.switches)
    problems = check(replace(racks, switches=switches))
    assert sum("carries only the nodes of its own rack" in p for p in problems) >= 4
