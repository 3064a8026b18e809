"""Handouts a crew can act on: NCCL expectations from the node's aggregate NIC rate, graded the
way nccl-tests judges a run ("Avg bus bandwidth" against 0.9 x NCCL_TESTS_MIN_BW)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from railplan.field.grade import grade
from railplan.physical.labels import WORD_ABBREVIATIONS, label_legend
from railplan.render.pdf_sheets import render_sheets
from railplan.spec import load_spec
from railplan.testplan import expectations
from railplan.testplan.expected import NCCL_MIN_BW_FACTOR
from railplan.testplan.perf_model import PER_SIZE_FLOOR, curve_busbw
from tests.test_grade import nccl_text
from tests.test_pdf import sections, text_of
from tests.test_testplan import ROOT, cabled, example_params, example_plan

#: Asterfusion CX732Q-N test report: two-node ring all-reduce busbw through the switch (GB/s)
ASTERFUSION_2NODE_ALLREDUCE_GBS = 369.92
#: Tolly report (H3C S9827 vs NVIDIA QM9700), 8 nodes x 8 x 400G, ring all-reduce at 512 MB
TOLLY_ROCE_512MB_GBS = 311.18
TOLLY_IB_512MB_GBS = 288.36


def test_two_node_all_reduce_passes_the_measured_figure() -> None:
    """The Asterfusion two-node ring all-reduce (369.92 GB/s at 16 GB) is above the plan's
    threshold at 16 GB, and NCCL_TESTS_MIN_BW sets nccl-tests' own pass point to it."""
    by_id = {t.id: t for t in example_plan("seed000-2node").tests()}
    for tid in ("NCCL-AR-2N-same-leaf", "PAIR-0001"):
        check = by_id[tid].checks[0]
        assert check.unit == "GB/s" and check.metric == "avg_busbw_gbs"
        assert check.threshold <= ASTERFUSION_2NODE_ALLREDUCE_GBS
        assert PER_SIZE_FLOOR * curve_busbw(check.curve, 16 * 2**30) <= 369.92
        # the arithmetic is on the page: 8 NIC ports x 400 Gb/s x the RoCEv2 payload share
        assert "8 x 400 Gb/s x 0.9804 wire payload / 8 = 392.1 GB/s" in check.reason
        env = dict(by_id[tid].env)
        assert float(env["NCCL_TESTS_MIN_BW"]) * NCCL_MIN_BW_FACTOR == pytest.approx(
            check.threshold, abs=0.01
        )


def test_64_gpu_expectation_is_consistent_with_the_tolly_figures() -> None:
    """8 nodes x 8 x 400G: at 512 MB the all-node all-reduce expects about what Tolly measured
    (311.18 GB/s), and both of Tolly's fabrics (RoCE 311.18, InfiniBand 288.36) clear the
    per-size floor."""
    plan = example_plan("seed001-64gpu")
    ar = next(t for t in plan.tests() if t.id == "NCCL-AR-ALL")
    assert len(ar.nodes) == 8
    check = ar.checks[0]
    at_512m = curve_busbw(check.curve, 512 * 2**20)
    assert at_512m == pytest.approx(TOLLY_ROCE_512MB_GBS, rel=0.10)
    assert PER_SIZE_FLOOR * at_512m <= TOLLY_IB_512MB_GBS <= TOLLY_ROCE_512MB_GBS
    # far above what one NIC could carry (50 GB/s): the bound is the node's aggregate
    assert check.threshold > 4 * 400 / 8


@pytest.mark.parametrize("share, status", [(1.0, "pass"), (0.5, "fail"), (0.125, "fail")])
def test_a_pair_at_a_fraction_of_its_nics_is_graded(
    share: float, status: str, tmp_path: Path
) -> None:
    """A pair whose node runs on half its NICs (or one) measures half (an eighth) the busbw."""
    name = "seed000-2node"
    plan = example_plan(name)
    rows = [e for e in expectations(plan) if e.test_id == "PAIR-0001"]
    busbw = [e for e in rows if e.metric == "avg_busbw_gbs"]
    assert busbw
    measured = ASTERFUSION_2NODE_ALLREDUCE_GBS * share
    # nccl_text writes "Avg bus bandwidth" as 0.95 x its argument
    (tmp_path / "PAIR-0001.txt").write_text(nccl_text(list(rows[0].nodes), measured / 0.95))
    report = grade(cabled(name), busbw, tmp_path)
    (result,) = report.results
    assert result.status == status
    assert result.measured == pytest.approx(measured, abs=0.01)


# -- one naming scheme ---------------------------------------------------------------------------


def _words_and_numbers(text: str) -> tuple[list[str], list[int]]:
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", text)]
    return words, [int(n) for n in re.findall(r"\d+", text)]


@pytest.mark.parametrize("name", example_params())
def test_every_label_names_its_device_by_the_number_in_its_name(name: str) -> None:
    """Walk every cable end of the example: cut the device part out of the label the layout's
    template printed, and read its numbers and words back to the device's name."""
    design = cabled(name)
    assert design.cables
    template = "{rack}-U{u:02d}-{device}-{port}"
    assert load_spec(ROOT / "examples" / f"{name}.yaml").layout.label_template == template
    where = {p.device: p for p in design.placements}
    links = {lk.id: lk for lk in design.links}
    switches = design.switch_by_id()
    abbr_to_word = {abbr.lower(): word for word, (abbr, _) in WORD_ABBREVIATIONS.items()}
    for cable in design.cables:
        link = links[cable.link_id]
        ends = (
            (link.a_device, link.a_port, cable.label_a),
            (link.b_device, link.b_port, cable.label_b),
        )
        for dev, port, label in ends:
            head = f"{where[dev].rack}-U{where[dev].u:02d}-"
            tail = "-" + design.port_name(dev, port, switches)
            assert label.startswith(head) and label.endswith(tail), (cable.id, label)
            printed = label[len(head) : -len(tail)]
            words, numbers = _words_and_numbers(printed)
            name_words, name_numbers = _words_and_numbers(dev)
            assert numbers == name_numbers, f"{cable.id}: {printed} on {dev}"
            assert [abbr_to_word.get(w, w) for w in words] == name_words, f"{cable.id}: {printed}"


def test_the_sheets_carry_a_legend_of_every_abbreviation() -> None:
    design = cabled("seed003-matrix")
    pdf, _ = render_sheets(design)
    reader, bounds = sections(pdf)
    text = text_of(reader, bounds["Legend"])
    assert "Legend: how to read a label" in text
    for abbr, meaning in label_legend(design):
        assert re.search(rf"\b{abbr}\s+{re.escape(meaning)}", text), (abbr, meaning)
    assert {a for a, _ in label_legend(design)} == {"N", "P", "LA", "LB", "R"}


# -- expectations follow the bonding property ----------------------------------------------------


def _matrix_plan(bonding: str) -> Any:
    from railplan.catalog import load_catalog
    from railplan.pipeline.layout import complete
    from railplan.pipeline.plan import plan as plan_design
    from railplan.testplan import build_testplan

    catalog = load_catalog()
    spec = load_spec(ROOT / "examples" / "seed003-matrix.yaml", [f"cluster.bonding={bonding}"])
    design, _ = complete(plan_design(spec, catalog), spec, catalog, method="naive")
    return build_testplan(design, catalog)


def test_bonded_nics_are_tested_whole_at_the_logical_nic_rate() -> None:
    """seed003-matrix: 4 dual-port 200G NICs per node, bonded (RoCE LAG) on a Matrix. Each
    bond device is measured with one QP per port against 2 x 200 Gb/s; independent ports are
    measured one by one against 200 Gb/s."""
    bonded = _matrix_plan("bond")
    assert bonded.devices == tuple(f"bnxt_re_bond{p // 2}" for p in range(8))
    bw = [t for t in bonded.section("rdma").tests if t.kind == "rdma_bw"]
    assert bw and all(t.qps == 2 and " -q 2 " in t.command[1] for t in bw)
    assert {t.checks[0].expected for t in bw} == {392.16}  # 2 x 200 Gb/s x 0.9804 RoCEv2
    assert all("2 x 200 Gb/s bonded NIC" in t.checks[0].reason for t in bw)
    assert len({t.devices for t in bw}) == 4  # one test per NIC and direction, not per port
    node = bonded.section("node").tests[0]
    assert {c.metric: c.expected for c in node.checks}["ports_active"] == 4
    env = dict(bonded.section("nccl").tests[0].env)
    assert env["NCCL_IB_HCA"] == "=" + ",".join(f"bnxt_re_bond{k}" for k in range(4))

    independent = _matrix_plan("independent")
    assert independent.devices == tuple(f"bnxt_re{p}" for p in range(8))
    bw = [t for t in independent.section("rdma").tests if t.kind == "rdma_bw"]
    assert bw and all(t.qps == 1 and " -q " not in t.command[1] for t in bw)
    assert {t.checks[0].expected for t in bw} == {196.08}  # 200 Gb/s x 0.9804
    # the node's aggregate NIC rate is the same either way: 8 x 200 Gb/s
    for plan in (bonded, independent):
        ar = next(t for t in plan.tests() if t.id.startswith("NCCL-AR-2N"))
        assert "8 x 200 Gb/s x 0.9804 wire payload" in ar.checks[0].reason


# -- grade checks that a result is the test's own ------------------------------------------------


def _pair_busbw(plan: Any) -> Any:
    return next(e for e in expectations(plan) if e.test_id == "PAIR-0001" and "busbw" in e.metric)


@pytest.mark.parametrize(
    "hosts, op, word",
    [
        (None, "all_gather_perf", "is a all_gather_perf run, not the all_reduce"),
        (["node0001", "gpu-x99"], "all_reduce_perf", "not in the design: gpu-x99"),
        (["node0001", "node0003"], "all_reduce_perf", "but the test is for"),
        (None, "all_reduce_perf", ""),
    ],
)
def test_grade_flags_a_result_that_is_not_the_tests_own(
    hosts: list[str] | None, op: str, word: str, tmp_path: Path
) -> None:
    """An all_gather output filed under an all-reduce test, or a run on a host outside the
    design (or on other nodes of it), is an error naming the mismatch, not a pass or a fail."""
    name = "seed001-64gpu"
    exp = _pair_busbw(example_plan(name))
    ran_on = hosts or list(exp.nodes)
    (tmp_path / "PAIR-0001.txt").write_text(nccl_text(ran_on, 400.0, op=op))
    (result,) = grade(cabled(name), [exp], tmp_path).results
    if word:
        assert result.status == "error" and word in result.detail, result.detail
    else:
        assert result.status == "pass", result.detail


def test_latency_expected_says_what_normal_is_apart_from_the_pass_bound() -> None:
    for name in ("seed000-2node", "seed003-matrix", "seed001-64gpu"):
        for t in example_plan(name).section("rdma").tests:
            if t.kind == "rdma_lat":
                check = t.checks[0]
                assert check.expected < check.threshold, (name, t.id, check.reason)


# -- one physical cable, one id, legs together ---------------------------------------------------

TWIN = ["seed003-roft", "seed003-matrix", "basepod-8node"]


@pytest.mark.parametrize("name", TWIN)
def test_physical_cable_count_agrees_everywhere_and_legs_are_adjacent(name: str) -> None:
    """Twin-port DAC/AOC and splitters: the bill's totals, the sheets' cover page, the CSV's
    physical_cable column and the labels count the same physical cables, and the legs of one
    physical cable are listed one after the other in its rack's cable table."""
    import csv
    import io

    from railplan.catalog import load_catalog
    from railplan.physical.bom import bom
    from railplan.render import cables_csv
    from railplan.render.pdf_labels import render_labels

    design = cabled(name)
    links = len(design.cables)
    totals = bom(design, load_catalog()).totals
    physical = totals.cables
    assert physical < links  # the example has multi-leg items
    rows = list(csv.DictReader(io.StringIO(cables_csv.render(design))))
    assert len({r["physical_cable"] for r in rows if r["physical_cable"]}) == physical
    pdf, _ = render_sheets(design, bom(design, load_catalog()))
    reader, bounds = sections(pdf)
    cover = text_of(reader, bounds["Cover"])
    assert f"{physical:,} carrying {links:,} links" in cover
    labels_pdf, _ = render_labels(design)
    from pypdf import PdfReader

    lab = PdfReader(io.BytesIO(labels_pdf))
    shown = text_of(lab, (0, len(lab.pages)))
    assert len(set(re.findall(r"end of (P\d{5,})", shown))) == physical
    # legs adjacent: in the cable tables, the rows of one physical id are consecutive
    tables = text_of(reader, bounds["Cable tables"])
    seq = [m.group(1) for m in re.finditer(r"^(P\d{5,}) A\d+-B\d+$", tables, re.M)]
    assert len(seq) == links
    runs = [p for i, p in enumerate(seq) if i == 0 or seq[i - 1] != p]
    assert len(runs) == len(set(runs)) == physical, "a physical cable's legs are split"
