"""The generated topology.conf in a live slurmctld (Debian's 22.05): what ``scontrol show topology``
reports, and where the controller puts a job (topology/tree; topology/block and topology.yaml
need Slurm 23.11+ and are checked against the source's rules in test_topology_handoff.py)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import railplan
from railplan.design import Design
from railplan.design.hierarchy import hierarchy
from railplan.render import slurm_tree
from tests.conftest import EXAMPLES
from tests.slurm_live import NEEDS_SLURM, slurmctld

pytestmark = NEEDS_SLURM
#: what the tree plugin logs about a topology.conf it does not like (switch_record.c)
TREE_WARNINGS = (
    "Multiple leaf switches contain nodes",
    "switches lack access",
    "no switch can reach all nodes",
    "has both child switches and nodes",
    "Invalid hostnames in switch configuration",
)


def _design(name: str, *overrides: str) -> Design:
    spec = railplan.load_spec(EXAMPLES / f"{name}.yaml", list(overrides))
    return railplan.plan(spec)


def _attached(design: Design, roles: tuple[str, ...]) -> set[frozenset[str]]:
    """Node sets of the switches of ``roles``, read straight from the links."""
    role = {s.id: s.role for s in design.switches}
    on: dict[str, set[str]] = {}
    for lk in design.links:
        if lk.kind == "node-leaf" and role[lk.b_device] in roles:
            on.setdefault(lk.b_device, set()).add(lk.a_device)
    return {frozenset(v) for v in on.values()}


def _levels(topology: list[dict[str, object]]) -> dict[int, list[dict[str, object]]]:
    out: dict[int, list[dict[str, object]]] = {}
    for sw in topology:
        out.setdefault(int(sw["level"]), []).append(sw)  # type: ignore[call-overload]
    return out


def _node_sets(switches: list[dict[str, object]]) -> set[frozenset[str]]:
    return {frozenset(sw["nodes"]) for sw in switches}  # type: ignore[arg-type]


def _each_once(design: Design, leaf_level: list[dict[str, object]]) -> None:
    seen = Counter(n for sw in leaf_level for n in sw["nodes"])  # type: ignore[attr-defined]
    assert set(seen) == {n.id for n in design.nodes}
    assert set(seen.values()) == {1}


def test_h100_1k_one_spine_set_four_sus_and_a_32_node_job_in_one_su(tmp_path: Path) -> None:
    design = _design("h100-1k")
    nodes = [n.id for n in design.nodes]
    with slurmctld(tmp_path / "slurm", nodes, slurm_tree.render(hierarchy(design))) as slurm:
        levels = _levels(slurm.topology())
        assert sorted(levels) == [0, 1]
        (top,) = levels[1]  # one spine-level switch over every node
        assert sorted(top["nodes"]) == sorted(nodes)  # type: ignore[type-var]
        assert len(levels[0]) == 4 and _node_sets(levels[0]) == _attached(design, ("leaf",))
        assert {len(sw["nodes"]) for sw in levels[0]} == {32}  # type: ignore[arg-type]
        _each_once(design, levels[0])
        assert set(top["switches"]) == {sw["name"] for sw in levels[0]}  # type: ignore[arg-type]
        # 8 nodes taken first, then 32: a flat placement would take node0009-0040 across two
        # SUs; the tree plugin must give the job one whole leaf group
        first = slurm.allocation(slurm.submit(8))
        job = slurm.allocation(slurm.submit(32))
        assert len(first) == 8 and len(job) == 32 and not set(first) & set(job)
        under = [sw for sw in levels[0] if set(job) <= set(sw["nodes"])]  # type: ignore[call-overload]
        assert len(under) == 1, (job, levels[0])


def test_matrix_4k_levels_are_stripe_sets_then_the_matrix(tmp_path: Path) -> None:
    from tests.test_topology_handoff import stripe_sets

    design = _design("matrix-4k")
    nodes = [n.id for n in design.nodes]
    with slurmctld(tmp_path / "slurm", nodes, slurm_tree.render(hierarchy(design))) as slurm:
        levels = _levels(slurm.topology())
        assert sorted(levels) == [0, 1]
        assert _node_sets(levels[0]) == stripe_sets(design) and len(levels[0]) == 4
        _each_once(design, levels[0])
        assert _node_sets(levels[1]) == {frozenset(nodes)}
        job = slurm.allocation(slurm.submit(32))
        assert any(set(job) <= set(sw["nodes"]) for sw in levels[0])  # type: ignore[call-overload]
        b_leaf = {lk.a_device: lk.b_device for lk in design.links
                  if lk.b_device.startswith("p0-leafB")}  # fmt: skip
        per_leaf = Counter(b_leaf[n] for n in job)
        assert max(per_leaf.values()) <= 8  # at most m of the job's nodes on any B leaf


def test_two_plane_roft_groups_each_su_over_both_planes(tmp_path: Path) -> None:
    design = _design("h100-1k", "fabric.planes=2")
    assert design.planes == 2
    nodes = [n.id for n in design.nodes]
    leaves = {s.id: s.plane for s in design.switches if s.role == "leaf"}
    plane_sets = {
        p: {
            frozenset(lk.a_device for lk in design.links if lk.b_device == leaf)
            for leaf, pl in leaves.items()
            if pl == p
        }
        for p in (0, 1)
    }
    assert plane_sets[0] == plane_sets[1]  # an SU's nodes are the same in both planes
    with slurmctld(tmp_path / "slurm", nodes, slurm_tree.render(hierarchy(design))) as slurm:
        levels = _levels(slurm.topology())
        assert sorted(levels) == [0, 1]
        assert _node_sets(levels[0]) == plane_sets[0] and len(levels[0]) == 4
        _each_once(design, levels[0])
        assert _node_sets(levels[1]) == {frozenset(nodes)}
        log = slurm.log()
        for warning in TREE_WARNINGS:
            assert warning not in log, log


@pytest.mark.parametrize("name", ["fat-tree-1k", "superpod-h100-4su"])
def test_other_families_are_accepted_with_every_node_once(tmp_path: Path, name: str) -> None:
    design = _design(name)
    nodes = [n.id for n in design.nodes]
    with slurmctld(tmp_path / "slurm", nodes, slurm_tree.render(hierarchy(design))) as slurm:
        levels = _levels(slurm.topology())
        _each_once(design, levels[0])
        assert _node_sets(levels[max(levels)]) == {frozenset(nodes)}
        log = slurm.log()
        for warning in TREE_WARNINGS:
            assert warning not in log, log


def test_as_built_file_after_a_swap_is_accepted_with_the_moved_nodes_apart(tmp_path: Path) -> None:
    from railplan.field.asbuilt_topology import check_topology
    from tests import test_asbuilt as asb
    from tests.test_topology_asbuilt import _swap_between_sus

    design = _design("h100-1k")
    edges, _ = _swap_between_sus(design)
    capture = tmp_path / "ibnetdiscover.txt"
    capture.write_text(asb.render_ibnetdiscover(design, edges))
    built = check_topology(design, ibnetdiscover=capture).as_built
    nodes = [n.id for n in design.nodes]
    with slurmctld(tmp_path / "slurm", nodes, slurm_tree.render(built, "as built")) as slurm:
        levels = _levels(slurm.topology())
        _each_once(design, levels[0])
        alone = {sw["name"]: sw["nodes"] for sw in levels[0] if len(sw["nodes"]) == 1}  # type: ignore[arg-type]
        assert alone == {"su-asbuilt01": ["node0001"], "su-asbuilt02": ["node0033"]}
        assert _node_sets(levels[1]) == {frozenset(nodes)}
