"""Matrix: A/B groups, complete bipartite wiring, sizing limits, and check() catching breakage."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import replace
from typing import Any

import pytest

from railplan import InfeasibleError, SpecError, check, plan, spec_from_dict
from railplan.design import Design, Link
from railplan.topology.matrix import matrix_capacity, size_matrix
from railplan.topology.shape import leaf_split
from tests.conftest import make_spec


def matrix_spec(gpus: int, node: str = "h20-4x2x200g", **fabric: Any) -> Any:
    fabric.setdefault("switches", ["cx864e-n"])
    return make_spec(gpus, node=node, topology="matrix", **fabric)


def one_nic_spec(nics: int, switch: str, **fabric: Any) -> Any:
    """Nodes of one GPU and one dual-port 200G NIC: node count = NIC count."""
    return spec_from_dict(
        {
            "cluster": {"gpus": nics, "gpus_per_node": 1, "nic": "bcm-2x200g", "nics_per_node": 1},
            "fabric": {"topology": "matrix", "switches": [switch], **fabric},
        }
    )


def bundles(design: Design) -> Counter[tuple[str, str]]:
    return Counter((lk.a_device, lk.b_device) for lk in design.links if lk.kind == "leaf-leaf")


def group_of(design: Design) -> dict[str, str]:
    return {s.id: s.group for s in design.switches}


# -- groups and rails ------------------------------------------------------------------------


def test_dual_port_nics_put_port_0_on_a_and_port_1_on_b(catalog):
    design = plan(matrix_spec(8 * 64), catalog)
    group = group_of(design)
    for lk in design.links:
        if lk.kind == "node-leaf":
            assert group[lk.b_device] == "AB"[lk.a_port % 2]
            assert design.shape.port_rail[lk.a_port] == lk.a_port // 2 == lk.rail  # rail = NIC
    assert check(design) == []


def test_single_port_nics_put_the_first_half_on_a(catalog):
    design = plan(matrix_spec(8 * 64, node="hgx-h100-8x400g"), catalog)
    group = group_of(design)
    on_a = {
        lk.a_port for lk in design.links if lk.kind == "node-leaf" and group[lk.b_device] == "A"
    }
    assert on_a == {0, 1, 2, 3}
    assert design.shape.port_rail == (0, 1, 2, 3, 0, 1, 2, 3)
    assert check(design) == []


def test_a_ports_override_is_followed(catalog):
    design = plan(matrix_spec(8 * 64, node="hgx-h100-8x400g", matrix={"a_ports": [1, 3, 5, 7]}))
    group = group_of(design)
    on_a = {
        lk.a_port for lk in design.links if lk.kind == "node-leaf" and group[lk.b_device] == "A"
    }
    assert on_a == {1, 3, 5, 7}
    assert check(design) == []


@pytest.mark.parametrize(
    "a_ports,words",
    [
        ([], "at least one"),
        ([0, 9], "do not exist"),
        ([0, 0, 1, 2], "each node port once"),
        ([0, 1, 2, 3, 4, 5, 6, 7], "every node port"),
        ([0, 1, 2], "as many A ports as B ports"),
    ],
)
def test_bad_a_ports_are_refused_naming_the_field(catalog, a_ports, words):
    spec = matrix_spec(64, node="hgx-h100-8x400g", matrix={"a_ports": a_ports})
    with pytest.raises(SpecError, match=r"fabric\.matrix\.a_ports") as exc:
        plan(spec, catalog)
    assert words in str(exc.value)


def test_a_leaves_carry_one_rail_and_b_leaves_every_rail_of_their_nodes(catalog):
    design = plan(matrix_spec(8 * 300), catalog)
    switches = design.switch_by_id()
    rails_on: dict[str, set[int]] = defaultdict(set)
    b_leaf_of: dict[str, set[str]] = defaultdict(set)
    for lk in design.links:
        if lk.kind == "node-leaf":
            rails_on[lk.b_device].add(design.shape.port_rail[lk.a_port])
            if switches[lk.b_device].role == "leaf-b":
                b_leaf_of[lk.a_device].add(lk.b_device)
    for sw in design.switches:
        if sw.role == "leaf-a":
            assert rails_on[sw.id] == {sw.rail}
            assert sw.id.startswith(f"p0-leafA-r{sw.rail}-")
        else:
            assert sw.role == "leaf-b" and rails_on[sw.id] == {0, 1, 2, 3}
    assert all(len(leaves) == 1 for leaves in b_leaf_of.values())
    assert len(b_leaf_of) == 300


# -- wiring and sizing -------------------------------------------------------------------------


@pytest.mark.parametrize("nodes", [1, 5, 32, 33, 130, 300, 777])
def test_every_a_b_pair_has_the_same_bundle_also_in_partial_builds(catalog, nodes):
    design = plan(matrix_spec(8 * nodes), catalog)
    a = [s.id for s in design.switches if s.role == "leaf-a"]
    b = [s.id for s in design.switches if s.role == "leaf-b"]
    pairs = bundles(design)
    assert len(pairs) == len(a) * len(b)
    assert len(set(pairs.values())) == 1
    m = next(iter(pairs.values()))
    up = design.sizing.leaf_up
    # default m: the largest both groups' up ports hold
    assert m == min(up // len(a), up // len(b))
    assert design.sizing.tiers == 1 and design.topology == "matrix"
    assert design.routing.policy == "deterministic"
    assert design.switch_counts()["spine"] == 0
    assert len(design.switches) >= design.sizing.lower_bound_switches
    assert check(design) == []


def test_links_per_pair_is_honoured_and_refused_when_it_does_not_fit(catalog):
    design = plan(matrix_spec(8 * 128, matrix={"links_per_pair": 4}), catalog)
    assert set(bundles(design).values()) == {4}
    assert check(design) == []
    with pytest.raises(InfeasibleError, match=r"fabric\.matrix\.links_per_pair"):
        plan(matrix_spec(8 * 128, matrix={"links_per_pair": 64}), catalog)


def test_lean_build_wires_the_least_m_that_keeps_the_ratio(catalog):
    design = plan(matrix_spec(32, whole_su=False), catalog)  # seed 003: 4 nodes
    assert design.switch_counts()["leaf"] == 5  # one A leaf per rail + one B leaf
    assert set(bundles(design).values()) == {4}  # B leaf: 16 node ports, 4 A leaves x 4 links
    assert check(design) == []


def test_switch_ids_follow_the_convention(catalog):
    design = plan(matrix_spec(8 * 256, planes=2), catalog)  # 2 A + 2 B ports per plane
    ids = {s.id for s in design.switches}
    assert ids == {f"p{p}-leafA-r{r}-{k:02d}" for p in (0, 1) for r in (0, 1) for k in (1, 2)} | {
        f"p{p}-leafB-{k:02d}" for p in (0, 1) for k in (1, 2, 3, 4)
    }
    assert all(s.group == "B" and s.rail == -1 for s in design.switches if s.role == "leaf-b")


# -- the largest Matrix ------------------------------------------------------------------------


@pytest.mark.parametrize("switch", ["cx864e-n", "sn5600"])
def test_largest_matrix_on_256x200g_holds_r_squared_over_4_dual_port_nics(catalog, switch):
    design = plan(matrix_spec(8 * 4096, switches=[switch]), catalog)
    radix = design.sizing.radix
    assert radix == 256
    assert len(design.nodes) * design.shape.nics == radix**2 // 4 == 16384
    assert set(bundles(design).values()) == {1}
    assert design.switch_counts()["leaf"] == 256
    assert check(design) == []
    with pytest.raises(InfeasibleError) as exc:
        plan(matrix_spec(8 * 4097, switches=[switch]), catalog)
    text = str(exc.value)
    assert "at most 4096 nodes (32768 GPUs, 16384 NICs)" in text
    assert "roft" in text and "fabric.planes" in text and "larger switch" in text


def test_one_nic_more_than_the_largest_matrix_is_refused(catalog):
    design = plan(one_nic_spec(16384, "cx864e-n"), catalog)
    assert design.shape.nics * len(design.nodes) == design.sizing.radix**2 // 4
    assert check(design) == []
    with pytest.raises(InfeasibleError, match=r"at most 16384 nodes \(16384 GPUs, 16384 NICs\)"):
        plan(one_nic_spec(16385, "cx864e-n"), catalog)


@pytest.mark.parametrize("radix,rails", [(64, 4), (128, 4), (256, 4), (256, 1), (128, 2)])
def test_capacity_is_the_largest_feasible_size(radix, rails):
    split = leaf_split(radix, 1.0)
    most = matrix_capacity(rails, split)
    assert most * rails == radix**2 // 4  # A-B port pairs at 1:1 with m = 1
    assert size_matrix(most, rails, split) is not None
    assert size_matrix(most + 1, rails, split) is None


# -- check() catches a broken Matrix -----------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> Design:
    return plan(matrix_spec(8 * 40))


def _with_links(design: Design, links: list[Link]) -> Design:
    return replace(design, links=tuple(links))


def test_generated_design_is_clean(small):
    assert check(small) == []


def test_check_reports_a_missing_a_b_link(small):
    links = list(small.links)
    drop = next(i for i, lk in enumerate(links) if lk.kind == "leaf-leaf")
    del links[drop]
    problems = check(_with_links(small, links))
    assert any("not a complete bipartite" in p for p in problems)


def test_check_reports_an_unequal_bundle(small):
    links = list(small.links)
    i = next(i for i, lk in enumerate(links) if lk.kind == "leaf-leaf")
    b_leaves = sorted(s.id for s in small.switches if s.role == "leaf-b")
    other = next(b for b in b_leaves if b != links[i].b_device)
    links[i] = replace(links[i], b_device=other, b_port=small.sizing.radix - 1)
    problems = check(_with_links(small, links))
    assert any("equal bundles" in p and "carries" in p for p in problems)


def test_check_reports_a_leaf_leaf_link_pointing_the_wrong_way(small):
    links = list(small.links)
    i = next(i for i, lk in enumerate(links) if lk.kind == "leaf-leaf")
    lk = links[i]
    links[i] = replace(
        lk, a_device=lk.b_device, a_port=lk.b_port, b_device=lk.a_device, b_port=lk.a_port
    )
    problems = check(_with_links(small, links))
    assert any("from an A leaf (a end) to a B leaf" in p for p in problems)


def test_check_reports_an_a_leaf_carrying_two_rails(small):
    switches = small.switch_by_id()
    links = list(small.links)
    i = next(
        i
        for i, lk in enumerate(links)
        if lk.kind == "node-leaf" and switches[lk.b_device].role == "leaf-a" and lk.rail == 0
    )
    rail1 = next(s.id for s in small.switches if s.role == "leaf-a" and s.rail == 1)
    links[i] = replace(links[i], b_device=rail1, b_port=small.sizing.leaf_down - 1)
    problems = check(_with_links(small, links))
    assert any("an A leaf carries a single rail" in p for p in problems)


def test_check_reports_b_ports_split_over_b_leaves(small):
    switches = small.switch_by_id()
    links = list(small.links)
    i = next(
        i
        for i, lk in enumerate(links)
        if lk.kind == "node-leaf" and switches[lk.b_device].role == "leaf-b"
    )
    other = next(s.id for s in small.switches if s.role == "leaf-b" and s.id != links[i].b_device)
    links[i] = replace(links[i], b_device=other, b_port=small.sizing.leaf_down - 1)
    problems = check(_with_links(small, links))
    assert any("spreads its B ports" in p for p in problems)


def test_check_reports_a_node_whose_groups_are_swapped(small):
    switches = small.switch_by_id()
    links = list(small.links)
    node = small.nodes[-1].id
    ia = next(
        i
        for i, lk in enumerate(links)
        if lk.a_device == node and switches[lk.b_device].role == "leaf-a" and lk.rail == 0
    )
    ib = next(
        i
        for i, lk in enumerate(links)
        if lk.a_device == node and switches[lk.b_device].role == "leaf-b" and lk.rail == 0
    )
    a, b = links[ia], links[ib]
    links[ia] = replace(a, a_port=b.a_port)
    links[ib] = replace(b, a_port=a.a_port)
    problems = check(_with_links(small, links))
    assert any(node in p and "unlike" in p for p in problems)


def test_check_reports_an_oversubscribed_matrix_leaf(small):
    a_leaf = next(s.id for s in small.switches if s.role == "leaf-a")
    links = [lk for lk in small.links if not (lk.kind == "leaf-leaf" and lk.a_device == a_leaf)]
    problems = check(_with_links(small, links))
    assert any(f"{a_leaf} has no links to the other leaf group" in p for p in problems)
