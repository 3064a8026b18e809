"""Floor layout: rack rows, network racks, trays, and routed lengths checked against hand arithmetic."""

from __future__ import annotations

import math
from typing import Any

import pytest

from railplan import plan
from railplan.errors import SpecError
from railplan.physical.cabling import positions, routed_lengths
from railplan.physical.floor import End, build_floor, node_slots, tor_slots
from railplan.pipeline.layout import complete
from railplan.spec import U_HEIGHT_M, spec_from_dict


def two_rack_spec(**layout: Any) -> Any:
    """2 HGX nodes in one compute rack, one 32-port switch (rail-only) in one network rack."""
    return spec_from_dict(
        {
            "name": "two-racks",
            "cluster": {"gpus": 16, "node": "hgx-h100-8x400g"},
            "fabric": {"topology": "rail-only", "switches": ["cx732q-n"]},
            "layout": {"nodes_per_rack": 2, **layout},
        }
    )


def test_two_rack_lengths_by_hand(catalog):
    spec = two_rack_spec()
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    # One row: R0101 (compute, x 0..0.6 m) then R0102 (network, x 0.6..1.2 m). The row tray
    # runs above the rack centres, so the two drops are 0.6 m apart along it.
    assert [(r.id, r.kind) for r in design.racks] == [("R0101", "compute"), ("R0102", "network")]
    where = {p.device: p for p in design.placements}
    # Nodes are 8U from U2: node0001 at U2-U9, node0002 at U10-U17. The 1U switch goes at the
    # top of the network rack below the 2 reserved units: U40.
    assert (where["node0001"].u, where["node0002"].u, where["p0-rail-all"].u) == (2, 10, 40)
    u = 0.04445  # one rack unit in metres
    node1_h = (2 - 1 + 8 / 2) * u  # 0.22225 m: middle of U2..U9
    node2_h = (10 - 1 + 8 / 2) * u  # 0.57785 m
    switch_h = (40 - 1 + 1 / 2) * u  # 1.755775 m
    tray, slack, along = 2.3, 1.0, 0.6
    by_hand = {
        # up to the tray + along + down to the switch + slack
        "node0001": (tray - node1_h) + along + (tray - switch_h) + slack,  # 4.221975 m
        "node0002": (tray - node2_h) + along + (tray - switch_h) + slack,  # 3.866375 m
    }
    assert by_hand["node0001"] == pytest.approx(4.221975)
    assert by_hand["node0002"] == pytest.approx(3.866375)
    floor = build_floor(design, spec.layout, catalog)
    where_pos = positions(
        design,
        floor,
        catalog,
        {"p0-rail-all": "R0102"},
        {"p0-rail-all": 40},
    )
    lengths = routed_lengths(design, floor, where_pos)
    links = {lk.id: lk for lk in design.links}
    for link_id, length in lengths.items():
        assert length == pytest.approx(by_hand[links[link_id].a_device], abs=1e-3)
    for cable in design.cables:
        routed = lengths[cable.link_id]
        part = catalog.cables[cable.media]
        # the cable is the shortest stocked length that covers the routed length
        assert cable.length_m == min(s for s in part.lengths_m if s >= routed - 1e-9)


def test_route_follows_trays_not_a_straight_line(catalog):
    spec = spec_from_dict(
        {"cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"}, "fabric": {"switches": ["qm9700"]}}
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    racks = floor.rack_by_id
    a, b = racks["R0101"], racks["R0216"]  # first rack of row 1, 16th rack of row 2
    # trays: along row 1 to the left cross tray (0.3 + 0.6 m), across one row pitch (2.4 m),
    # back along row 2 to its 16th rack (0.6 + 15 x 0.6 + 0.3 m)
    left = (a.x_m + 0.3) + 0.6 + 2.4 + 0.6 + (b.x_m + 0.3)
    right_end = 18 * 0.6 + 0.6  # the right cross tray beyond the 18-rack rows
    right = (right_end - a.x_m - 0.3) + 2.4 + (right_end - b.x_m - 0.3)
    assert floor.tray_distance_m("R0101", "R0216") == pytest.approx(min(left, right))
    straight = math.hypot(b.x_m - a.x_m, b.y_m - a.y_m)
    assert floor.tray_distance_m("R0101", "R0216") > straight + 1.0


def test_end_of_row_network_racks_and_counts(catalog):
    spec = spec_from_dict(
        {"cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"}, "fabric": {"switches": ["qm9700"]}}
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    assert len(floor.compute_racks) == 32  # 128 nodes / 4 per rack
    # 48 QM9700 at 1720 W max need 3 racks of 30 kW; +25% headroom and 2 per row of 2 rows
    assert len(floor.network_racks) == 4
    for row in (0, 1):
        kinds = [r.kind for r in floor.racks if r.row == row]
        assert kinds == ["compute"] * 16 + ["network"] * 2


@pytest.mark.parametrize("policy", ["middle-of-row", "in-row", "network-row"])
def test_network_rack_policies(catalog, policy):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"network_racks": policy},
        }
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    racks = floor.racks
    net = [r for r in racks if r.kind == "network"]
    if policy == "network-row":
        rows = {r.row for r in net}
        assert len(rows) == 1
        assert all(r.kind == "network" for r in racks if r.row in rows)
        compute_rows = sorted({r.row for r in racks if r.kind == "compute"})
        assert min(compute_rows) < rows.pop() < max(compute_rows)  # between the compute rows
    elif policy == "in-row":
        # every SU (32 nodes = 8 racks) has its own network rack in the middle of its racks
        assert set(floor.su_racks) == {0, 1, 2, 3}
        by_id = floor.rack_by_id
        for su, homes in floor.su_racks.items():
            mine = {by_id[floor.compute_racks[n.rack]] for n in design.nodes if n.su == su}
            home = by_id[homes[0]]
            assert {r.row for r in mine} == {home.row}
            assert min(r.position for r in mine) < home.position < max(r.position for r in mine)
    else:
        for row in {r.row for r in racks}:
            kinds = [r.kind for r in racks if r.row == row]
            first = kinds.index("network")
            assert first == 8 and kinds[-1] == "compute"


def test_given_tray_graph_and_drops(catalog):
    points = [
        {"id": "a", "x_m": 0.0, "y_m": 0.6},
        {"id": "b", "x_m": 10.0, "y_m": 0.6},
        {"id": "c", "x_m": 10.0, "y_m": 5.0},
    ]
    spec = two_rack_spec(
        trays={"routing": "graph", "points": points, "segments": [["a", "b"], ["b", "c"]]}
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    # both rack tops (y = 0.6 m) drop straight onto segment a-b, 0.6 m apart
    assert floor.drop_m == {"R0101": 0.0, "R0102": 0.0}
    assert floor.tray_distance_m("R0101", "R0102") == pytest.approx(0.6)


def test_given_tray_graph_errors_name_the_field():
    with pytest.raises(SpecError, match=r"layout\.trays\.segments\.0: unknown point 'x'"):
        from railplan.physical.trays import given_trays

        given_trays(
            two_rack_spec(
                trays={
                    "routing": "graph",
                    "points": [{"id": "a", "x_m": 0, "y_m": 0}],
                    "segments": [["a", "x"]],
                }
            ).layout
        )


def test_layout_spec_defaults_and_errors():
    spec = spec_from_dict({"cluster": {"gpus": 16, "node": "hgx-h100-8x400g"}})
    assert spec.layout.nodes_per_rack == 4 and spec.layout.rack_height_u == 42
    assert spec.layout.trays.height_m > 42 * U_HEIGHT_M
    with pytest.raises(SpecError, match="layout: 6 nodes of 8U"):
        spec_from_dict({"cluster": {"gpus": 16}, "layout": {"nodes_per_rack": 6}})
    with pytest.raises(SpecError, match="label_template"):
        spec_from_dict({"cluster": {"gpus": 16}, "layout": {"label_template": "{nope}"}})


def test_same_rack_run_is_vertical(catalog):
    spec = two_rack_spec()
    floor = build_floor(plan(spec, catalog), spec.layout, catalog)
    assert floor.route_length_m(End("R0101", 0.5), End("R0101", 1.5)) == pytest.approx(2.0)


def test_tors_sit_in_their_compute_racks(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 256, "node": "hgx-h100-8x400g"},
            "fabric": {"topology": "fat-tree", "switches": ["qm9700"]},
        }
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    tors = tor_slots(design, floor, catalog)
    nodes = node_slots(design, floor)
    assert tors, "a per-rack fat-tree has ToRs"
    for sw in design.switches:
        if sw.role == "tor":
            rack, u = tors[sw.id]
            assert rack == floor.compute_racks[sw.rack] and u == 42  # top of its own rack
    assert all(rack in floor.compute_racks for rack, _ in nodes.values())


@pytest.mark.parametrize("example", ["h100-1k", "matrix-4k", "layout-2k-network-row", "hpn-pod"])
def test_routed_lengths_over_arrays_equal_the_route_of_each_link(catalog, example):
    """``routed_lengths`` works over arrays of ends; each length is the very float
    ``Floor.route_length_m`` gives for that link's two ends."""
    from railplan import load_spec
    from railplan.physical.plant_panels import required_panel_units
    from railplan.pipeline.build import build
    from tests.conftest import EXAMPLES

    spec = load_spec(EXAMPLES / f"{example}.yaml")
    d = build(spec, catalog).design
    floor = build_floor(d, spec.layout, catalog, required_panel_units(d, catalog))
    where = {p.device: p for p in d.placements}
    got = routed_lengths(d, floor, where)
    for lk in d.links:
        a, b = where[lk.a_device], where[lk.b_device]
        ends = [End(p.rack, floor.port_height_m(p.u, p.height_u)) for p in (a, b)]
        assert got[lk.id] == floor.route_length_m(*ends), lk.id
