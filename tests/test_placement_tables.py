"""The array arithmetic behind placement equals the plain definitions, link by link.

Tray runs from the distance table against Dijkstra over the tray graph; a coster's prices for
an array of lengths against pricing each length alone; the cost tables of a placement against
summing every link at its estimated length.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from railplan import plan
from railplan.physical.costers import OBJECTIVES, DesignCoster, LengthCoster, PowerCoster
from railplan.physical.floor import build_floor, node_slots, switch_units, tor_slots
from railplan.solve import placement
from railplan.solve.placement.tables import estimated_height_m
from railplan.spec import spec_from_dict

LAYOUTS = [
    {},
    {"trays": {"cross_trays": "ends-and-middle"}},
    {"network_racks": "network-row"},
    {"network_racks": "in-row"},
    {"network_racks": "middle-of-row", "racks_per_row": 7},
    {
        "trays": {
            "routing": "graph",
            "points": [
                {"id": "a", "x_m": 0.0, "y_m": 0.6},
                {"id": "b", "x_m": 12.0, "y_m": 0.6},
                {"id": "c", "x_m": 12.0, "y_m": 3.0},
                {"id": "d", "x_m": 0.0, "y_m": 3.0},
                {"id": "e", "x_m": 6.0, "y_m": 9.0},
            ],
            "segments": [["a", "b"], ["b", "c"], ["c", "d"], ["d", "a"], ["c", "e"]],
        }
    },
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_tray_table_equals_dijkstra_over_the_tray_graph(catalog, layout):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"]},
            "layout": layout,
        }
    )
    floor = build_floor(plan(spec, catalog), spec.layout, catalog)
    ids = [r.id for r in floor.racks]
    table = floor.tray_table_m(ids, ids)
    for i, a in enumerate(ids):
        dist = nx.single_source_dijkstra_path_length(
            floor.graph, floor.drop_node[a], weight="length"
        )
        for j, b in enumerate(ids):
            want = 0.0 if a == b else floor.drop_m[a] + dist[floor.drop_node[b]] + floor.drop_m[b]
            assert table[i, j] == pytest.approx(want, abs=1e-6)
            assert floor.tray_distance_m(a, b) == pytest.approx(want, abs=1e-6)


def test_costers_price_arrays_as_they_price_one_length(catalog):
    spec = spec_from_dict(
        {"cluster": {"gpus": 512, "node": "h20-4x2x200g"}, "fabric": {"switches": ["cx864e-n"]}}
    )
    design = plan(spec, catalog)
    lengths = np.r_[np.linspace(0.0, 160.0, 641), [0.5, 1.0, 2.0, 3.0, 5.0, 30.0, 100.0, 500.0]]
    lengths = np.r_[lengths, lengths + 1e-7, lengths - 1e-7].clip(0)
    for coster in (DesignCoster(design, catalog), PowerCoster(design, catalog), LengthCoster()):
        for key in sorted({coster.key(link) for link in design.links}, key=repr):
            link = design.links[0]
            one = [coster.cost(key, float(x), link) for x in lengths]
            assert coster.costs(key, lengths).tolist() == pytest.approx(one)
    assert OBJECTIVES == ("cost", "power", "length")


@pytest.mark.parametrize(
    "spec_data",
    [
        {"cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"}, "fabric": {"switches": ["qm9700"]}},
        {
            "cluster": {"gpus": 1024, "node": "h20-4x2x200g"},
            "fabric": {"topology": "matrix", "switches": ["cx864e-n"]},
        },
        {
            "cluster": {"gpus": 512, "node": "hgx-h100-8x400g"},
            "fabric": {"topology": "fat-tree", "switches": ["qm9700"]},
        },
        {
            "cluster": {"gpus": 2048, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"], "planes": 2},
            "layout": {"trays": {"cross_trays": "ends-and-middle"}},
        },
    ],
)
def test_cost_tables_equal_pricing_every_link(catalog, spec_data):
    spec = spec_from_dict(spec_data)
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    coster = DesignCoster(design, catalog)
    groups = placement.make_groups(design, floor, catalog, 8)
    cands = placement.candidate_racks(design, floor, groups, spec.layout.placement)
    tables = placement.cost_tables(design, floor, catalog, groups, coster, cands)
    layout = spec.layout
    tray, slack, h_sw = layout.trays.height_m, layout.slack_m, estimated_height_m(floor, groups)
    switches = design.switch_by_id()
    fixed_end = {
        n: (r, floor.port_height_m(u, layout.node_height_u))
        for n, (r, u) in node_slots(design, floor).items()
    }
    for sw, (r, u) in tor_slots(design, floor, catalog).items():
        fixed_end[sw] = (r, floor.port_height_m(u, switch_units(switches[sw], catalog)))
    group_of = {m: i for i, g in enumerate(groups) for m in g.members}
    rng = np.random.default_rng(1)
    for _ in range(3):
        at = rng.integers(0, tables.n_racks, size=len(groups))
        total = 0.0
        for link in design.links:
            ga, gb = group_of.get(link.a_device), group_of.get(link.b_device)
            if ga is None and gb is None:
                continue
            if ga is not None and gb is not None:
                ra, rb = tables.racks[at[ga]], tables.racks[at[gb]]
                run = floor.tray_distance_m(ra, rb)
                length = slack if ra == rb else run + 2 * (tray - h_sw) + slack
            else:
                g = ga if ga is not None else gb
                rack, h = fixed_end[link.b_device if ga is not None else link.a_device]
                run = floor.tray_distance_m(rack, tables.racks[at[g]])
                length = (tray - h) + (tray - h_sw) + slack + run
            total += round(coster.cost(coster.key(link), length, link) * placement.CENTS)
        assert placement.placement_cost(tables, at) == round(total)
