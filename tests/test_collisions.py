"""The collision analyzer against the domain's expectations (DOMAIN.md section 4)."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from railplan.design import Design
from railplan.pipeline.plan import plan
from railplan.spec import spec_from_dict
from railplan.traffic import summary
from railplan.traffic.collisions import analyze
from railplan.traffic.flows import PatternError
from railplan.traffic.hashing import expected_permutation_throughput
from railplan.traffic.routing import RoutingError
from railplan.traffic.summary import summary_for_compare
from tests.toy import two_tier


@cache
def planned(topology: str, gpus: int, node: str, switch: str, policy: str = "default") -> Design:
    spec = {
        "cluster": {"gpus": gpus, "node": node},
        "fabric": {"topology": topology, "switches": [switch], "routing": {"policy": policy}},
    }
    return plan(spec_from_dict(spec))


def per_rack() -> Design:  # 32 nodes, 4 per rack on one ToR each, 1:1 two tiers, hashed
    # ECMP as a RoCE fabric hashes (the per-rack collisions of DOMAIN section 3.3); on
    # InfiniBand the same wiring defaults to the subnet manager's D-mod-k (test below)
    return planned("fat-tree", 256, "hgx-h100-8x400g", "qm9700", "ecmp")


def roft2() -> Design:  # 64 nodes, SUs of 16
    return planned("roft", 512, "hgx-h100-8x400g", "cx732q-n")


def matrix_design() -> Design:
    return planned("matrix", 256, "h20-4x2x200g", "cx732q-n")


def test_dmodk_gives_every_shift_permutation_full_rate_on_a_one_to_one_two_tier_fat_tree() -> None:
    toy = two_tier(leaves=4, nodes_per_leaf=4, spines=4)  # 1 port per node, 1 link per pair
    for shift in range(1, 16):
        r = analyze(toy, "permutation", routing="dmodk", shift=shift)
        assert r.collective_fraction == pytest.approx(1.0), shift
    d = per_rack()  # 8 ports per node: rank order is node-major, as the ToR ports
    for shift in range(1, len(d.nodes)):
        r = analyze(d, "permutation", routing="dmodk", shift=shift)
        assert r.collective_fraction == pytest.approx(1.0), shift
    # ECMP on the same shifts does collide
    ecmp = [analyze(d, "permutation", shift=s).collective_fraction or 1.0 for s in (1, 5, 9)]
    assert min(ecmp) <= 0.5


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_roft_same_su_same_rail_pairs_are_always_full_rate(seed: int) -> None:
    d = roft2()
    same_su = [(a.id, b.id) for a in d.nodes for b in d.nodes if a.index < b.index and a.su == b.su]
    r = analyze(d, "pairs", seed=seed, pairs=same_su)
    assert r.pairs == 4 * (16 * 15 // 2)
    assert r.fraction_full == 1.0 and r.bandwidth["min"] == pytest.approx(1.0)
    # in 2 tiers each rail climbs from its own leaf: cross-SU pairs are full rate too
    assert analyze(d, "pairs", seed=seed).fraction_full == 1.0


def test_matrix_every_pair_test_pair_is_full_rate_under_deterministic_routing() -> None:
    d = matrix_design()
    r = analyze(d, "pairs")
    assert r.routing == "deterministic"
    assert r.pairs == 32 * 31 // 2
    assert r.fraction_full == 1.0
    assert r.bandwidth["min"] == pytest.approx(1.0)


def test_per_rack_fat_tree_one_flow_per_nic_puts_most_cross_rack_pairs_below_full_rate() -> None:
    d = per_rack()
    rack = np.array([n.rack for n in d.nodes])
    means = {}
    for f in (1, 2, 4, 8):
        r = analyze(d, "pairs", flows_per_nic=f, seed=3)
        cross = rack[r.pair_nodes[:, 0]] != rack[r.pair_nodes[:, 1]]
        frac = r.pair_fraction[cross]
        means[f] = frac.mean()
        if f == 1:
            assert (frac < 0.99).mean() > 0.6  # most cross-rack pairs are slow ...
            assert (frac <= 0.5).mean() > 0.5  # ... most at half rate or less
            assert means[1] < 0.75
            same = r.pair_fraction[~cross]
            assert (same == 1.0).all()  # under one ToR there is no hash stage
    assert means[1] < means[2] < means[4] < means[8]
    assert means[4] - means[1] > 0.25
    assert means[8] > 0.95


def test_per_rack_slow_nodes_are_slow_with_some_partners_only() -> None:
    r = analyze(per_rack(), "pairs", seed=1)
    slow = r.slow_nodes()
    assert slow["every_partner"] == []
    assert len(slow["some_partners"]) == 32
    assert r.to_json()["slow_nodes"]["some_partners"] == 32


def test_uniform_random_permutation_on_parallel_links_matches_theory() -> None:
    """n nodes on leaf 0 each send one flow to leaf 1 over n spines: mean kept 1-(1-1/n)^n."""
    n, trials = 8, 150
    d = two_tier(leaves=2, nodes_per_leaf=n, spines=n)
    prefill = [f"n{i:02d}" for i in range(n)]
    decode = [f"n{i:02d}" for i in range(n, 2 * n)]
    kept = [
        analyze(
            d,
            "pd",
            routing="ecmp",
            hash="random",
            seed=s,
            prefill=prefill,
            decode=decode,
            mapping="one",
        ).bandwidth["mean"]
        for s in range(trials)
    ]
    tol = 4 * 0.2 / math.sqrt(trials)
    assert np.mean(kept) == pytest.approx(expected_permutation_throughput(n), abs=tol)


def test_adaptive_routing_gives_full_rate_on_a_one_to_one_fat_tree() -> None:
    r = analyze(per_rack(), "pairs", routing="adaptive")
    assert r.fraction_full == 1.0
    a2a = analyze(per_rack(), "alltoall", routing="adaptive")
    assert a2a.collective_fraction == pytest.approx(1.0)


def test_report_json_csv_and_hot_links() -> None:
    r = analyze(per_rack(), "pairs", seed=2)
    j = r.to_json()
    for key in (
        "pattern",
        "routing",
        "flows",
        "pairs",
        "fraction_full",
        "fraction_half_or_less",
        "bandwidth",
        "histogram",
        "hottest_links",
    ):
        assert key in j
    assert set(j["bandwidth"]) == {"min", "p10", "median", "mean", "max"}
    assert sum(j["histogram"]["counts"]) == r.pairs
    assert j["flows"] == r.pairs * 2 * 8
    hot = j["hottest_links"]
    assert hot and hot[0]["offered_load"] >= 2 and len(hot[0]["flow_list"]) >= 2
    rows = r.pair_rows()
    assert len(rows) == r.pairs
    slow = [row for row in rows if not row["full_rate"]]
    assert slow and all(row["bottleneck"] for row in slow)
    assert all(row["gbps_per_nic"] == pytest.approx(row["fraction"] * 400, abs=0.1) for row in rows)


def test_every_pattern_runs_and_paces_the_collective_by_its_slowest_flow() -> None:
    d = roft2()
    ring = analyze(d, "ring")
    assert ring.pairs == 64 and ring.flows == 64 * 8
    assert ring.collective_fraction == pytest.approx(1.0)
    a2a = analyze(d, "alltoall", nodes=list(range(24)))
    assert a2a.flows == 24 * 23 * 8
    assert a2a.collective_fraction == pytest.approx(a2a.bandwidth["min"])
    pd = analyze(d, "pd", rule="interleave", prefill_fraction=0.25)
    assert pd.pairs == 16 * 48
    perm = analyze(d, "permutation", seed=4)
    assert perm.pairs == 64
    nopxn = analyze(d, "alltoall", nodes=[0, 20], pxn=False)
    assert nopxn.flows == 2 * 64


def test_progress_callback_counts_flows_to_the_end() -> None:
    seen: list[tuple[int, int]] = []
    analyze(per_rack(), "pairs", progress=lambda done, total: seen.append((done, total)))
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == 496 * 16


def test_errors_are_one_clear_sentence() -> None:
    d = roft2()
    with pytest.raises(PatternError, match="not a pattern"):
        analyze(d, "broadcast")
    with pytest.raises(PatternError, match="no option"):
        analyze(d, "ring", shift=2)
    with pytest.raises(PatternError, match="give 1 to 64 flows"):
        analyze(d, "pairs", flows_per_nic=0)
    with pytest.raises(PatternError, match="not a node"):
        analyze(d, "pairs", pairs=[("node0001", "nodeXYZ")])
    rail_only = planned("rail-only", 64, "hgx-h100-8x400g", "cx732q-n")
    with pytest.raises(RoutingError, match="PXN"):
        analyze(rail_only, "alltoall", pxn=False)


def test_summary_for_compare_samples_large_clusters(monkeypatch: pytest.MonkeyPatch) -> None:
    s = summary_for_compare(per_rack())
    assert s["routing"] == "ecmp" and not s["pairs"]["sampled"]
    assert 0 < s["pairs"]["fraction_full"] < 0.5
    monkeypatch.setattr(summary, "COMPARE_PAIRS", 100)
    monkeypatch.setattr(summary, "COMPARE_JOB_NODES", 16)
    s = summary_for_compare(matrix_design())
    assert s["pairs"]["sampled"] and s["pairs"]["pairs"] == 100 and "note" in s["pairs"]
    assert s["pairs"]["fraction_full"] == 1.0
    assert s["alltoall"]["nodes"] == 16 and s["alltoall"]["sampled"]
