"""railplan topology --from-asbuilt: the scheduler's tree read from captures, against the plan's."""

from __future__ import annotations

from pathlib import Path

import pytest

import railplan
from railplan.design import Design
from railplan.design.hierarchy import hierarchy
from railplan.field.asbuilt_topology import check_topology, split_captures
from railplan.pipeline.source import read_design
from railplan.render import slurm_tree
from tests import test_asbuilt as asb
from tests.conftest import EXAMPLES, make_spec

FIELD = EXAMPLES / "field"


def _strip(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if not ln.startswith("#")]


def test_field_ib_capture_gives_the_plans_tree(cli) -> None:
    design = read_design(FIELD / "ib-design.json")
    result = check_topology(design, ibnetdiscover=FIELD / "ibnetdiscover.txt")
    assert result.ok and result.findings == ()
    assert result.as_built.partitions() == result.planned.partitions()
    assert [g.name for g in result.as_built.levels[0].groups] == ["su01"]
    # the capture has two node cables swapped on one leaf: a cabling fault, not a topology one
    assert [f.kind for f in result.cabling.findings] == ["swap"]
    plan = cli("topology", FIELD / "ib-design.json", "--format", "slurm-tree")
    built = cli(
        "topology", FIELD / "ib-design.json", "--format", "slurm-tree",
        "--from-asbuilt", FIELD / "ibnetdiscover.txt",
    )  # fmt: skip
    assert plan.code == built.code == 0, built.err
    assert _strip(plan.out) == _strip(built.out)
    assert "as built (ibnetdiscover.txt)" in built.out
    assert "0 difference(s) from the plan; 1 cabling finding(s)" in built.err


def test_field_lldp_capture_gives_the_plans_tree(cli) -> None:
    design = read_design(FIELD / "design.json")
    result = check_topology(design, lldp=[FIELD / "lldp"], names=FIELD / "names.yaml")
    assert result.ok and result.as_built.partitions() == result.planned.partitions()
    assert result.assumed == 0
    res = cli(
        "topology", FIELD / "design.json", "--format", "k8s-labels",
        "--from-asbuilt", FIELD / "lldp", "--names", FIELD / "names.yaml",
    )  # fmt: skip
    assert res.code == 0 and _strip(res.out) == _strip(
        cli("topology", FIELD / "design.json", "--format", "k8s-labels").out
    )


def test_captures_are_told_apart(tmp_path: Path) -> None:
    lldp, ib, link = split_captures([FIELD / "lldp", FIELD / "ibnetdiscover.txt"])
    assert lldp == [FIELD / "lldp"] and ib == FIELD / "ibnetdiscover.txt" and link is None
    with pytest.raises(railplan.RailplanError, match="no such file"):
        split_captures([tmp_path / "nothing.txt"])


def _two_sus() -> Design:
    return railplan.plan(railplan.load_spec(EXAMPLES / "h100-1k.yaml"))


def _swap_between_sus(design: Design) -> tuple[list[asb.Edge], tuple[str, str]]:
    """node0001's and node0033's rail-0 cables exchanged at the leaf end (SU 1 and SU 2)."""
    edges = asb.planned_edges(design)
    at = {(a.device, a.port): i for i, (a, _, _) in enumerate(edges)}
    i, j = at[("node0001", 0)], at[("node0033", 0)]
    (a1, b1, r1), (a2, b2, r2) = edges[i], edges[j]
    edges[i], edges[j] = (a1, b2, r1), (a2, b1, r2)
    return edges, (design.links[i].id, design.links[j].id)


def test_a_swap_between_sus_moves_both_nodes_out_and_is_reported(cli, tmp_path: Path) -> None:
    design = _two_sus()
    edges, links = _swap_between_sus(design)
    capture = tmp_path / "ibnetdiscover.txt"
    capture.write_text(asb.render_ibnetdiscover(design, edges))
    result = check_topology(design, ibnetdiscover=capture)
    assert not result.ok
    moved = sorted(f.links[0] for f in result.findings)
    assert moved == ["node0001", "node0033"]
    for f in result.findings:
        assert f.kind == "topology" and " leaves su0" in f.message
        assert set(f.labels) == set(links)  # the two cables the as-built check blames
    first = result.as_built.levels[0]
    assert sorted(len(g.nodes) for g in first.groups) == [1, 1, 31, 31, 32, 32]
    names = {g.name: g.nodes for g in first.groups}
    assert names["su01"] == tuple(f"node{i:04d}" for i in range(2, 33))  # plan names kept
    assert names["su-asbuilt01"] == ("node0001",) and names["su-asbuilt02"] == ("node0033",)
    assert [f.kind for f in result.cabling.findings] == ["swap"]
    # the command writes the as-built file and exits 1
    out = tmp_path / "topology.conf"
    res = cli("topology", EXAMPLES / "h100-1k.yaml", "--from-asbuilt", capture, "-o", out)
    assert res.code == 1
    assert (
        "topology: node0001: node0001 leaves su01 as built: it reaches p0-leaf-su02-r0" in res.err
    )
    assert "topology: node0033:" in res.err
    text = out.read_text()
    assert "SwitchName=su-asbuilt01 Nodes=node0001\n" in text
    assert "SwitchName=su01 Nodes=node[0002-0032]\n" in text
    assert "SwitchName=spine01 Switches=su-asbuilt01,su01,su-asbuilt02,su[02-04]\n" in text


def test_a_node_with_no_cable_seen_is_left_out_and_reported(tmp_path: Path) -> None:
    design = _two_sus()
    edges = [e for e in asb.planned_edges(design) if e[0].device != "node0005"]
    capture = tmp_path / "ibnetdiscover.txt"
    capture.write_text(asb.render_ibnetdiscover(design, edges))
    result = check_topology(design, ibnetdiscover=capture)
    assert [f.links for f in result.findings] == [("node0005",)]
    assert "on no switch" in result.findings[0].message
    assert len(result.findings[0].labels) == 8  # its eight missing cables
    assert result.as_built.unattached == ("node0005",)
    text = slurm_tree.render(result.as_built)
    assert "node0005" not in text.split("# on no switch")[0].split("\n", 3)[-1]


def test_a_leaf_uplink_to_another_pod_is_a_group_finding(tmp_path: Path) -> None:
    design = railplan.plan(make_spec(1024, switches=["cx732q-n"], tiers=3))  # 8 SUs, 4 pods
    edges = asb.planned_edges(design)
    ups = [i for i, lk in enumerate(design.links) if lk.kind == "leaf-spine"]
    i = ups[0]
    pod_of = {s.id: s.pod for s in design.switches}
    j = next(k for k in ups if pod_of[design.links[k].b_device] != pod_of[design.links[i].b_device])
    (a1, b1, r1), (a2, b2, r2) = edges[i], edges[j]
    edges[i], edges[j] = (a1, b2, r1), (a2, b1, r2)  # two uplinks exchanged at the spine end
    result = check_topology(design, ibnetdiscover=_write(tmp_path, design, edges))
    kinds = {f.links[0] for f in result.findings}
    leaf_su = {design.switch_by_id()[design.links[k].a_device].su for k in (i, j)}
    assert kinds == {f"su{s + 1:02d}" for s in leaf_su}
    assert all("is not under pod" in f.message for f in result.findings)
    assert all(len(f.labels) == 2 for f in result.findings)  # the two uplinks swapped
    plan_tree = hierarchy(design)
    assert result.as_built.partitions()[0] == plan_tree.partitions()[0]  # leaves unchanged


def _write(tmp_path: Path, design: Design, edges: list[asb.Edge]) -> Path:
    path = tmp_path / "ibnetdiscover.txt"
    path.write_text(asb.render_ibnetdiscover(design, edges))
    return path
