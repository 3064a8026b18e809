"""The scale ladder and the burn-in: rungs and expectations in the plan, scripts and grader.

The ladder's runs agree with the NCCL section's (same collective, same nodes, same model); a
rung missing from a design is left out; the burn-in keeps every node cable busy both ways, its
expectation is line rate x payload share x the analyzer's share capped at the load, its script
runs against stand-in tools and the grader names the slow device's rail and cable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import pytest

from railplan.catalog import load_catalog
from railplan.design.types import Node
from railplan.testplan import TestPlanOptions, build_testplan
from railplan.testplan.ladder import COLLECTIVES, rung_nodes
from tests.conftest import write_scripts
from tests.test_grade import perftest_bw
from tests.test_testplan import cabled

OPTIONS = TestPlanOptions(ladder=True, burnin_s=600, burnin_load=0.8)


@cache
def _plan(name: str, options: TestPlanOptions = OPTIONS):
    design = cabled(name)
    return design, build_testplan(design, load_catalog(), options)


def _tests(plan, key):
    return {t.id: t for t in plan.section(key).tests}


def test_ladder_has_every_rung_and_collective():
    _, plan = _plan("seed001-64gpu")
    ladder = _tests(plan, "ladder")
    tags = [tag for _, tag in COLLECTIVES]
    assert set(ladder) == {f"LAD-{r}-{t}" for r in ("NODE", "PAIR", "RAIL", "FABRIC") for t in tags}
    for t in ladder.values():
        assert t.checks[0].metric == "avg_busbw_gbs" and t.checks[0].threshold > 0
    assert {len(ladder[f"LAD-{r}-AR"].nodes) for r in ("NODE", "PAIR", "FABRIC")} == {1, 2, 8}
    assert ("NCCL_TESTS_SPLIT", "MOD 8") in ladder["LAD-RAIL-AG"].env


def test_ladder_agrees_with_the_nccl_section():
    """Same collective on the same nodes: the same expectation; the node rung's floor is the
    pair rung's; reduce-scatter and all-gather make the same n-1 ring steps."""
    _, plan = _plan("seed001-64gpu")
    ladder, nccl = _tests(plan, "ladder"), _tests(plan, "nccl")
    assert ladder["LAD-FABRIC-AR"].checks[0] == nccl["NCCL-AR-ALL"].checks[0]
    assert ladder["LAD-RAIL-AR"].checks[0] == nccl["NCCL-AR-RAILS"].checks[0]
    pair = next(t for k, t in nccl.items() if k.startswith("NCCL-AR-2N-"))
    assert ladder["LAD-PAIR-AR"].nodes == pair.nodes
    assert ladder["LAD-PAIR-AR"].checks[0] == pair.checks[0]
    for _, tag in COLLECTIVES:
        node, pair_t = ladder[f"LAD-NODE-{tag}"].checks[0], ladder[f"LAD-PAIR-{tag}"].checks[0]
        assert (node.expected, node.threshold) == (pair_t.expected, pair_t.threshold)
    ag, rs = ladder["LAD-FABRIC-AG"].checks[0], ladder["LAD-FABRIC-RS"].checks[0]
    assert ag.expected == rs.expected
    # all-to-all across the fabric is slower than the ring collectives (off-node share)
    assert ladder["LAD-FABRIC-A2A"].checks[0].expected < ag.expected


def _node(i: int, su: int, pod: int) -> Node:
    return Node(f"n{i:03d}", i, su, pod, i)


def test_rungs_follow_the_design_su_and_pod():
    nodes = [_node(i, (i // 3) % 2, i // 6) for i in range(12)]  # 2 pods x 2 SUs x 3 nodes
    ctx = SimpleNamespace(design=SimpleNamespace(nodes=nodes))
    rungs = dict(rung_nodes(ctx, [("same-leaf", "n000", "n001")]))
    assert list(rungs) == ["node", "pair", "rail", "su", "pod", "fabric"]
    assert [len(rungs[r]) for r in rungs] == [1, 2, 12, 3, 6, 12]
    assert rungs["su"] == ["n000", "n001", "n002"]
    # one SU, one pod: no SU or pod rung (they would equal the fabric rung)
    one = SimpleNamespace(design=SimpleNamespace(nodes=[_node(i, 0, 0) for i in range(4)]))
    assert [r for r, _ in rung_nodes(one, [("same-leaf", "n000", "n001")])] == [
        "node", "pair", "rail", "fabric"
    ]  # fmt: skip


def test_ladder_and_burnin_reach_json_text_and_pdf():
    from railplan.render.pdf_testplan import render_testplan
    from railplan.render.testplan_data import plan_to_dict, plan_to_text

    _, plan = _plan("seed000-2node")
    data = plan_to_dict(plan)
    assert [s["key"] for s in data["sections"]][-2:] == ["ladder", "burnin"]
    ids = {e["test_id"] for e in data["expectations"]}
    assert {"LAD-NODE-AR", "LAD-RAIL-A2A", "BURN-node0001", "BURN-node0002"} <= ids
    text = plan_to_text(plan)
    assert "SCALE LADDER" in text and "BURN-IN" in text and "all_gather_perf" in text
    _, plain = _plan("seed000-2node", TestPlanOptions())
    assert [s.key for s in plain.sections][-1] == "nccl"  # opt-in: the default plan is unchanged
    pages = render_testplan(plan)[1]
    assert pages > render_testplan(plain)[1]


def test_burnin_keeps_every_node_cable_busy():
    design, plan = _plan("seed001-64gpu")
    burn = plan.section("burnin").tests
    assert sorted(t.nodes[0] for t in burn) == sorted(t.nodes[1] for t in burn)  # a permutation
    assert all(t.nodes[0] != t.nodes[1] for t in burn)
    node_cables = {c.id for c in design.cables if c.link_id.startswith("NL")}
    referenced = {r.split("@")[0] for t in burn for r in t.refs}
    assert node_cables and node_cables <= referenced
    check = burn[0].checks[0]
    eff = plan.efficiency.value
    assert check.metric == "bw_min_gbps"
    assert check.expected <= round(400 * eff * 0.8, 2) + 1e-9  # capped at the load
    assert check.threshold == pytest.approx(check.expected * 0.95, abs=0.02)
    assert " -D 600" in burn[0].command[0] and "--rate_limit=320" in burn[0].command[0]


@pytest.mark.parametrize("slow", ["", "mlx5_3"])
def test_burnin_script_judges_the_slowest_device(slow: str, tmp_path: Path):
    from tests.test_scripts_parallel import PERFTEST, SSH

    design, plan = _plan("seed000-2node")
    folder = write_scripts(plan, design, tmp_path / "scripts")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    line = "echo ' 65536      4000000          392.10             391.96               0.747602'"
    assert line in PERFTEST
    fake = PERFTEST.replace(
        line,
        'if [ "$dev" = "${FAKE_SLOW:-}" ]; then\n'
        "  echo ' 65536      4000000          196.10             195.98               0.37'\n"
        f"else\n  {line}\nfi",
    )
    for tool, text in {"ssh": SSH, "ib_write_bw": fake}.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    (tmp_path / "net").mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SSH": str(bin_dir / "ssh"),
           "RESULTS": str(tmp_path / "results"), "SERVER_WAIT": "0", "FAKE_RUN_S": "0.05",
           "FAKE_NET": str(tmp_path / "net"), "FAKE_SLOW": slow}  # fmt: skip
    done = subprocess.run(["bash", str(folder / "70_burnin.sh")], env=env, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    verdicts = (tmp_path / "results" / "summary" / "verdicts.txt").read_text().splitlines()
    status = {ln.split()[0]: ln for ln in verdicts}
    assert set(status) == {"BURN-node0001", "BURN-node0002"}
    if not slow:
        assert all(" OK " in ln for ln in status.values())
    else:
        assert all(" FAIL " in ln and "slowest mlx5_3 195.98" in ln for ln in status.values())
    if shutil.which("shellcheck"):
        check = subprocess.run(["shellcheck", "-x", "70_burnin.sh", "60_ladder.sh"], cwd=folder,
                               capture_output=True, text=True)  # fmt: skip
        assert check.returncode == 0, check.stdout


def test_grader_names_the_slow_burnin_rail(tmp_path: Path):
    from railplan.field.measure import Measure
    from railplan.field.names import NameMap
    from railplan.testplan.expectation import expectations

    design, plan = _plan("seed000-2node")
    exp = next(e for e in expectations(plan) if e.test_id == "BURN-node0001")
    measure = Measure(design, NameMap(design))
    files = []
    for k in range(8):
        path = tmp_path / f"mlx5_{k}.txt"
        path.write_text(perftest_bw(150.0 if k == 3 else 300.0))
        files.append(path)
    value, detail, status = measure(exp, files)
    assert value == 150.0 and status == "" and not exp.passes(value)
    cable = next(c.id for c in design.cables if c.link_id == _link(design, "node0001", 3))
    assert "slowest mlx5_3" in detail and "rail 3" in detail and cable in detail
    healthy = tmp_path / "ok"
    healthy.mkdir()
    for k in range(8):
        (healthy / f"mlx5_{k}.txt").write_text(perftest_bw(300.0))
    value, _, _ = measure(exp, sorted(healthy.iterdir()))
    assert value == 300.0 and exp.passes(value)


def _link(design, node: str, port: int) -> str:
    return next(lk.id for lk in design.links if lk.a_device == node and lk.a_port == port)
