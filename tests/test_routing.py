"""Paths of NIC-port pairs on every family, and the bulk router against the single-pair paths."""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np
import pytest

from railplan.design import Design
from railplan.pipeline.plan import plan
from railplan.spec import spec_from_dict
from railplan.traffic.routing import (
    RoutingError,
    effective_policy,
    fabric_index,
    flow_hash,
    paths,
    route_bulk,
)
from tests.toy import matrix, two_tier


@cache
def planned(topology: str, gpus: int, node: str, switch: str, planes: int = 1) -> Design:
    spec = {
        "cluster": {"gpus": gpus, "node": node},
        "fabric": {"topology": topology, "switches": [switch], "planes": planes},
    }
    return plan(spec_from_dict(spec))


def roft2() -> Design:  # 64 nodes, 4 SUs of 16, 2 tiers
    return planned("roft", 512, "hgx-h100-8x400g", "cx732q-n")


def roft3() -> Design:  # 256 nodes in 8 pods, 3 tiers
    return planned("roft", 2048, "hgx-h100-8x400g", "cx732q-n")


def matrix_design() -> Design:  # 32 nodes, 4 dual-port 200G NICs
    return planned("matrix", 256, "h20-4x2x200g", "cx732q-n")


def test_every_matrix_a_to_b_and_b_to_a_port_pair_has_one_two_hop_path() -> None:
    d = matrix_design()
    ix = fabric_index(d)
    assert d.routing.policy == "deterministic"
    group = ix.endpoints.port_group
    a_ports = [p for p in range(d.shape.ports) if group[p] == "A"]
    b_ports = [p for p in range(d.shape.ports) if group[p] == "B"]
    assert len(a_ports) == len(b_ports) == 4
    checked = 0
    for a, b in itertools.permutations(range(len(d.nodes)), 2):
        for sp, dp in [*itertools.product(a_ports, b_ports), *itertools.product(b_ports, a_ports)]:
            assert ix.ep_leaf[a, sp] != ix.ep_leaf[b, dp]  # A and B leaves always differ
            found = paths(d, d.nodes[a].id, sp, d.nodes[b].id, dp)
            assert len(found) == 1
            assert found[0].switch_hops == 2
            assert found[0].switches == (
                ix.switch_ids[ix.ep_leaf[a, sp]],
                ix.switch_ids[ix.ep_leaf[b, dp]],
            )
            checked += 1
    assert checked == 32 * 31 * 32


def test_every_roft_same_su_same_rail_pair_has_one_one_hop_path() -> None:
    for d in (roft2(), roft3()):
        nodes = d.nodes
        for policy in ("ecmp", "dmodk", "adaptive"):
            for a, b in itertools.permutations(nodes, 2):
                if a.su != b.su:
                    continue
                for port in range(d.shape.ports):
                    found = paths(d, a.id, port, b.id, port, routing=policy)
                    assert [p.switch_hops for p in found] == [1]
                    assert found[0].weight == 1.0


def test_roft_cross_su_ecmp_paths_are_every_spine_and_weights_sum_to_one() -> None:
    d = roft2()
    spines = [s for s in d.switches if s.role == "spine"]
    found = paths(d, d.nodes[0].id, 3, d.nodes[-1].id, 3, routing="ecmp")
    assert {p.switches[1] for p in found} == {s.id for s in spines}
    assert all(p.switch_hops == 3 for p in found)
    assert sum(p.weight for p in found) == pytest.approx(1.0)
    assert len(paths(d, d.nodes[0].id, 3, d.nodes[-1].id, 3, routing="dmodk")) == 1


def test_three_tier_cross_pod_paths_climb_to_the_core() -> None:
    d = roft3()
    a, b = d.nodes[0], d.nodes[-1]
    assert a.pod != b.pod
    found = paths(d, a.id, 0, b.id, 0, routing="ecmp")
    assert {p.switch_hops for p in found} == {5}
    assert sum(p.weight for p in found) == pytest.approx(1.0)
    static = paths(d, a.id, 0, b.id, 0, routing="dmodk")
    assert len(static) == 1 and static[0].switch_hops == 5


def test_bulk_router_picks_one_of_the_equal_cost_paths() -> None:
    d = roft3()
    ix = fabric_index(d)
    rng = np.random.default_rng(2)
    src = rng.integers(0, 64, 40)
    dst = rng.integers(128, 256, 40)
    port = rng.integers(0, 8, 40)
    q = rng.integers(0x100, 1 << 24, size=(2, 40))
    base = flow_hash(ix, (src, port), (dst, port), q[0], q[1])
    for policy in ("ecmp", "dmodk"):
        r = route_bulk(ix, src, port, dst, port, policy, hash_base=base)
        for f in range(40):
            links = r.dlink[r.flow == f]
            order = np.argsort(np.nonzero(r.flow == f)[0])
            seq = [ix.describe_dlink(int(dl))[0] for dl in links[order]]
            # NIC links were listed first and last; the fabric hops in between in order
            seq = [seq[0], *seq[2:], seq[1]]
            options = {
                p.links
                for p in paths(
                    d,
                    d.nodes[src[f]].id,
                    int(port[f]),
                    d.nodes[dst[f]].id,
                    int(port[f]),
                    routing=policy,
                )
            }
            assert tuple(seq) in options


def test_same_seed_hashing_polarizes_a_three_tier_fabric() -> None:
    """With one seed everywhere the spine's core choice follows the leaf's spine choice."""
    d = roft3()
    ix = fabric_index(d)
    src = np.repeat(np.arange(16), 100)
    dst = np.full(src.size, len(d.nodes) - 1)
    port = np.zeros_like(src)
    q = np.random.default_rng(0).integers(0x100, 1 << 24, size=(2, src.size))
    base = flow_hash(ix, (src, port), (dst, port), q[0], q[1])
    roles = np.array(ix.roles)
    used = {}
    for mode in ("same", "per-switch"):
        r = route_bulk(ix, src, port, dst, port, "ecmp", hash_base=base, hash_seeds=mode)
        tail, head = ix.dl_from[r.dlink], ix.dl_to[r.dlink]
        up = (tail >= 0) & (head >= 0)
        up[up] = (roles[tail[up]] == "spine") & (roles[head[up]] == "core")
        used[mode] = np.unique(r.dlink[up]).size
    spines_per_pod = sum(1 for s in d.switches if s.role == "spine" and s.pod == 0)
    assert used["same"] <= spines_per_pod
    assert used["per-switch"] > 4 * used["same"]


def test_adaptive_splits_over_every_path_evenly() -> None:
    d = two_tier(leaves=2, nodes_per_leaf=2, spines=4, links_per_spine=2)
    found = paths(d, "n00", 0, "n03", 0, routing="adaptive")
    assert len(found) == 8 * 2  # 8 uplinks; each spine has 2 links down to the leaf
    assert {p.weight for p in found} == {1 / 16}


def test_matrix_bundles_are_spread_or_pinned_by_policy() -> None:
    d = matrix(nodes=4, rails=2, nodes_per_a=2, nodes_per_b=2, links_per_pair=3)
    assert len(paths(d, "n00", 0, "n03", 1)) == 1  # deterministic: one of the 3 links
    assert len(paths(d, "n00", 0, "n03", 1, routing="ecmp")) == 3
    assert len(paths(d, "n00", 0, "n01", 0)) == 1  # both A ports on one leaf: one hop
    assert paths(d, "n00", 0, "n01", 0)[0].switch_hops == 1


def test_errors_name_the_problem() -> None:
    d = roft2()
    with pytest.raises(RoutingError, match="not in design"):
        paths(d, "node9999", 0, d.nodes[1].id, 0)
    with pytest.raises(RoutingError, match="not cabled"):
        paths(d, d.nodes[0].id, 42, d.nodes[1].id, 0)
    with pytest.raises(RoutingError, match="is not a policy"):
        paths(d, d.nodes[0].id, 0, d.nodes[1].id, 0, routing="magic")
    two = planned("roft", 512, "hgx-h100-8x400g", "cx732q-n", planes=2)
    shape = two.shape
    p0 = shape.port_plane.index(0)
    p1 = shape.port_plane.index(1)
    with pytest.raises(RoutingError, match="different planes"):
        paths(two, two.nodes[0].id, p0, two.nodes[1].id, p1)
    rail_only = planned("rail-only", 64, "hgx-h100-8x400g", "cx732q-n")
    if len({s.id for s in rail_only.switches}) > 1:
        with pytest.raises(RoutingError, match="PXN"):
            paths(rail_only, rail_only.nodes[0].id, 0, rail_only.nodes[1].id, 1)


def test_adaptive_classes_pick_the_policy_per_traffic_class() -> None:
    d = roft2()
    assert effective_policy(d) == "ecmp"
    assert effective_policy(d, "dmodk") == "dmodk"
    from dataclasses import replace

    ar = replace(d, routing=replace(d.routing, policy="adaptive", adaptive_classes=(3,)))
    assert effective_policy(ar, traffic_class=3) == "adaptive"
    assert effective_policy(ar, traffic_class=0) == "ecmp"
    m = matrix_design()
    assert effective_policy(m) == "deterministic"
