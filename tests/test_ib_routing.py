"""InfiniBand fat trees route as the subnet manager does (D-mod-k, OpenSM ftree); Ethernet hashes."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from railplan.advise import recommend
from railplan.advise.candidates import Candidate
from railplan.advise.evaluate import evaluate
from railplan.advise.requirements import requirements_of
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.pipeline.plan import plan
from railplan.spec import Spec, load_spec, spec_from_dict
from railplan.traffic.collisions import analyze
from railplan.traffic.routing import effective_policy, fabric_index, paths, route_bulk
from railplan.traffic.summary import summary_for_compare
from tests.ftree_reference import FtreeReference
from tests.toy import two_tier

SLOW = os.environ.get("RAILPLAN_SLOW") == "1"
CATALOG = load_catalog()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def designed(gpus: int, switch: str, node: str = "hgx-h100-8x400g", **fabric: object) -> Design:
    fabric = {"topology": "roft", "switches": [switch], **fabric}
    return plan(spec_from_dict({"cluster": {"gpus": gpus, "node": node}, "fabric": fabric}))


@cache
def three_tier_16k() -> Design:
    return plan(load_spec(EXAMPLES / "h100-16k-3tier.yaml"))


# -- the default per protocol ----------------------------------------------------------------


def test_infiniband_clos_defaults_to_dmodk_and_ethernet_to_ecmp() -> None:
    assert designed(1024, "qm9700").routing.policy == "dmodk"
    assert designed(256, "qm9700", topology="fat-tree").routing.policy == "dmodk"
    assert designed(512, "cx732q-n").routing.policy == "ecmp"  # Asterfusion RoCE switch
    assert designed(512, "sn5600", topology="fat-tree").routing.policy == "ecmp"
    assert designed(64, "qm9700", topology="rail-only").routing.policy == "deterministic"
    # asked for, a policy is kept whatever the protocol
    assert designed(1024, "qm9700", routing={"policy": "ecmp"}).routing.policy == "ecmp"
    assert designed(512, "cx732q-n", routing={"policy": "dmodk"}).routing.policy == "dmodk"


def test_adaptive_classes_on_infiniband_keep_static_routes_for_the_other_service_levels() -> None:
    d = designed(1024, "qm9700", routing={"policy": "adaptive", "adaptive_classes": [3]})
    assert d.routing.policy == "dmodk" and d.routing.adaptive_classes == (3,)
    assert effective_policy(d, traffic_class=3) == "adaptive"
    assert effective_policy(d, traffic_class=0) == "dmodk"
    eth = designed(512, "cx732q-n", routing={"policy": "adaptive", "adaptive_classes": [3]})
    assert eth.routing.policy == "adaptive" and effective_policy(eth, traffic_class=0) == "ecmp"
    everywhere = designed(1024, "qm9700", routing={"policy": "adaptive"})
    assert effective_policy(everywhere, traffic_class=0) == "adaptive"


# -- D-mod-k analytically --------------------------------------------------------------------


def test_dmodk_on_a_small_fat_tree_takes_spine_d_mod_k_and_collides_where_the_maths_says() -> None:
    """4 leaves of 4 one-port nodes, 4 spines, one link each: destination d = 4 * leaf + slot
    climbs to spine d mod 4 from every leaf. Every shift permutation is contention-free; two
    sources on one leaf whose destinations are equal mod 4 share the up-link at half rate."""
    toy = two_tier(leaves=4, nodes_per_leaf=4, spines=4)
    ix = fabric_index(toy)
    for src in range(16):
        for dst in range(16):
            if src // 4 == dst // 4:
                continue
            (path,) = paths(toy, f"n{src:02d}", 0, f"n{dst:02d}", 0, routing="dmodk")
            assert int(ix.ep_rank[dst, 0]) == dst
            assert path.hops[1].dst == f"spine{dst % 4:02d}", (src, dst)
            assert path.switch_hops == 3
    for shift in range(1, 16):
        r = analyze(toy, "permutation", routing="dmodk", shift=shift)
        assert r.collective_fraction == pytest.approx(1.0), shift
    # n00 -> n04 (d = 4) and n01 -> n08 (d = 8) both climb to spine 0 from leaf 0
    r = analyze(toy, "pd", routing="dmodk", prefill=["n00", "n01"], decode=["n04", "n08"])
    assert r.pairs == 4
    one = analyze(
        toy, "pd", routing="dmodk", prefill=["n00", "n01"], decode=["n04", "n08"], mapping="one"
    )
    assert one.collective_fraction == pytest.approx(0.5)


def test_ranks_are_padded_per_leaf_and_restart_in_every_plane() -> None:
    """ftree numbers leaf k's ports from k * max_cn_per_leaf (dummy destinations fill a
    leaf with fewer), each plane its own subnet."""
    d = designed(200, "cx732q-n", whole_su=False)  # 25 nodes: the second SU has 9 of 16
    ix = fabric_index(d)
    leaf_ports = np.bincount(ix.ep_leaf[ix.ep_leaf >= 0])
    max_cn = int(leaf_ports.max())
    assert max_cn == 16 and int(leaf_ports[leaf_ports > 0].min()) == 9
    cols = ix.leaf_col[ix.ep_leaf[ix.ep_leaf >= 0]]
    ranks = ix.ep_rank[ix.ep_leaf >= 0]
    assert (ranks // max_cn == cols).all()
    two = designed(1024, "qm9700", planes=2)
    ix2 = fabric_index(two)
    planes = np.array([s.plane for s in two.switches])[ix2.ep_leaf]
    for p in (0, 1):
        assert ix2.ep_rank[planes == p].min() == 0
        assert np.unique(ix2.ep_rank[planes == p]).size == (planes == p).sum()


# -- against OpenSM's own algorithm ----------------------------------------------------------


@pytest.mark.parametrize(
    ("gpus", "switch", "fabric"),
    [
        (512, "cx732q-n", {"tiers": 3}),  # 3 tiers, 2 pods
        (384, "cx732q-n", {"tiers": 3}),  # 3 tiers, a pod and a half
        (200, "cx732q-n", {"whole_su": False}),  # a partial SU: padded leaf numbering
        (200, "cx732q-n", {"whole_su": False, "tiers": 3}),
        (512, "cx732q-n", {"oversubscription": "3:1"}),
        (248, "qm9700", {"topology": "fat-tree"}),  # per-rack ToRs, a part-filled rack
        (256, "qm9700", {"topology": "fat-tree", "fat_tree": {"tors_per_rack": 2}}),
    ],
    ids=["3tier-2pods", "3tier-1.5pods", "partial-su", "partial-su-3tier", "3to1", "per-rack",
         "per-rack-2tors"],
)  # fmt: skip
def test_dmodk_takes_the_links_opensm_ftree_tables_give(
    gpus: int, switch: str, fabric: dict
) -> None:
    """Every destination port, from the ports of nodes spread over the cluster: the analyzer's
    D-mod-k path is the one OpenSM's ftree engine (tests/ftree_reference.py) programs."""
    d = designed(gpus, switch, **fabric)
    ref = FtreeReference(d)
    ix = fabric_index(d)
    cabled = np.argwhere(ix.ep_leaf >= 0)
    n = ix.n_nodes
    sources = cabled[np.isin(cabled[:, 0], [0, n // 3, n // 2, n - 1])]
    pairs = [(s, t) for s in sources for t in cabled if tuple(s) != tuple(t)]
    src = np.array([s for s, _ in pairs])
    dst = np.array([t for _, t in pairs])
    routed = route_bulk(ix, src[:, 0], src[:, 1], dst[:, 0], dst[:, 1], "dmodk", include_nic=False)
    got: list[set[int]] = [set() for _ in pairs]
    for f, dl in zip(routed.flow, routed.dlink, strict=True):
        got[int(f)].add(int(dl) // 2)
    ids = ix.node_ids
    for k, (s, t) in enumerate(pairs):
        want = ref.path((ids[s[0]], int(s[1])), (ids[t[0]], int(t[1])))
        assert got[k] == set(want), (ids[s[0]], s[1], ids[t[0]], t[1])
    assert ref.max_cn == int(np.bincount(ix.ep_leaf[ix.ep_leaf >= 0]).max())


# -- what it changes -------------------------------------------------------------------------


def test_three_tier_infiniband_roft_runs_every_pair_test_at_full_rate_ecmp_does_not() -> None:
    d = three_tier_16k()
    assert d.sizing.tiers == 3 and d.routing.policy == "dmodk"
    s = summary_for_compare(d)
    assert s["routing"] == "dmodk" and s["pairs"]["sampled"]
    assert s["pairs"]["fraction_full"] == 1.0 and s["pairs"]["min"] == pytest.approx(1.0)
    ecmp = analyze(d, "pairs", routing="ecmp", sample=2000)
    assert ecmp.fraction_full < 0.97 and ecmp.bandwidth["min"] <= 0.5


def test_the_three_tier_roft_candidate_meets_the_default_requirements() -> None:
    base = Spec.model_validate(
        {"cluster": {"gpus": 16384, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"]}}
    )
    req = requirements_of(base)
    ev = evaluate(base, Candidate("roft", "qm9700"), req, CATALOG)
    assert ev.built and ev.meets, ev.reason
    assert ev.figures["pairs_full"] == 1.0 and ev.figures["alltoall"] >= 0.9


@pytest.mark.skipif(not SLOW, reason="a 16,384-GPU search (~1 min): set RAILPLAN_SLOW=1")
def test_recommend_finds_a_design_for_a_cluster_that_needs_three_tiers() -> None:
    base = Spec.model_validate(
        {"cluster": {"gpus": 16384, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"]}}
    )
    rec = recommend(base, CATALOG, workers=1)
    best = rec.recommended
    assert best is not None and best.meets
    assert best.summary["tiers"] == 3 and best.summary["routing"] == "dmodk"
    assert best.figures["pairs_full"] == 1.0
