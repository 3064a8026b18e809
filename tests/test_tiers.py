"""Per-tier fabrics: spec fields, tier splits, port sections, reserved ports, attachment, ISLs,
and the check() rules that catch each kind of mistake."""

from __future__ import annotations

import dataclasses
import json
import math
from fractions import Fraction
from typing import Any

import pytest

from railplan.catalog import Catalog
from railplan.design import Design, design_from_json, design_to_json
from railplan.errors import InfeasibleError, SpecError
from railplan.pipeline.plan import plan
from railplan.spec import spec_from_dict, spec_json_schema
from railplan.spec.tiers import normal_ratio, ratio_value
from railplan.topology.shape import leaf_split
from railplan.topology.tiers import tier_split
from railplan.validate import check
from tests.conftest import EXAMPLES, make_spec


def spec_of(gpus: int, node: str = "hgx-h100-8x400g", **fabric: Any) -> Any:
    return make_spec(gpus, node=node, **fabric)


def hpn_like(gpus: int = 2048, **extra: Any) -> Any:
    """Two 200G ports per NIC in two planes, dual-ToR, 200G down / 400G up at 17:15, spares."""
    fabric: dict[str, Any] = {
        "planes": 2,
        "plane_assignment": "port",
        "attachment": "dual-tor",
        "leaf": {"switches": ["s9827-128dh"], "up_gbps": 400, "oversubscription": "17:15"},
        "spine": {"switches": ["s9827-128dh"]},
        "reserved_ports": [{"purpose": "backup", "count": 8, "attach": "spare-nodes"}],
    }
    fabric.update(extra)
    return make_spec(gpus, node="h20-4x2x200g", **fabric)


# -- spec -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "normal"),
    [("1:1", "1:1"), ("34:30", "17:15"), ("3:1", "3:1"), ("1.133", "1.133:1"), ("1.5:1", "1.5:1")],
)
def test_ratios_take_rational_and_decimal_forms(given: str, normal: str) -> None:
    assert normal_ratio(given) == normal
    spec = spec_of(64, oversubscription=given)
    assert spec.fabric.oversubscription == normal


def test_yaml_reads_unquoted_ratios_back() -> None:
    assert spec_of(64, oversubscription=17 * 60 + 15).fabric.oversubscription == "17:15"
    assert spec_of(64, oversubscription=1.5).fabric.oversubscription == "1.5:1"


@pytest.mark.parametrize(
    ("fabric", "message"),
    [
        ({"oversubscription": "1:3"}, "at least 1:1"),
        ({"oversubscription": "fast"}, "must be a ratio like"),
        ({"leaf": {"oversubscription": "17:15"}, "oversubscription": "3:1"}, "disagree"),
        ({"core": {"up_gbps": 800}}, "core tier has no uplinks"),
        (
            {
                "reserved_ports": [
                    {"purpose": "x", "count": 2, "per": "plane", "attach": "spare-nodes"}
                ]
            },
            "use per: leaf",
        ),
        (
            {"reserved_ports": [{"purpose": "ufm", "count": 2, "attach": "device"}]},
            "use per: plane",
        ),
        ({"rail_only": {"switches": 0}}, "give 1 to 4096 switches"),
    ],
)
def test_bad_tier_fields_are_one_sentence_each(fabric: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        spec_from_dict({"cluster": {"gpus": 64, "node": "dgx-h100"}, "fabric": fabric})


def test_every_new_field_is_described_in_the_json_schema() -> None:
    defs = spec_json_schema()["$defs"]
    for model in ("TierSpec", "ReservedPortsSpec", "RailOnlySpec"):
        for name, prop in defs[model]["properties"].items():
            assert prop.get("description"), f"{model}.{name} has no description"
    fabric = defs["FabricSpec"]["properties"]
    for name in ("leaf", "spine", "core", "attachment", "reserved_ports", "oversubscription"):
        assert fabric[name].get("description"), f"fabric.{name} has no description"


# -- tier splits and port sections ------------------------------------------------------------


def test_mixed_split_fills_whole_cages_at_the_exact_ratio(catalog: Catalog) -> None:
    # Alibaba HPN 5.1: 136 x 200G down and 60 x 400G up on a 51.2T ToR, 17:15 with backups
    split = tier_split(catalog.switch("s9827-128dh"), 200, 400, Fraction(17, 15))
    assert (split.down, split.up) == (136, 60)
    assert (split.layout.up_from, split.layout.radix) == (136, 196)  # 68 + 60 cages
    assert split.up_for(128) == 57  # 128 x 200 / (17/15 x 400) = 56.47
    with pytest.raises(InfeasibleError, match="cannot run 800G ports"):
        tier_split(catalog.switch("qm9700"), 400, 800, Fraction(1))


@pytest.mark.parametrize("model", ["cx732q-n", "qm9700", "cx864e-n", "s9827-128dh"])
@pytest.mark.parametrize("ratio", ["1:1", "3:1", "17:15", "1.5"])
def test_one_speed_split_is_the_port_level_split(catalog: Catalog, model: str, ratio: str) -> None:
    value = ratio_value(normal_ratio(ratio))
    switch = catalog.switch(model)
    split = tier_split(switch, 400, 400, value)
    port_level = leaf_split(switch.radix(400), value)
    assert (split.down, split.up, split.layout.up_from) == (port_level.down, port_level.up, 0)
    assert split.down + split.up <= switch.radix(400)
    assert Fraction(split.down, split.up) <= value
    assert split.down + 1 + math.ceil((split.down + 1) / value) > switch.radix(400)  # most down


def test_a_two_speed_switch_names_its_ports_by_cage() -> None:
    d = plan(hpn_like())
    leaf = next(s for s in d.switches if s.role == "leaf")
    assert (leaf.port_speed_gbps, leaf.up_speed_gbps, leaf.up_from_port) == (200, 400, 136)
    assert leaf.port_name(0) == "P1/1" and leaf.port_name(135) == "P68/2"
    assert leaf.port_name(136) == "P69" and leaf.speed_of(136) == 400
    assert leaf.cage_of(195) == (127, 0, 1)


# -- reserved ports, spares and devices -------------------------------------------------------


def test_spare_nodes_sit_on_reserved_leaf_ports() -> None:
    d = plan(hpn_like())
    assert d.sizing.su_nodes == 128 and d.sizing.sus == 2 and d.sizing.reserved_per_leaf == 8
    spares = [n for n in d.nodes if n.spare]
    assert len(spares) == 16 and {n.su for n in spares} == {0, 1}
    assert d.active_nodes * 8 == d.gpus
    assert check(d) == []


def test_free_reserved_ports_shrink_the_scalable_unit() -> None:
    spec = spec_of(1024, switches=["qm9700"], reserved_ports=[{"purpose": "spare", "count": 2}])
    d = plan(spec)
    assert d.sizing.su_nodes == 30 and d.sizing.sus == 5 and check(d) == []
    per_leaf = {lk.b_device for lk in d.links if lk.kind == "node-leaf"}
    assert len(per_leaf) == d.switch_counts()["leaf"]


def test_plane_reservations_take_node_slots_and_cable_a_device() -> None:
    spec = spec_of(
        1016,
        node="dgx-h100",
        switches=["qm9700"],
        planes=2,
        reserved_ports=[
            {"purpose": "ufm", "count": 4, "per": "plane", "attach": "device"},
            {"purpose": "later", "count": 8, "per": "plane"},
        ],
    )
    d = plan(spec)
    (ufm,) = d.devices
    assert (ufm.ports, ufm.ports_per_plane) == (8, 4)
    assert {lk.plane for lk in d.links if lk.kind == "device-leaf"} == {0, 1}
    assert d.link_counts()["device_leaf"] == 8
    assert check(d) == []


def test_too_many_reserved_ports_are_refused(catalog: Catalog) -> None:
    big = [{"purpose": "x", "count": 33, "per": "leaf"}]
    with pytest.raises(InfeasibleError, match="leave no node port"):
        plan(spec_of(64, switches=["qm9700"], reserved_ports=big), catalog)
    slots = [{"purpose": "y", "count": 8 * 40, "per": "plane"}]
    with pytest.raises(InfeasibleError, match="do not fit one scalable unit"):
        plan(spec_of(64, switches=["qm9700"], reserved_ports=slots), catalog)
    with pytest.raises(SpecError, match="planned for topology roft, not matrix"):
        plan(spec_of(64, switches=["qm9700"], topology="matrix", reserved_ports=big), catalog)


# -- attachment -------------------------------------------------------------------------------


def test_single_tor_bonds_a_nics_ports_on_one_leaf() -> None:
    d = plan(make_spec(256, node="h20-4x2x200g", switches=["cx864e-n"], attachment="single-tor"))
    assert d.switch_counts()["leaf"] == 4  # one leaf per NIC, both ports on it
    leaf_of = {(lk.a_device, lk.a_port): lk.b_device for lk in d.links if lk.kind == "node-leaf"}
    node = d.nodes[0].id
    assert all(leaf_of[(node, 2 * n)] == leaf_of[(node, 2 * n + 1)] for n in range(4))
    assert check(d) == []


def test_dual_tor_needs_two_ports_and_two_tors() -> None:
    with pytest.raises(SpecError, match="the NICs have one port"):
        plan(spec_of(64, switches=["qm9700"], attachment="dual-tor"))
    one_switch = make_spec(
        16, node="h20-4x2x200g", switches=["cx864e-n"], topology="rail-only", attachment="dual-tor"
    )
    with pytest.raises(SpecError, match="rail-only cannot give dual-tor"):
        plan(one_switch)


# -- rail-only with ISLs ----------------------------------------------------------------------


def test_rails_alternate_over_switches_joined_by_isl_bundles() -> None:
    spec = spec_of(
        8 * 6, switches=["qm9700"], topology="rail-only", rail_only={"switches": 3, "isl": True}
    )
    d = plan(spec)
    assert d.switch_counts()["leaf"] == 3
    rails_on = {}
    for lk in d.links:
        if lk.kind == "node-leaf":
            rails_on.setdefault(lk.b_device, set()).add(lk.rail)
    assert sorted(map(sorted, rails_on.values())) == [[0, 3, 6], [1, 4, 7], [2, 5]]
    # 18 node ports on the busiest switch need 18 ISL ports at 1:1, 9 to each other switch
    assert d.link_counts()["leaf_leaf"] == 3 * 9 and check(d) == []


def test_more_switches_than_rails_and_too_small_switches_are_refused() -> None:
    with pytest.raises(InfeasibleError, match="use at most 8"):
        plan(spec_of(64, switches=["qm9700"], topology="rail-only", rail_only={"switches": 9}))
    with pytest.raises(InfeasibleError, match="ISL ports per switch"):
        plan(
            spec_of(
                8 * 40,
                switches=["qm9700"],
                topology="rail-only",
                rail_only={"switches": 2, "isl": True},
            )
        )


# -- check() catches what a wrong generator would do ------------------------------------------


def _replace_link(d: Design, index: int, **changes: Any) -> Design:
    links = list(d.links)
    links[index] = dataclasses.replace(links[index], **changes)
    return dataclasses.replace(d, links=tuple(links))


def test_check_catches_an_uplink_on_a_down_port() -> None:
    d = plan(hpn_like())
    i = next(k for k, lk in enumerate(d.links) if lk.kind == "leaf-spine")
    bad = _replace_link(d, i, a_port=100)  # a 200G down port of the leaf
    problems = check(bad)
    assert any("one of its 200G down ports" in p for p in problems)
    assert any("runs 400G on a 200G port" in p for p in problems)


def test_check_catches_active_nodes_on_reserved_ports() -> None:
    d = plan(hpn_like())
    nodes = tuple(dataclasses.replace(n, spare=False) for n in d.nodes)
    problems = check(dataclasses.replace(d, nodes=nodes))
    assert any("into the 8 it reserves" in p for p in problems)
    assert any("is not the 2048 GPUs asked" in p for p in problems)


def test_check_catches_an_uneven_isl_bundle_and_a_missing_device_link() -> None:
    base = spec_of(
        64, switches=["qm9700"], topology="rail-only", rail_only={"switches": 2, "isl": True}
    )
    d = plan(base)
    isl = [k for k, lk in enumerate(d.links) if lk.kind == "leaf-leaf"]
    short = dataclasses.replace(d, links=tuple(lk for k, lk in enumerate(d.links) if k != isl[0]))
    problems = check(short)
    assert any("over the asked 1:1" in p for p in problems)
    sp = plan(
        spec_of(
            1016,
            node="dgx-h100",
            switches=["qm9700"],
            reserved_ports=[{"purpose": "ufm", "count": 4, "per": "plane", "attach": "device"}],
        )
    )
    dl = next(k for k, lk in enumerate(sp.links) if lk.kind == "device-leaf")
    gone = dataclasses.replace(sp, links=tuple(lk for k, lk in enumerate(sp.links) if k != dl))
    assert any("has 4 ports but 3 links" in p for p in check(gone))


def test_check_catches_a_broken_tor_pair_and_a_spine_over_its_ratio() -> None:
    d = plan(hpn_like())
    first = next(k for k, lk in enumerate(d.links) if lk.kind == "node-leaf" and lk.a_port == 1)
    twin = next(
        lk
        for lk in d.links
        if lk.kind == "node-leaf" and lk.a_device == d.links[first].a_device and lk.a_port == 0
    )
    bad = _replace_link(d, first, b_device=twin.b_device, plane=0, a_port=1)
    assert any(
        "dual-tor needs two ToRs" in p or "belongs to another plane" in p for p in check(bad)
    )
    three = plan(
        spec_of(
            2048 * 8,
            node="dgx-h100",
            switches=["qm9700"],
            spine={"oversubscription": "2:1"},
            tiers=3,
        )
    )
    cores = [k for k, lk in enumerate(three.links) if lk.kind == "spine-core"]
    cut = set(cores[: len(cores) // 2 + 1])
    thin = dataclasses.replace(
        three, links=tuple(lk for k, lk in enumerate(three.links) if k not in cut)
    )
    assert any(
        "over the asked 2:1" in p or "oversubscribed toward the cores" in p for p in check(thin)
    )


# -- the Design keeps its bytes ---------------------------------------------------------------


def test_per_tier_designs_round_trip_and_uniform_ones_keep_their_keys() -> None:
    d = plan(
        spec_of(
            1016,
            node="dgx-h100",
            switches=["qm9700"],
            reserved_ports=[{"purpose": "ufm", "count": 4, "per": "plane", "attach": "device"}],
        )
    )
    text = design_to_json(d)
    again = design_from_json(text)
    assert again == d and design_to_json(again) == text
    mixed = plan(hpn_like())
    assert design_from_json(design_to_json(mixed)) == mixed
    plain = json.loads(design_to_json(plan(spec_of(1024, switches=["qm9700"]))))
    assert "devices" not in plain and "tier_sizing" not in plain["sizing"]
    assert not any("up_from_port" in sw for sw in plain["switches"])
    assert not any("spare" in n for n in plain["nodes"])


def test_site_port_names_resolve_on_a_two_speed_switch() -> None:
    from railplan.field.names import NameMap

    d = plan(hpn_like())
    leaf = next(s for s in d.switches if s.role == "leaf")
    names = NameMap(d)
    assert names.port(leaf.id, "P68/2") == 135  # the last 200G down port
    assert names.port(leaf.id, "P69") == 136  # the first 400G uplink, a cage of its own
    assert names.port(leaf.id, "P69/2") is None  # an uplink cage carries one port
    assert names.port(leaf.id, "P129") is None


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("fabric.leaf.up_gbps=800", "cannot run 800G ports"),
        (
            "fabric.spine.oversubscription=1:2",
            "spine.oversubscription: must be a ratio of at least",
        ),
        ("fabric.reserved_ports=[{purpose: ufm, count: 4, attach: device}]", "use per: plane"),
    ],
)
def test_bad_tier_input_is_one_sentence_and_exit_2(cli: Any, override: str, message: str) -> None:
    result = cli("plan", str(EXAMPLES / "hpn-pod.yaml"), "--no-layout", "--set", override)
    assert result.code == 2 and message in result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
