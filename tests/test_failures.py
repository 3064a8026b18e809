"""Failure what-if: links or switches out, routes recomputed, what each pattern loses."""

from __future__ import annotations

import json
from functools import cache

import numpy as np
import pytest

from railplan.design import Design
from railplan.pipeline.plan import plan
from railplan.spec import spec_from_dict
from railplan.traffic.failures import FailureError, fail, what_if
from railplan.traffic.routing import paths


@cache
def roft2() -> Design:  # 64 nodes in 4 SUs of 16, 16 spines, 1 link from each leaf to each
    spec = {
        "cluster": {"gpus": 512, "node": "hgx-h100-8x400g"},
        "fabric": {"topology": "roft", "switches": ["cx732q-n"]},
    }
    return plan(spec_from_dict(spec))


@cache
def matrix() -> Design:  # 128 nodes, bonded 2 x 200G NICs, 32 links per A-B pair
    spec = {
        "cluster": {"gpus": 1024, "node": "h20-4x2x200g"},
        "fabric": {"topology": "matrix", "switches": ["cx864e-n"]},
    }
    return plan(spec_from_dict(spec))


def _ids(d: Design, nodes: range) -> list[str]:
    return [d.nodes[i].id for i in nodes]


def test_a_dead_spine_lowers_the_pairs_that_crossed_it_and_spares_same_leaf_pairs() -> None:
    d = roft2()
    spine = next(s.id for s in d.switches if s.role == "spine")
    # SU 1 -> SU 2 saturates the leaves' uplinks; SU 3 pairs stay on their leaves
    prefill = _ids(d, range(16, 32)) + _ids(d, range(48, 56))
    decode = _ids(d, range(32, 48)) + _ids(d, range(56, 64))
    r = what_if(d, [spine], "pd", routing="adaptive", prefill=prefill, decode=decode, mapping="one")
    f = r.failure
    assert f is not None and f["switches_removed"] == 1 and f["links_removed"] == 32
    su = np.array([n.su for n in d.nodes])
    crossing = su[r.pair_nodes[:, 0]] != su[r.pair_nodes[:, 1]]
    # every cross-SU flow is sprayed over every spine: all of them crossed it
    a, b = r.pair_nodes[crossing][0]
    assert spine in {sw for p in paths(d, d.nodes[a].id, 0, d.nodes[b].id, 0) for sw in p.switches}
    assert np.allclose(r.pair_fraction[crossing], 15 / 16)
    assert np.allclose(r.pair_fraction[~crossing], 1.0)
    assert f["pairs_slower"] == int(crossing.sum()) == 16 and f["pairs_faster"] == 0
    assert f["before"]["collective_fraction"] == 1.0
    assert f["after"]["collective_fraction"] == pytest.approx(15 / 16, abs=1e-4)


def test_failing_every_uplink_of_a_leaf_cuts_its_nodes_off_and_names_them() -> None:
    d = roft2()
    leaf = next(s for s in d.switches if s.role == "leaf" and s.su == 0 and s.rail == 3)
    ups = [lk.id for lk in d.links if lk.a_device == leaf.id and lk.kind == "leaf-spine"]
    r = what_if(d, ups, "pairs")
    f = r.failure
    assert f is not None
    su0 = {n.id for n in d.nodes if n.su == 0}
    assert set(f["cut_off_node_list"]) == su0 and f["cut_off_nodes"] == 16
    assert f["pairs_disconnected"] == 16 * 48  # SU 0 with every other SU, on rail 3
    assert r.to_json()["disconnected_pairs"] == 16 * 48
    cut = [neck for neck in r.pair_bottleneck if neck == "disconnected"]
    assert len(cut) == 16 * 48
    same_su = np.array([d.nodes[a].su == d.nodes[b].su for a, b in r.pair_nodes.tolist()])
    assert np.allclose(r.pair_fraction[same_su], 1.0)


def test_a_bonded_nic_survives_a_dead_leaf_at_half_rate() -> None:
    d = matrix()
    a_leaf = next(s.id for s in d.switches if s.role == "leaf-a")
    r = what_if(d, [a_leaf], "pairs", sample=400, seed=3)
    f = r.failure
    assert f is not None and f["nic_ports_down"] == 128 and f["cut_off_nodes"] == 0
    assert f["pairs_disconnected"] == 0
    assert 0 < r.bandwidth["min"] <= 0.5 + 1e-9  # both QPs of NIC 0 on its B port
    # independent ports lose the connection instead
    spec = {
        "cluster": {"gpus": 1024, "node": "h20-4x2x200g", "bonding": "independent"},
        "fabric": {"topology": "matrix", "switches": ["cx864e-n"]},
    }
    indep = plan(spec_from_dict(spec))
    g = what_if(indep, [a_leaf], "pairs", sample=400, seed=3).failure
    assert g is not None and g["cut_off_nodes"] == 128 and g["pairs_disconnected"] == 400


def test_one_dead_a_to_b_cable_costs_a_loaded_bundle_its_share() -> None:
    d = matrix()
    link = next(lk for lk in d.links if lk.kind == "leaf-leaf")
    r = what_if(d, [link.id], "alltoall")
    f = r.failure
    assert f is not None and f["links_removed"] == 1
    assert f["before"]["collective_fraction"] == pytest.approx(1.0)
    assert 0.9 < f["after"]["collective_fraction"] < 1.0  # 31 links carry what 32 did


def test_fail_keeps_everything_else_and_refuses_unknown_ids_in_one_sentence() -> None:
    d = roft2()
    failed, info = fail(d, ["LS000001"])
    assert len(failed.links) == len(d.links) - 1 and failed.switches == d.switches
    assert info.links == ("LS000001",) and info.cut_off == ()
    with pytest.raises(FailureError) as exc:
        fail(d, ["LS000001", "spine-99"])
    assert "'spine-99' is neither a link nor a switch" in str(exc.value)
    assert "\n" not in str(exc.value)


def test_cli_fail_reports_the_loss_and_exits_2_on_a_bad_id(cli, tmp_path) -> None:
    spine = next(s.id for s in roft2().switches if s.role == "spine")
    args = [
        "--gpus",
        "512",
        "--node",
        "hgx-h100-8x400g",
        "--switch",
        "cx732q-n",
        "--topology",
        "roft",
    ]
    out = cli("analyze", *args, "-p", "alltoall", "--fail", spine, "--json")
    assert out.code == 0, out.err
    data = json.loads(out.out)
    assert data["failure"]["failed"] == [spine] and data["failure"]["switches_removed"] == 1
    table = cli("analyze", *args, "--fail", spine, "--fail", "LS000001")
    assert table.code == 0 and "failed" in table.out and "before" in table.out
    bad = cli("analyze", *args, "--fail", "nope")
    assert bad.code == 2
    assert "neither a link nor a switch" in bad.err and "Traceback" not in bad.err + bad.out
