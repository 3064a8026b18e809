"""railplan topology: the tree read off the wiring, and each format checked the receiving tool's way.

Slurm topology/block and topology.yaml are checked against the rules of Slurm's source
(``src/plugins/topology/block/block_record.c``: BlockSizes, block aggregation;
``src/plugins/data_parser/v0.0.45/parsers.c``: the topology.yaml keys), as Debian 12's Slurm
(22.05) has neither; topology/tree runs in a live slurmctld (test_topology_slurm_live.py).
Kueue objects are validated against Kueue's CRD (tests/fixtures/kueue).
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import railplan
from railplan.catalog import Catalog
from railplan.cli import cmd_topology
from railplan.design import Design
from railplan.design.hierarchy import Hierarchy, hierarchy
from railplan.render import (
    hostlist,
    k8s_labels,
    kueue,
    nccl_env,
    scheduler_files,
    slurm_block,
    slurm_tree,
    slurm_yaml,
)
from tests.conftest import EXAMPLES, ROOT, make_spec

CRD = ROOT / "tests" / "fixtures" / "kueue" / "kueue.x-k8s.io_topologies.yaml"


@cache
def example(name: str, *overrides: str) -> Design:
    return railplan.plan(railplan.load_spec(EXAMPLES / f"{name}.yaml", list(overrides)))


DESIGNS = [("h100-1k",), ("matrix-4k",), ("h100-1k", "fabric.planes=2"), ("fat-tree-1k",),
           ("superpod-h100-4su",), ("basepod-8node",), ("hpn-pod",)]  # fmt: skip


def _attached(design: Design, roles: tuple[str, ...]) -> set[frozenset[str]]:
    role = {s.id: s.role for s in design.switches}
    on: dict[str, set[str]] = {}
    for lk in design.links:
        if lk.kind == "node-leaf" and role[lk.b_device] in roles:
            on.setdefault(lk.b_device, set()).add(lk.a_device)
    return {frozenset(v) for v in on.values()}


# -- hostlist --------------------------------------------------------------------------------


@given(st.lists(st.integers(0, 3000), min_size=1, max_size=60, unique=True), st.integers(1, 5))
def test_hostlist_round_trips(numbers: list[int], width: int) -> None:
    names = [f"node{n:0{width}d}" for n in numbers]
    assert hostlist.expand(hostlist.compress(names)) == names


def test_hostlist_forms() -> None:
    assert hostlist.compress([f"node{i:04d}" for i in range(1, 33)]) == "node[0001-0032]"
    assert hostlist.compress(["su01", "su02", "su04", "spine"]) == "su[01-02,04],spine"
    assert hostlist.compress(["a1", "a2", "b7"]) == "a[1-2],b7"


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="slurm-client not installed")
def test_hostlist_matches_slurms_own_expansion(tmp_path: Path) -> None:
    names = [f"node{i:04d}" for i in (*range(1, 40), 41, 99, *range(200, 233))] + ["x9", "gpu"]
    expr = hostlist.compress(names)
    conf = tmp_path / "slurm.conf"  # scontrol reads a configuration even to expand names
    conf.write_text("ClusterName=x\nSlurmctldHost=localhost\n")
    out = subprocess.run(
        ["scontrol", "show", "hostnames", expr], capture_output=True, text=True, check=True,
        env={"SLURM_CONF": str(conf), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.stdout.split() == names


# -- the tree ---------------------------------------------------------------------------------


@pytest.mark.parametrize("args", DESIGNS, ids=lambda a: "+".join(a))
def test_every_node_is_in_one_group_of_every_level(args: tuple[str, ...]) -> None:
    design = example(*args)
    h = hierarchy(design)
    nodes = {n.id for n in design.nodes}
    assert not h.unattached
    for i, lv in enumerate(h.levels):
        seen = Counter(n for g in lv.groups for n in g.nodes)
        assert set(seen) == nodes and set(seen.values()) == {1}, lv.name
        if i:  # each group is the union of its children
            below = {g.name: set(g.nodes) for g in h.levels[i - 1].groups}
            for g in lv.groups:
                assert set(g.nodes) == set().union(*(below[c] for c in g.children))
    assert len(h.levels[-1].groups) == 1  # the fabric is connected: one top


def test_roft_leaf_groups_are_the_sus_and_one_spine_set() -> None:
    design = example("h100-1k")
    h = hierarchy(design)
    assert [lv.name for lv in h.levels] == ["su", "spine"]
    assert {frozenset(g.nodes) for g in h.levels[0].groups} == _attached(design, ("leaf",))
    assert [len(g.nodes) for g in h.levels[0].groups] == [32] * 4


def stripe_sets(design: Design) -> set[frozenset[str]]:
    """Matrix: nodes at places [q*m, (q+1)*m) of every B leaf, read straight from the links."""
    role = {s.id: s.role for s in design.switches}
    order = {n.id: n.index for n in design.nodes}
    on_b: dict[str, list[str]] = {}
    for lk in design.links:
        if lk.kind == "node-leaf" and role[lk.b_device] == "leaf-b":
            on_b.setdefault(lk.b_device, [])
            if lk.a_device not in on_b[lk.b_device]:
                on_b[lk.b_device].append(lk.a_device)
    a, b = sorted(s.id for s in design.switches if s.role == "leaf-a")[0], sorted(on_b)[0]
    m = sum(1 for lk in design.links if {lk.a_device, lk.b_device} == {a, b})
    sets: dict[int, set[str]] = {}
    for members in on_b.values():
        for place, node in enumerate(sorted(members, key=order.__getitem__)):
            sets.setdefault(place // m, set()).add(node)
    return {frozenset(v) for v in sets.values()}


def test_roft_all_to_all_inside_an_su_beats_one_spread_over_sus_at_3_to_1() -> None:
    """Why the SU is the leaf group: at 3:1 the spines are the bottleneck (railplan's analyzer)."""
    from railplan.traffic.collisions import analyze

    design = example("h100-1k", 'fabric.oversubscription="3:1"')
    first = hierarchy(design).levels[0].groups
    assert [len(g.nodes) for g in first] == [48, 48, 32]
    index = {n.id: n.index for n in design.nodes}
    inside = [index[n] for n in first[0].nodes]
    spread = [index[n] for g in first for n in g.nodes[:16]]
    assert analyze(design, "alltoall", nodes=inside).collective_fraction == pytest.approx(1.0)
    # hashed (ECMP), 16 nodes of each SU already collide at the spines; D-mod-k (the
    # InfiniBand default) balances them over a leaf's 16 uplinks, until the job's traffic out
    # of a leaf exceeds them: every node, 48 of an SU sending 80/127 of their rate out
    ecmp = analyze(design, "alltoall", nodes=spread, routing="ecmp").collective_fraction
    assert ecmp is not None and ecmp < 0.95
    everyone = analyze(design, "alltoall").collective_fraction
    assert everyone is not None and everyone < 0.95


def test_matrix_levels_are_stripe_sets_then_the_matrix() -> None:
    design = example("matrix-4k")
    h = hierarchy(design)
    assert [lv.name for lv in h.levels] == ["stripes", "matrix"]
    assert {frozenset(g.nodes) for g in h.levels[0].groups} == stripe_sets(design)
    assert [len(g.nodes) for g in h.levels[0].groups] == [128] * 4  # m = 8 places x 16 B leaves


def test_matrix_jobs_inside_a_stripe_set_get_full_rate_packed_ones_do_not() -> None:
    """Why the Matrix's groups are stripes: railplan's analyzer on the placements a scheduler
    makes inside one group (its first nodes) against nodes packed on B leaves."""
    from railplan.traffic.collisions import analyze

    design = example("matrix-4k")
    group = hierarchy(design).levels[0].groups[0]
    index = {n.id: n.index for n in design.nodes}
    for n in (16, 64):
        inside = [index[x] for x in group.nodes[:n]]
        packed = list(range(n))  # node order: whole B leaves
        for pattern, key in (("ring", "order"), ("alltoall", "nodes")):
            good = analyze(design, pattern, **{key: inside}).collective_fraction
            bad = analyze(design, pattern, **{key: packed}).collective_fraction
            assert good == pytest.approx(1.0), (n, pattern)
            assert bad <= 0.5 + 1e-9, (n, pattern, bad)


def test_three_tier_has_pods_then_cores() -> None:
    design = railplan.plan(railplan.load_spec(EXAMPLES / "h100-16k-3tier.yaml"))
    h = hierarchy(design)
    assert [(lv.name, len(lv.groups)) for lv in h.levels] == [("su", 64), ("pod", 16), ("core", 1)]
    pods = {n.pod for n in design.nodes}
    by_pod = {frozenset(n.id for n in design.nodes if n.pod == p) for p in pods}
    assert {frozenset(g.nodes) for g in h.levels[1].groups} == by_pod
    text = slurm_block.render(h)
    assert "BlockSizes=32,128,2048" in text
    blocks = parse_block_conf(text)
    assert {frozenset(b) for b in slurm_aggregates(blocks)[1]} == by_pod


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 64).map(lambda n: n * 16), st.sampled_from([1, 2]))
def test_roft_groups_follow_the_sus(gpus: int, planes: int) -> None:
    spec = make_spec(gpus, switches=["qm9700"], planes=planes)
    design = railplan.plan(spec)
    h = hierarchy(design)
    sus = {n.su for n in design.nodes}
    assert {frozenset(g.nodes) for g in h.levels[0].groups} == {
        frozenset(n.id for n in design.nodes if n.su == s) for s in sus
    }
    assert {len(lv.groups) for lv in h.levels[1:]} <= {1}


# -- Slurm topology/block, by block_record.c's rules ---------------------------------------------


def parse_block_conf(text: str) -> list[tuple[str, list[str], list[int]]]:
    """(block, nodes, BlockSizes) the way _read_topo_file reads them (one BlockSizes line)."""
    blocks, sizes = [], []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        fields = dict(item.split("=", 1) for item in line.split())
        if "BlockSizes" in fields:
            assert not sizes, "one BlockSizes line"
            sizes = [int(s) for s in fields["BlockSizes"].split(",")]
        else:
            assert set(fields) == {"BlockName", "Nodes"}, line
            blocks.append((fields["BlockName"], hostlist.expand(fields["Nodes"])))
    return [(name, nodes, sizes) for name, nodes in blocks]


def check_block_sizes(sizes: list[int]) -> list[int]:
    """block_record.c: the first size is the base; each is base * 2^level, level <= 15."""
    base = sizes[0]
    levels = []
    for size in sizes:
        assert size > 0 and size % base == 0, sizes
        level = math.log2(size // base)
        assert level == int(level) and level <= 15, sizes
        levels.append(int(level))
    assert levels == sorted(set(levels)), sizes
    return levels


def slurm_aggregates(blocks: list[tuple[str, list[str], list[int]]]) -> list[list[list[str]]]:
    """Per BlockSizes level, the node lists Slurm's block_record_validate joins (in blocks)."""
    sizes = blocks[0][2]
    levels = check_block_sizes(sizes)
    count = len(blocks)
    out: list[list[list[str]]] = [[b[1] for b in blocks]]
    for level in levels[1:]:
        span = 1 << level
        agg: list[list[str]] = []
        for i in range(0, count, span):
            remaining = count - i
            if span > remaining:
                break
            agg.append([n for b in blocks[i : i + span] for n in b[1]])
        out.append(agg)
    return out


@pytest.mark.parametrize("args", DESIGNS, ids=lambda a: "+".join(a))
def test_block_conf_keeps_slurms_rules(args: tuple[str, ...]) -> None:
    design = example(*args)
    h = hierarchy(design)
    blocks = parse_block_conf(slurm_block.render(h))
    names = [b[0] for b in blocks]
    assert len(set(names)) == len(names)
    base = blocks[0][2][0]
    assert all(len(b[1]) >= base for b in blocks)  # "Each block must have at least" the base
    seen = Counter(n for b in blocks for n in b[1])
    assert set(seen) == {n.id for n in design.nodes} and set(seen.values()) == {1}
    # every aggregate Slurm builds is one of the design's groups (pods, spine or A groups)
    groups = [{frozenset(g.nodes) for g in lv.groups} for lv in h.levels]
    for level, agg in enumerate(slurm_aggregates(blocks)):
        assert any({frozenset(a) for a in agg} <= gs for gs in groups[level:]), level


def test_block_sizes_per_design() -> None:
    def sizes(*args: str) -> str:
        return next(
            line for line in slurm_block.render(hierarchy(example(*args))).splitlines()
            if line.startswith("BlockSizes=")
        )  # fmt: skip

    assert sizes("h100-1k") == "BlockSizes=32,128"
    assert sizes("matrix-4k") == "BlockSizes=128,512"
    assert sizes("superpod-h100-4su") == "BlockSizes=31,124"  # the 31-node SU sets the base
    text = slurm_block.render(hierarchy(example("hpn-pod")))
    assert "BlockSizes=136\n" in text and "is not a power of two of blocks" in text


# -- topology.yaml, by the data parser's keys --------------------------------------------------

YAML_KEYS = {"topology", "cluster_default", "block", "flat", "ring", "torus3d", "tree"}
SWITCH_KEYS = {"switch", "children", "nodes"}


@pytest.mark.parametrize("args", DESIGNS[:3], ids=lambda a: "+".join(a))
def test_topology_yaml_matches_the_conf_files(args: tuple[str, ...]) -> None:
    h = hierarchy(example(*args))
    doc = yaml.safe_load(slurm_yaml.render(h))
    assert [t["topology"] for t in doc] == ["tree", "block"]
    assert [t["cluster_default"] for t in doc] == [True, False]
    for t in doc:
        assert set(t) <= YAML_KEYS and next(iter(t)) == "topology"
        assert len(set(t) & {"block", "flat", "ring", "torus3d", "tree"}) == 1
    tree_lines = []
    for sw in doc[0]["tree"]["switches"]:
        assert set(sw) <= SWITCH_KEYS and ("children" in sw) != ("nodes" in sw)
        kind = "Switches" if "children" in sw else "Nodes"
        tree_lines.append(f"SwitchName={sw['switch']} {kind}={sw.get('children', sw.get('nodes'))}")
    conf = [ln for ln in slurm_tree.render(h).splitlines() if not ln.startswith("#")]
    assert tree_lines == conf
    block = doc[1]["block"]
    assert set(block) == {"block_sizes", "blocks"}
    blocks = parse_block_conf(slurm_block.render(h))
    assert block["block_sizes"] == blocks[0][2]
    assert [(b["block"], hostlist.expand(b["nodes"])) for b in block["blocks"]] == [
        (n, nodes) for n, nodes, _ in blocks
    ]


# -- Kubernetes labels and Kueue -----------------------------------------------------------------


@cache
def crd_schema(version: str = "v1beta2") -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    spec = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    return spec["schema"]["openAPIV3Schema"]  # type: ignore[no-any-return]


def _cel_rules(levels: list[dict[str, str]]) -> None:
    """The CRD's x-kubernetes-validations on spec.levels, which jsonschema does not run."""
    labels = [lv["nodeLabel"] for lv in levels]
    assert len(set(labels)) == len(labels), "must be unique"
    if kueue.HOSTNAME in labels:
        assert labels[-1] == kueue.HOSTNAME, "hostname only at the lowest level"


@pytest.mark.parametrize("scheme", k8s_labels.KEY_SCHEMES)
@pytest.mark.parametrize("args", DESIGNS[:3], ids=lambda a: "+".join(a))
def test_kueue_and_labels_agree_and_validate(args: tuple[str, ...], scheme: str) -> None:
    design = example(*args)
    h = hierarchy(design)
    obj = yaml.safe_load(kueue.render(h, scheme=scheme))
    assert obj["apiVersion"] == kueue.API_VERSION and obj["kind"] == "Topology"
    jsonschema.validate(obj, crd_schema())
    _cel_rules(obj["spec"]["levels"])
    assert re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", obj["metadata"]["name"])
    keys = [lv["nodeLabel"] for lv in obj["spec"]["levels"]]
    assert keys[-1] == "kubernetes.io/hostname" and len(keys) == len(h.levels) + 1
    rows = yaml.safe_load(k8s_labels.render(h, scheme=scheme))
    assert [r["node"] for r in rows] == [n.id for n in design.nodes]
    pattern = crd_schema()["properties"]["spec"]["properties"]["levels"]["items"]["properties"][
        "nodeLabel"
    ]["pattern"]
    for row in rows:  # every node has every level's label, and nothing else
        assert set(row["labels"]) == set(keys[:-1])
        for key, value in row["labels"].items():
            assert re.fullmatch(pattern, key)
            assert len(value) <= 63 and re.fullmatch(
                r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", value
            )
    # nodes with the same value at a level are exactly that level's group
    for lv, key in zip(h.levels, keys[-2::-1], strict=True):
        by_value: dict[str, set[str]] = {}
        for row in rows:
            by_value.setdefault(row["labels"][key], set()).add(row["node"])
        assert {frozenset(v) for v in by_value.values()} == {frozenset(g.nodes) for g in lv.groups}
    if scheme == "topograph":
        assert keys[:-1] == [f"fabric.topograph.run/tier-{i}" for i in range(len(h.levels))][::-1]


def test_label_prefix_and_kubectl_script(tmp_path: Path) -> None:
    h = hierarchy(example("h100-1k"))
    text = k8s_labels.render_kubectl(h, prefix="fabric.example.com/")
    lines = [ln for ln in text.splitlines() if "label node" in ln]
    assert len(lines) == 128
    assert lines[0] == (
        '"$KUBECTL" label node node0001 fabric.example.com/su=su01 '
        "fabric.example.com/spine=spine01 --overwrite"
    )
    script = tmp_path / "label.sh"
    script.write_text(text)
    fake = tmp_path / "kubectl"
    fake.write_text('#!/bin/sh\necho "$@" >> "$LOG"\n')
    fake.chmod(0o755)
    log = tmp_path / "log"
    subprocess.run(["bash", str(script)], env={"KUBECTL": str(fake), "LOG": str(log),
                   "PATH": "/usr/bin:/bin"}, check=True)  # fmt: skip
    assert log.read_text().splitlines()[5] == (
        "label node node0006 fabric.example.com/su=su01 fabric.example.com/spine=spine01 "
        "--overwrite"
    )
    if shutil.which("shellcheck"):
        subprocess.run(["shellcheck", str(script)], check=True)
    with pytest.raises(railplan.RailplanError, match="--label-prefix"):
        k8s_labels.render(h, prefix="Not A Domain/")


# -- NCCL ---------------------------------------------------------------------------------------


def _env(design: Design, catalog: Catalog) -> dict[str, str]:
    text = nccl_env.render(design, catalog)
    lines = text.splitlines()
    out = {}
    for i, line in enumerate(lines):
        if line.startswith("export "):
            assert lines[i - 1].startswith("# ") and len(lines[i - 1]) > 20  # a reason each
            name, value = line[len("export ") :].split("=", 1)
            out[name] = value
    subprocess.run(["bash", "-n"], input=text, text=True, check=True)
    return out


def test_nccl_per_family(catalog: Catalog) -> None:
    roft = _env(example("h100-1k"), catalog)
    assert roft["NCCL_CROSS_NIC"] == "0"
    assert roft["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}" for i in range(8))
    assert "NCCL_IB_GID_INDEX" not in roft  # InfiniBand
    two = _env(example("h100-1k", "fabric.planes=2"), catalog)
    assert two["NCCL_CROSS_NIC"] == "0"
    # ports alternate planes (port_plane 0,1,0,1...): rail order keeps both planes' rail 0 first
    assert two["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{i}" for i in range(8))
    matrix = _env(example("matrix-4k"), catalog)
    assert matrix["NCCL_CROSS_NIC"] == "2"
    assert matrix["NCCL_IB_QPS_PER_CONNECTION"] == "2"  # bonded 2 x 200G: one QP per port
    assert matrix["NCCL_IB_HCA"] == "=" + ",".join(f"bnxt_re_bond{i}" for i in range(4))
    assert matrix["NCCL_IB_GID_INDEX"] == "3"  # RoCE
    fat = _env(example("fat-tree-1k"), catalog)
    assert fat["NCCL_CROSS_NIC"] == "1"
    rail = _env(example("basepod-8node"), catalog)
    assert rail["NCCL_CROSS_NIC"] == "0" and rail["NCCL_PXN_DISABLE"] == "0"


# -- the command -----------------------------------------------------------------------------------


def test_formats_match_the_renderers() -> None:
    assert tuple(scheduler_files.FORMATS) == cmd_topology.FORMATS


def test_cli_writes_each_format_deterministically(cli, tmp_path: Path) -> None:
    spec = EXAMPLES / "h100-1k.yaml"
    assert cli("plan", spec, "-o", tmp_path / "plan", "--no-layout").code == 0
    design_json = tmp_path / "plan" / "design.json"
    for fmt in cmd_topology.FORMATS:
        first = cli("topology", spec, "--format", fmt)
        again = cli("topology", design_json, "--format", fmt)
        assert first.code == again.code == 0, first.err
        assert first.out == again.out and first.out
    res = cli("topology", spec, "--format", "kueue", "-o", tmp_path)
    assert res.code == 0 and (tmp_path / "kueue-topology.yaml").read_text().startswith("# Kueue")
    bad = cli("topology", spec, "--format", "slurm")
    assert bad.code == 2 and bad.err.startswith("railplan: error: --format 'slurm': use one of")
    keys = cli("topology", spec, "--format", "k8s-labels", "--label-keys", "nvidia")
    assert keys.code == 2 and "--label-keys 'nvidia'" in keys.err
    help_ = cli("topology", "--help")
    assert help_.code == 0 and "--from-asbuilt" in help_.out
    assert not re.search(r"<(list\[|[a-z]+ range)", help_.out), help_.out
    for argv, message in (
        (("--label-prefix", "Bad Prefix/"), "--label-prefix 'Bad Prefix/': give a DNS subdomain"),
        (("--names", EXAMPLES / "field" / "names.yaml"), "--names maps the names in as-built"),
        (("--from-asbuilt", tmp_path / "none.txt"), "no such file or folder"),
    ):
        res = cli("topology", spec, *argv)
        assert res.code == 2 and res.out == "" and message in res.err, res.err
        assert res.err.count("\n") == 1 and "Traceback" not in res.err


def test_handoff_uses_the_given_tree(catalog: Catalog) -> None:
    design = example("h100-1k")
    tree: Hierarchy = hierarchy(design)
    h = scheduler_files.handoff(design, catalog, tree, origin="as built (x)")
    assert "as built (x)" in scheduler_files.render("slurm-tree", h)


def test_the_docs_show_what_the_command_prints(cli) -> None:
    text = (ROOT / "docs" / "scheduler-handoff.md").read_text()
    command = "railplan topology examples/h100-1k.yaml --format slurm-tree"
    block = text.split(f"<!-- output: {command} -->\n```text\n", 1)[1]
    shown = block.split("```\n<!-- /output -->", 1)[0]
    res = cli(*command.split()[1:])
    assert res.code == 0 and res.out == shown
    labels = text.split("--format k8s-labels --label-keys topograph\n", 2)[2].split("```", 1)[0]
    out = cli("topology", EXAMPLES / "hpn-pod.yaml", "--format", "k8s-labels", "--label-keys",
              "topograph").out  # fmt: skip
    body = "\n".join(ln for ln in out.splitlines() if not ln.startswith("#"))
    assert body.startswith(labels.rstrip("\n"))
