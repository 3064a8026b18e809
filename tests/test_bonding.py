"""Matrix traffic as measured: bonded NIC ports, both directions, link choice, ROFT beside it."""

from __future__ import annotations

import itertools
import os
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.design import Design
from railplan.design.endpoints import endpoints
from railplan.errors import SpecError
from railplan.pipeline.plan import plan
from railplan.spec import load_spec, spec_from_dict
from railplan.traffic.collisions import analyze
from railplan.traffic.flows import flow_set
from railplan.traffic.routing import deterministic_member, fabric_index, paths
from railplan.traffic.summary import summary_for_compare
from tests.toy import matrix as toy_matrix

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")
H20 = "h20-4x2x200g"


@cache
def planned(
    topology: str, gpus: int, node: str = H20, switch: str = "cx864e-n", **cluster: str
) -> Design:
    spec = {
        "cluster": {"gpus": gpus, "node": node, **cluster},
        "fabric": {"topology": topology, "switches": [switch]},
    }
    return plan(spec_from_dict(spec))


@cache
def seed003() -> Design:
    return plan(load_spec(os.path.join(EXAMPLES, "seed003-matrix.yaml")))


# -- bonding: what a NIC is -----------------------------------------------------------------


def test_dual_port_nics_on_a_matrix_bond_by_default_and_reports_say_so() -> None:
    d = seed003()
    ep = endpoints(d)
    assert ep.bonding == "bond" and ep.nic_gbps == 400 and ep.port_gbps == 200
    assert ep.groups == ((0, 1), (2, 3), (4, 5), (6, 7))  # port 0 in group A, port 1 in B
    j = analyze(d, "pairs").to_json()
    assert j["bonding"] == "bond"
    assert j["line_rate_gbps"] == {"nic": 400.0, "port": 200.0}
    assert j["flows_per_nic"] == 2  # one QP per bonded port by default
    assert any("RoCE LAG" in n and "QP k" in n for n in j["notes"])
    # a ROFT of the same nodes keeps every 200G port its own rail endpoint
    roft = endpoints(planned("roft", 32, switch="cx864e-n"))
    assert roft.bonding == "independent" and roft.nic_gbps == 200 and len(roft.groups) == 8


def test_bonding_is_a_spec_field_and_bond_needs_a_multi_port_nic() -> None:
    indep = planned("matrix", 1024, bonding="independent")
    assert endpoints(indep).bonding == "independent" and endpoints(indep).nic_gbps == 200
    bonded_roft = planned("roft", 1024, bonding="bond")
    assert endpoints(bonded_roft).bonding == "bond"
    with pytest.raises(SpecError, match=r"cluster\.bonding: bond .* one port per NIC"):
        endpoints(planned("matrix", 1024, "hgx-h100-8x400g", "qm9700", bonding="bond"))


def test_a_nic_pair_one_way_gets_the_whole_bonded_nic_across_the_matrix() -> None:
    """The published test: 390.63 Gb/s for one 2 x 200G NIC pair in 400G bond mode."""
    for d in (seed003(), planned("matrix", 1024)):
        a, b = d.nodes[0].id, d.nodes[-1].id
        one_way = analyze(d, "pd", prefill=[a], decode=[b])
        assert one_way.bandwidth["min"] >= 0.97
        assert one_way.pair_rows()[0]["gbps_per_nic"] >= 0.97 * 400
        # the two QPs leave on the two ports and arrive on the other group's ports
        fs = flow_set(fabric_index(d), np.array([0]), np.array([len(d.nodes) - 1]), 2)
        group = endpoints(d).port_group
        assert sorted(group[p] for p in fs.src_port[:2]) == ["A", "B"]
        assert all(group[s] != group[t] for s, t in zip(fs.src_port, fs.dst_port, strict=True))
        # one QP uses one bonded port: half the NIC (NCCL issue #1015)
        single = analyze(d, "pd", prefill=[a], decode=[b], flows_per_nic=1)
        assert single.bandwidth["max"] == pytest.approx(0.5)
        assert single.pair_bottleneck[0].startswith("NIC ports")


@pytest.mark.parametrize("gpus", [32, 1024])
def test_every_pair_test_on_a_bonded_matrix_is_at_full_rate(gpus: int) -> None:
    d = seed003() if gpus == 32 else planned("matrix", gpus)
    r = analyze(d, "pairs")
    n = len(d.nodes)
    assert r.pairs == n * (n - 1) // 2
    assert r.fraction_full == 1.0 and r.bandwidth["min"] == pytest.approx(1.0)
    assert r.flows == r.pairs * 2 * 4 * 2  # both ways, 4 NICs, 2 QPs


def test_pair_tests_on_a_large_matrix_never_share_a_bundle_link() -> None:
    d = plan(load_spec(os.path.join(EXAMPLES, "matrix-4k.yaml")))  # 8 links per A-B pair
    same_b = [(n.id, m.id) for n, m in itertools.combinations(d.nodes[:64], 2)]
    r = analyze(d, "pairs", pairs=same_b)  # nodes sharing an A leaf and a B leaf
    assert r.fraction_full == 1.0
    assert analyze(d, "pairs", sample=3000, seed=5).fraction_full == 1.0


def test_single_port_nics_split_between_a_and_b_reach_every_nic() -> None:
    d = planned("matrix", 256, "hgx-h100-8x400g", "qm9700")  # 32 nodes, NIC 0-3 A, 4-7 B
    ep = endpoints(d)
    assert ep.bonding == "independent" and ep.nic_gbps == 400
    assert ep.groups == ((0, 4), (1, 5), (2, 6), (3, 7))
    r = analyze(d, "pairs")
    assert r.to_json()["bonding"] == "independent"
    assert any("independent ports" in n for n in r.notes)
    assert r.fraction_full == 1.0
    ports = range(d.shape.ports)
    for a, b in itertools.permutations([d.nodes[0], d.nodes[9], d.nodes[-1]], 2):
        for sp, dp in itertools.product(ports, ports):
            found = paths(d, a.id, sp, b.id, dp)
            assert found and all(1 <= p.switch_hops <= 3 for p in found), (a.id, sp, b.id, dp)


# -- the deterministic link inside a bundle -------------------------------------------------


def test_deterministic_member_spreads_sources_and_keeps_pair_directions_apart() -> None:
    for m in (2, 3, 4, 7, 8, 19, 32):
        slots = np.arange(4 * m)
        fwd = deterministic_member(slots, 0, False, m)  # one destination, later sources
        assert set(fwd.tolist()) == set(range(m))
        back = deterministic_member(0, slots, True, m)  # into earlier destinations
        assert set(back.tolist()) == set(range(m))
        for x, y in itertools.combinations(range(3 * m), 2):  # x before y, same offsets
            assert deterministic_member(x, y, False, m) != deterministic_member(y, x, True, m)


def test_rail_aligned_traffic_uses_every_link_of_every_bundle() -> None:
    d = planned("matrix", 1024)  # 32 links per A-B pair
    ring = analyze(d, "ring")
    assert ring.collective_fraction == pytest.approx(1.0)
    a2a = analyze(d, "alltoall")
    assert a2a.collective_fraction == pytest.approx(1.0)
    assert max(h["offered_load"] for h in a2a.hottest) <= 1.0 + 1e-9
    toy = toy_matrix(nodes=4, rails=2, nodes_per_a=4, nodes_per_b=4, links_per_pair=4)
    links = {p.links[1] for x, y in itertools.permutations(toy.nodes, 2)
             for p in paths(toy, x.id, 0, y.id, 1)}  # fmt: skip
    assert len(links) == 4  # every link of the one A0-B bundle


# -- Matrix beside ROFT on the same cluster --------------------------------------------------


@pytest.mark.parametrize("gpus", [1024, 4096])
def test_matrix_all_to_all_is_within_ten_percent_of_roft_and_pd_at_least_roft(gpus: int) -> None:
    matrix, roft = planned("matrix", gpus), planned("roft", gpus)
    n = len(matrix.nodes)
    job = None if n <= 128 else [k * n // 128 for k in range(128)]
    m_a2a = analyze(matrix, "alltoall", nodes=job).collective_fraction
    r_a2a = analyze(roft, "alltoall", nodes=job).collective_fraction
    assert m_a2a is not None and r_a2a is not None
    assert m_a2a >= 0.9 * r_a2a
    m_pd = analyze(matrix, "pd")
    r_pd = analyze(roft, "pd", flows_per_nic=1)
    assert m_pd.routing == "deterministic" and r_pd.routing == "ecmp"
    assert (m_pd.collective_fraction or 0) >= (r_pd.collective_fraction or 0) - 1e-9


@pytest.mark.skipif(not os.environ.get("RAILPLAN_SLOW"), reason="RAILPLAN_SLOW=1: 2M flows each")
def test_matrix_all_to_all_over_every_node_of_4096_gpus_matches_roft() -> None:
    m = analyze(planned("matrix", 4096), "alltoall").collective_fraction or 0
    r = analyze(planned("roft", 4096), "alltoall").collective_fraction or 0
    assert m >= 0.9 * r


def test_pd_placement_spread_puts_prefill_and_decode_on_every_b_leaf() -> None:
    d = plan(load_spec(os.path.join(EXAMPLES, "matrix-4k.yaml")))
    ix = fabric_index(d)
    pd = analyze(d, "pd")
    assert any("rule spread over 16 leaf group(s)" in n for n in pd.notes)
    prefill = np.unique(pd.pair_nodes[:, 0])
    b_ports = [p for p, g in enumerate(ix.endpoints.port_group) if g == "B"]
    b_leaf = ix.ep_leaf[:, b_ports[0]]
    per_leaf = np.bincount(b_leaf[prefill], minlength=ix.n_switches)
    assert sorted(set(per_leaf[np.unique(b_leaf)].tolist())) == [16]  # 16 of 32 on each
    assert pd.collective_fraction == pytest.approx(1.0)
    split = analyze(d, "pd", rule="split")
    assert (split.collective_fraction or 0) < 0.75  # half the bundles carry everything


def test_compare_summary_has_pd_and_the_nic_it_counts_in() -> None:
    s = summary_for_compare(seed003())
    assert s["bonding"] == "bond" and s["line_rate_gbps"] == {"nic": 400.0, "port": 200.0}
    assert s["pd"]["collective_fraction"] == 1.0 and s["pd"]["rule"] == "spread"
    assert s["pairs"]["fraction_full"] == 1.0 and s["alltoall"]["collective_fraction"] == 1.0


# -- property: random valid Matrix specs -----------------------------------------------------


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    nodes=st.integers(min_value=2, max_value=200),
    whole=st.booleans(),
    switch=st.sampled_from(["cx864e-n", "cx732q-n"]),
)
def test_any_bonded_matrix_runs_pairs_full_both_ways_in_two_hops(
    nodes: int, whole: bool, switch: str
) -> None:
    spec = {
        "cluster": {"gpus": 8 * nodes, "node": H20},
        "fabric": {"topology": "matrix", "switches": [switch], "whole_su": whole},
    }
    d = plan(spec_from_dict(spec))
    ix = fabric_index(d)
    r = analyze(d, "pairs")
    bundle = int(d.sizing.notes[-1].rsplit(" ", 1)[1])  # links per A-B leaf pair
    if bundle >= 2:
        assert r.fraction_full == 1.0
    else:  # one link: a pair on the same two leaves sends both ways A -> B over it
        assert r.bandwidth["min"] == pytest.approx(0.5)
    group = ix.endpoints.port_group
    x, y = d.nodes[0].id, d.nodes[-1].id
    fs = flow_set(ix, np.array([0]), np.array([len(d.nodes) - 1]), 2, both_ways=True)
    for s, sp, t, tp in zip(fs.src_node, fs.src_port, fs.dst_node, fs.dst_port, strict=True):
        assert group[sp] != group[tp]
        (path,) = paths(d, ix.node_ids[s], int(sp), ix.node_ids[t], int(tp))
        assert path.switch_hops == 2
    assert {ix.node_ids[i] for i in fs.src_node} == {x, y}
