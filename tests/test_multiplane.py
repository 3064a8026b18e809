"""Multi-plane designs of every family: separate connected copies, no link between planes."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

import networkx as nx
import pytest

from railplan import check, plan, spec_from_dict
from railplan.design import Design

FAMILIES = ["roft", "matrix", "fat-tree", "rail-only"]


def spec(gpus: int, node: str, family: str, **fabric: Any) -> Any:
    fabric.setdefault("switches", ["cx864e-n"])
    return spec_from_dict(
        {"cluster": {"gpus": gpus, "node": node}, "fabric": {"topology": family, **fabric}}
    )


def plane_of_end(design: Design, device: str, port: int) -> int:
    switches = design.switch_by_id()
    if device in switches:
        return switches[device].plane
    return design.shape.port_plane[port]


def wiring(design: Design, plane: int) -> Counter[tuple[str, str, str]]:
    """A plane's links with the plane prefix taken off switch ids and node ports as rails."""
    switches = design.switch_by_id()
    prefix = f"p{plane}-"

    def end(device: str, port: int) -> str:
        if device in switches:
            return device.removeprefix(prefix)
        return f"{device}/rail{design.shape.port_rail[port]}"

    return Counter(
        (lk.kind, end(lk.a_device, lk.a_port), end(lk.b_device, lk.b_port))
        for lk in design.links
        if lk.plane == plane
    )


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize(
    "node,planes,assignment",
    [
        ("h20-4x2x200g", 2, "auto"),  # port 0 of every NIC to plane 0, port 1 to plane 1
        ("h20-4x2x200g", 2, "nic"),  # NICs 0 and 2 to plane 0, both ports
        ("hgx-h100-8x400g", 2, "auto"),  # NIC i to plane i mod 2
        ("hgx-h100-8x400g", 4, "auto"),
    ],
)
def test_planes_are_separate_connected_identical_copies(catalog, family, node, planes, assignment):
    design = plan(spec(8 * 24, node, family, planes=planes, plane_assignment=assignment), catalog)
    assert check(design) == []
    shape = design.shape
    if assignment == "nic" or shape.ports_per_nic == 1:
        assert shape.port_plane == tuple(shape.nic_of(p) % planes for p in range(shape.ports))
    else:
        assert shape.port_plane == tuple(p % planes for p in range(shape.ports))
    for lk in design.links:  # no link crosses planes
        ends = {
            plane_of_end(design, lk.a_device, lk.a_port),
            plane_of_end(design, lk.b_device, lk.b_port),
        }
        assert ends == {lk.plane}
    for plane in range(planes):
        members = [s.id for s in design.switches if s.plane == plane]
        fabric = nx.Graph()
        fabric.add_nodes_from(members)
        fabric.add_edges_from(
            (lk.a_device, lk.b_device)
            for lk in design.links
            if lk.plane == plane and lk.a_device in fabric and lk.b_device in fabric
        )
        if family == "rail-only":
            # rails meet inside the nodes: with the nodes, a plane is one piece
            fabric.add_edges_from(
                (lk.a_device, lk.b_device) for lk in design.links if lk.plane == plane
            )
        assert nx.is_connected(fabric), f"plane {plane} of {family} falls apart"
        assert wiring(design, plane) == wiring(design, 0)


def test_two_planes_let_a_matrix_outgrow_its_one_plane_maximum(catalog):
    nodes = 4097  # one plane of 256x200G leaves holds 4096 nodes of 4 dual-port NICs
    design = plan(spec(8 * nodes, "h20-4x2x200g", "matrix", planes=2), catalog)
    assert len(design.nodes) == nodes and design.planes == 2
    assert check(design) == []


# -- check() catches planes that are not separate copies ---------------------------------------


@pytest.fixture(scope="module")
def two_planes() -> Design:
    return plan(spec(8 * 24, "hgx-h100-8x400g", "roft", planes=2))


def test_check_reports_a_link_between_planes(two_planes):
    links = list(two_planes.links)
    i = next(i for i, lk in enumerate(links) if lk.kind == "leaf-spine" and lk.plane == 0)
    spine1 = next(s.id for s in two_planes.switches if s.role == "spine" and s.plane == 1)
    links[i] = replace(links[i], b_device=spine1, b_port=two_planes.sizing.radix - 1)
    problems = check(replace(two_planes, links=tuple(links)))
    assert any("crosses from plane 0" in p and spine1 in p for p in problems)


def test_check_reports_planes_that_are_not_copies(two_planes):
    links = [lk for lk in two_planes.links if not (lk.kind == "leaf-spine" and lk.plane == 1)][:-1]
    links += [lk for lk in two_planes.links if lk.kind == "leaf-spine" and lk.plane == 1][:-1]
    problems = check(replace(two_planes, links=tuple(links)))
    assert any("planes must be identical copies" in p for p in problems)


def test_check_reports_a_plane_without_node_ports(catalog):
    one_node = plan(spec(8, "hgx-h100-8x400g", "roft", planes=2), catalog)
    shape = replace(one_node.shape, port_plane=(0,) * one_node.shape.ports)
    problems = check(replace(one_node, shape=shape))
    assert any("node ports go to planes [0], expected each of 0..1" in p for p in problems)
