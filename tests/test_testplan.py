"""Test plan: coverage of every inter-switch cable and node, derived expectations, the golden
seed 000 plan, the CP-SAT pair cover and the grader contract."""

from __future__ import annotations

import itertools
import os
import re
from functools import cache
from pathlib import Path

import pytest

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.pipeline.layout import complete
from railplan.pipeline.plan import plan
from railplan.render.testplan_data import plan_to_dict, plan_to_json, plan_to_text, plan_to_yaml
from railplan.solve import pair_cover
from railplan.spec import load_spec
from railplan.testplan import Expectation, TestPlanOptions, build_testplan, expectations
from railplan.testplan import TestPlan as Plan
from railplan.testplan import TestPlanOptions as PlanOptions
from railplan.traffic.routing import paths

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.stem for p in (ROOT / "examples").glob("*.yaml"))
GOLDEN = ROOT / "tests" / "golden" / "testplan_seed000.txt"
#: examples whose layout and plan take seconds, run only with RAILPLAN_SLOW=1 (bench covers them)
BIG = {"h100-16k-3tier"}


def example_params(slow_too: frozenset[str] = frozenset()) -> list[object]:
    """Every example; the BIG ones (and ``slow_too``) only with RAILPLAN_SLOW=1 (CI sets it)."""
    slow = os.environ.get("RAILPLAN_SLOW") == "1"
    return [
        pytest.param(
            n, marks=pytest.mark.skipif(n in BIG | slow_too and not slow, reason="RAILPLAN_SLOW=1")
        )
        for n in EXAMPLES
    ]


@cache
def cabled(name: str, *overrides: str) -> Design:
    """An example design, planned and laid out (first-fit placement: fast and deterministic)."""
    catalog = load_catalog()
    spec = load_spec(ROOT / "examples" / f"{name}.yaml", list(overrides))
    design, _ = complete(plan(spec, catalog), spec, catalog, method="naive")
    return design


@cache
def example_plan(name: str, *overrides: str) -> Plan:
    return build_testplan(cabled(name, *overrides), load_catalog())


#: an InfiniBand example hashed as a RoCE fabric would be (its default is the SM's D-mod-k)
ECMP = "fabric.routing.policy=ecmp"


def cables_of(tp: Plan, refs: tuple[str, ...]) -> set[str]:
    """Cable ids a test references: ``C00001@sw:P1`` directly, ``up:sw`` through its group."""
    out: set[str] = set()
    for ref in refs:
        if ref in tp.link_groups:
            out |= set(tp.link_groups[ref])
        else:
            out.add(ref.split("@", 1)[0])
    return out


# -- acceptance: coverage ------------------------------------------------------------------------


@pytest.mark.parametrize("name", example_params())
def test_plan_covers_every_inter_switch_cable_and_every_node(name: str) -> None:
    design = cabled(name)
    tp = example_plan(name)
    cable_of = {c.link_id: c.id for c in design.cables}
    # an attached device's links carry no GPU flow: only the cabling section checks them
    inter = {cable_of[lk.id] for lk in design.links if lk.kind not in ("node-leaf", "device-leaf")}
    fabric_tests = [t for t in tp.tests() if t.kind in ("pair", "rdma_bw")]
    exercised = set().union(*(cables_of(tp, t.refs) for t in fabric_tests))
    assert inter <= exercised, sorted(inter - exercised)[:10]
    assert tp.coverage.covered_links == tp.coverage.inter_switch_links == len(inter)
    assert tp.coverage.uncovered == ()
    paired = {n for t in tp.section("pairs").tests for n in t.nodes}
    assert paired == {n.id for n in design.nodes}
    # every cable, node-leaf included, is checked at a switch port by the cabling section
    cabling = set().union(*(cables_of(tp, t.refs) for t in tp.section("cabling").tests))
    assert cabling == {c.id for c in design.cables}


@pytest.mark.parametrize("name", example_params())
def test_pair_rounds_share_no_node_and_no_link(name: str) -> None:
    tp = example_plan(name)
    by_round: dict[int, list[tuple[set[str], set[str]]]] = {}
    for t in tp.section("pairs").tests:
        by_round.setdefault(t.round, []).append((set(t.nodes), set(t.refs)))
    for tests in by_round.values():
        for (n1, r1), (n2, r2) in itertools.combinations(tests, 2):
            assert not n1 & n2
            assert not r1 & r2


def test_pairs_reach_the_closed_form_lower_bound_on_roft() -> None:
    tp = example_plan("h100-1k")
    c = tp.coverage
    assert c.partners == 2
    assert c.pairs == c.lower_bound == 128  # 128 nodes x 2 partners / 2
    assert c.solver == "CP-SAT optimal"
    degree: dict[str, set[str]] = {}
    for t in tp.section("pairs").tests:
        a, b = t.nodes
        degree.setdefault(a, set()).add(b)
        degree.setdefault(b, set()).add(a)
    assert min(len(p) for p in degree.values()) >= 2


def test_ecmp_groups_contain_every_path_the_router_gives() -> None:
    """Validator: a pair's link groups hold every fabric link routing.paths may hash it onto."""
    for overrides, policy in (((ECMP,), "ecmp"), ((), "dmodk")):
        design = cabled("h100-1k", *overrides)
        assert design.routing.policy == policy
        tp = example_plan("h100-1k", *overrides)
        cable_of = {c.link_id: c.id for c in design.cables}
        fabric = {lk.id for lk in design.links if lk.kind != "node-leaf"}
        checked = 0
        for t in [t for t in tp.section("pairs").tests if t.refs][:20]:
            u, v = t.nodes
            allowed = cables_of(tp, t.refs)
            for port in range(design.shape.ports):
                for p in paths(design, u, port, v, port):
                    used = {cable_of[lk] for lk in p.links if lk in fabric}
                    assert used <= allowed
                    checked += len(used)
        assert checked > 0


# -- acceptance: golden seed 000, derived expectations --------------------------------------------


def test_seed000_golden_text() -> None:
    """The whole plan as text; the design hash is masked (it follows every upstream change to
    the design's JSON, which says nothing about the plan)."""
    text = plan_to_text(example_plan("seed000-2node"))
    text = re.sub(r"design [0-9a-f]{12}", "design <hash>", text)
    if os.environ.get("RAILPLAN_UPDATE_GOLDEN") == "1":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8"), "run with RAILPLAN_UPDATE_GOLDEN=1"


def test_seed000_expectations_are_line_rate_times_wire_efficiency() -> None:
    """No number is typed in: the RDMA and NCCL expectations follow the MTU through the wire
    payload share (RoCEv2 framing, 82 bytes a packet) and nothing else."""
    catalog = load_catalog()
    design = cabled("seed000-2node")
    line = design.shape.port_speed_gbps
    plans = {mtu: build_testplan(design, catalog, TestPlanOptions(mtu=mtu)) for mtu in (4096, 1024)}
    for mtu, tp in plans.items():
        eff = round(mtu / (mtu + 82), 4)
        assert tp.efficiency.value == pytest.approx(eff, abs=1e-4)
        assert "IEEE 802.3" in tp.efficiency.source and "Asterfusion" not in tp.efficiency.source
        for t in tp.section("rdma").tests:
            if t.kind == "rdma_bw":
                assert t.checks[0].expected == pytest.approx(line * eff, abs=0.01)
                assert t.checks[0].threshold == pytest.approx(line * eff * 0.95, abs=0.01)
        pair = tp.section("pairs").tests[0].checks[0]
        # the node's aggregate NIC payload rate bounds a two-node all-reduce at large sizes
        assert pair.curve[1] == pytest.approx(design.shape.ports * line * eff / 8, abs=0.05)
    big, small = (plans[m].section("pairs").tests[0].checks[0] for m in (4096, 1024))
    assert small.expected / big.expected == pytest.approx((1024 / 1106) / (4096 / 4178), rel=1e-3)


def test_seed000_numbers_match_the_seed_measurements() -> None:
    """The Asterfusion report's measurements pass the plan derived for its testbed (held-out:
    none of them is an input; tests/test_perf_model.py checks each within 10%)."""
    tp = example_plan("seed000-2node")
    by_id = {t.id: t for t in tp.tests()}
    bw = by_id["BW-same-leaf-nic0"].checks[0]
    assert bw.threshold <= 391.96 <= bw.expected + 1  # ib_write_bw through the switch
    lat = by_id["LAT-same-leaf-nic0"].checks[0]
    assert lat.expected == pytest.approx(2.45)  # 1.95 us NIC pair + 500 ns CX732Q-N datasheet
    assert lat.threshold >= 2.51
    env = dict(by_id["NCCL-AR-2N-same-leaf"].env)
    assert env["NCCL_ALGO"] == "Ring"
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{k}" for k in range(8))
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert dict(by_id["NCCL-AR-RAILS"].env)["NCCL_TESTS_SPLIT"] == "MOD 8"


def test_collision_prediction_lowers_expectations_on_per_rack_cabling() -> None:
    """Seed 004: per-rack ToR cabling collides when hashed; the plan expects (and tolerates)
    less. Routed by the subnet manager's D-mod-k (the InfiniBand default) it does not."""
    tp = example_plan("fat-tree-1k", ECMP)
    two_node = {t.id: t for t in tp.section("nccl").tests}
    same = two_node["NCCL-AR-2N-same-leaf"].checks[0]
    far = two_node["NCCL-AR-2N-via-spine"].checks[0]
    assert far.expected < same.expected
    assert "analyzer" in far.reason and "ecmp" in far.reason
    static = {t.id: t for t in example_plan("fat-tree-1k").section("nccl").tests}
    far_static = static["NCCL-AR-2N-via-spine"].checks[0]
    assert far_static.expected > far.expected and "ecmp" not in far_static.reason


# -- pair cover (CP-SAT) -------------------------------------------------------------------------


def _brute_force(problem: pair_cover.CoverProblem) -> int:
    best = None
    caps = [3] * len(problem.candidates)
    for counts in itertools.product(*(range(c + 1) for c in caps)):
        covered = set().union(*(problem.covers[j] for j, k in enumerate(counts) if k))
        if len(covered) < problem.elements:
            continue
        ends = [0] * len(problem.class_sizes)
        for (c, d), k in zip(problem.candidates, counts, strict=True):
            ends[c] += k
            ends[d] += k
        if all(e >= problem.partners * n for e, n in zip(ends, problem.class_sizes, strict=True)):
            total = sum(counts)
            best = total if best is None else min(best, total)
    assert best is not None
    return best


def test_pair_cover_is_optimal_on_a_small_case() -> None:
    problem = pair_cover.CoverProblem(
        class_sizes=(2, 2, 1),
        candidates=((0, 0), (0, 1), (0, 2), (1, 1), (1, 2)),
        covers=(frozenset(), frozenset({0, 1}), frozenset({0, 2}), frozenset(), frozenset({1, 2})),
        elements=3,
        partners=1,
    )
    sol = pair_cover.solve(problem)
    assert sol.status == "optimal"
    assert sol.pairs == _brute_force(problem)
    assert sol.bound == sol.pairs


def test_pair_cover_reports_what_no_pair_reaches() -> None:
    problem = pair_cover.CoverProblem(
        class_sizes=(2,),
        candidates=((0, 0),),
        covers=(frozenset({0}),),
        elements=2,
        partners=1,
    )
    sol = pair_cover.solve(problem)
    assert sol.uncoverable == (1,)
    assert sol.pairs == 1


def test_instantiate_gives_distinct_partners() -> None:
    classes = [[f"a{i}" for i in range(5)], [f"b{i}" for i in range(3)]]
    pairs = pair_cover.instantiate(classes, [(0, 0), (0, 1)], [4, 4], partners=2)
    assert len(set(pairs)) == len(pairs)
    assert all(u != v for u, v in pairs)
    partners: dict[str, set[str]] = {}
    for u, v in pairs:
        partners.setdefault(u, set()).add(v)
        partners.setdefault(v, set()).add(u)
    assert all(len(partners[n]) >= 2 for cls in classes for n in cls)


# -- data and the grader contract ----------------------------------------------------------------


def test_expectations_feed_the_grader() -> None:
    tp = example_plan("seed001-64gpu")
    exps = expectations(tp)
    assert all(isinstance(e, Expectation) for e in exps)
    assert len(exps) == sum(len(t.checks) for t in tp.tests())
    rdma = next(e for e in exps if e.kind == "rdma_bw")
    assert rdma.ports and len(rdma.ports) == 2
    mtu = next(e for e in exps if e.metric == "ports_mtu")
    assert mtu.target == 4096
    cab = next(e for e in exps if e.kind == "cabling")
    assert cab.scope and cab.scope in {s.id for s in cabled("seed001-64gpu").switches}


def test_yaml_and_json_hold_the_same_plan() -> None:
    import json

    import yaml

    tp = example_plan("seed003-matrix")
    data = plan_to_dict(tp)
    assert json.loads(plan_to_json(tp)) == data
    assert yaml.safe_load(plan_to_yaml(tp)) == data
    assert [s["key"] for s in data["sections"]] == [
        "node",
        "cabling",
        "fabric",
        "linkq",
        "rdma",
        "pairs",
        "nccl",
    ]
    assert len(data["expectations"]) == sum(len(t.checks) for t in tp.tests())


def test_plan_is_deterministic() -> None:
    design = cabled("seed003-roft")
    a = plan_to_text(build_testplan(design, load_catalog()))
    b = plan_to_text(build_testplan(design, load_catalog()))
    assert a == b


def test_options_reach_the_commands() -> None:
    design = cabled("seed000-2node")
    devices = tuple(f"mlx5_{k}" for k in (0, 3, 4, 5, 6, 9, 10, 11))
    tp = build_testplan(design, load_catalog(), PlanOptions(devices=devices, gid_index=5))
    bw = tp.section("rdma").tests[2]
    assert "-d mlx5_3" in bw.command[0] and "-x 5" in bw.command[0]
    assert dict(tp.section("nccl").tests[0].env)["NCCL_IB_HCA"] == "=" + ",".join(devices)
