"""Held-out checks of the performance model: published measurements it never read.

The plan's expectations come from the design alone (``railplan.testplan.perf_model``: wire
framing, NCCL's tuner latencies, the switch datasheet, the collision analyzer). The published
figures below are compared with them, never fed to them; docs/acceptance.md shows the table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.field.nccl_judge import judge_curve
from railplan.pipeline.layout import complete
from railplan.pipeline.plan import plan
from railplan.spec import load_spec
from railplan.testplan import build_testplan
from railplan.testplan.perf_model import (
    PER_SIZE_FLOOR,
    Fabric,
    bus_factor,
    curve_busbw,
    nccl_curve,
    parse_size,
    sweep,
    wire_efficiency,
)
from tests.test_testplan import ROOT, example_plan

GIB = 1024**3
MIB = 1024**2
#: Asterfusion, "CX732Q-N 400G RoCE switch vs NIC direct connection" test report (2 nodes x 8
#: H100, 8 x ConnectX-7 400G each, one CX732Q-N): through the switch
ASTERFUSION = {
    "ib_write_bw_gbps": 391.96,
    "ib_write_lat_us": 2.51,
    "all_reduce_ring_16g_gbs": 369.92,
    "alltoall_16g_gbs": 79.40,
}
#: Tolly, "H3C S9827 RoCE network vs NVIDIA QM9700 InfiniBand" (8 nodes x 8 H20, 8 x 400G):
#: ring all-reduce, RoCE fabric, at 512 MB and averaged over the sizes Tolly ran
TOLLY_ROCE_512M_GBS = 311.18
TOLLY_ROCE_AVG_GBS = 231.877
TOLLY_IB_512M_GBS = 288.36
TOLLY_IB_AVG_GBS = 230.698
#: Tolly names sizes from 8 MB to 16 GB; the report's own size list is not public, so the
#: average is taken over that span at nccl-tests' default factor 2 (docs/acceptance.md)
TOLLY_SWEEP = sweep("8M", "16G")


def _check(plan_name: str, test_id: str) -> object:
    plan = example_plan(plan_name)
    return next(t for t in plan.tests() if t.id == test_id).checks[0]


def _err(predicted: float, measured: float) -> float:
    return (predicted - measured) / measured


def test_wire_efficiency_is_the_framing_arithmetic() -> None:
    roce, _ = wire_efficiency("ethernet", 4096)
    ib, _ = wire_efficiency("infiniband", 4096)
    assert roce == pytest.approx(4096 / (4096 + 8 + 14 + 4 + 12 + 20 + 8 + 12 + 4))
    assert ib == pytest.approx(4096 / (4096 + 8 + 12 + 4 + 2))
    assert ib > roce > 0.98


def test_sizes_and_bus_factors_follow_nccl_tests() -> None:
    assert parse_size("1G") == GIB and parse_size("8M") == 8 * MIB and parse_size(4096) == 4096
    assert sweep("1G", "8G") == (GIB, 2 * GIB, 4 * GIB, 8 * GIB)
    assert bus_factor("all_reduce", 16) == pytest.approx(2 * 15 / 16)
    assert bus_factor("all_gather", 16) == bus_factor("alltoall", 16) == pytest.approx(15 / 16)


def test_curve_rises_to_the_bandwidth_term() -> None:
    fab = Fabric(8, 8, 400, "ethernet", 4096, 0.5)
    c = nccl_curve(fab, "all_reduce", 2)
    sizes = sweep("8K", "16G")
    bws = [c.busbw(s) for s in sizes]
    assert bws == sorted(bws) and bws[-1] < c.bus_gbs
    assert c.bus_gbs == pytest.approx(fab.node_gbs)
    # at alpha x B / k bytes the curve is at half its bandwidth term
    half = c.alpha_us * 1e3 * c.bus_gbs / c.k
    assert c.busbw(int(half)) == pytest.approx(c.bus_gbs / 2, rel=1e-3)
    assert curve_busbw(c.as_tuple(), GIB) == pytest.approx(c.busbw(GIB), rel=1e-4)


def test_asterfusion_rdma_figures_are_predicted_within_10_percent() -> None:
    bw = _check("seed000-2node", "BW-same-leaf-nic0")
    lat = _check("seed000-2node", "LAT-same-leaf-nic0")
    assert abs(_err(bw.expected, ASTERFUSION["ib_write_bw_gbps"])) < 0.01  # type: ignore[attr-defined]
    assert abs(_err(lat.expected, ASTERFUSION["ib_write_lat_us"])) < 0.10  # type: ignore[attr-defined]


def test_asterfusion_nccl_figures_are_predicted_within_10_percent() -> None:
    """At the size the report quotes (16 GB), from the plan's own curves."""
    ar = _check("seed000-2node", "NCCL-AR-2N-same-leaf")
    a2a = _check("seed000-2node", "NCCL-A2A-2N-same-leaf")
    pred_ar = curve_busbw(ar.curve, 16 * GIB)  # type: ignore[attr-defined]
    pred_a2a = curve_busbw(a2a.curve, 16 * GIB)  # type: ignore[attr-defined]
    assert abs(_err(pred_ar, ASTERFUSION["all_reduce_ring_16g_gbs"])) < 0.10
    assert abs(_err(pred_a2a, ASTERFUSION["alltoall_16g_gbs"])) < 0.10


def test_tolly_64_gpu_curve_is_predicted_within_10_percent_and_passes() -> None:
    """The all-node ring all-reduce of the Tolly testbed: the 512 MB point and the average;
    the published run passes the grader's rules (average over its sizes, each size known)."""
    check = _check("seed001-64gpu", "NCCL-AR-ALL")
    curve = check.curve  # type: ignore[attr-defined]
    assert abs(_err(curve_busbw(curve, 512 * MIB), TOLLY_ROCE_512M_GBS)) < 0.10
    avg = sum(curve_busbw(curve, s) for s in TOLLY_SWEEP) / len(TOLLY_SWEEP)
    assert abs(_err(avg, TOLLY_ROCE_AVG_GBS)) < 0.10
    rows = [(512 * MIB, TOLLY_ROCE_512M_GBS)]
    status, detail = judge_curve(curve, rows, TOLLY_ROCE_AVG_GBS, TOLLY_SWEEP)
    assert status == "pass", detail
    assert "12 sizes 8M-16G: avg 231.88" in detail
    # half the bandwidth at 512 MB, or an average 20% low, fails
    assert judge_curve(curve, [(512 * MIB, TOLLY_ROCE_512M_GBS / 2)], TOLLY_ROCE_AVG_GBS,
                       TOLLY_SWEEP)[0] == "fail"  # fmt: skip
    assert judge_curve(curve, rows, 0.8 * avg, TOLLY_SWEEP)[0] == "fail"


def _ib_variant() -> Design:
    catalog = load_catalog()
    spec = load_spec(ROOT / "examples" / "seed001-64gpu.yaml")
    spec = spec.model_copy(
        update={"fabric": spec.fabric.model_copy(update={"switches": ["qm9700"]})}
    )
    design, _ = complete(plan(spec, catalog), spec, catalog, method="naive")
    return design


def test_tolly_infiniband_fabric_clears_the_per_size_floor() -> None:
    """The same testbed on QM9700 InfiniBand: the model is 13% high at 512 MB (the largest
    held-out error, which sets PER_SIZE_FLOOR), and the healthy IB run still passes."""
    plan = build_testplan(_ib_variant(), load_catalog())
    assert plan.protocol == "infiniband"
    curve = next(t for t in plan.tests() if t.id == "NCCL-AR-ALL").checks[0].curve
    pred = curve_busbw(curve, 512 * MIB)
    assert 0.10 < _err(pred, TOLLY_IB_512M_GBS) < 1 / PER_SIZE_FLOOR - 1
    rows = [(512 * MIB, TOLLY_IB_512M_GBS)]
    assert judge_curve(curve, rows, TOLLY_IB_AVG_GBS, TOLLY_SWEEP)[0] == "pass"


def test_no_published_measurement_is_an_input() -> None:
    """The held-out figures appear nowhere in the model's code or catalogs."""
    package = Path(__file__).resolve().parents[1] / "railplan"
    texts = [p.read_text() for p in (package / "testplan").glob("*.py")]
    texts += [p.read_text() for p in (package / "catalogs").glob("*.yaml")]
    for figure in (
        "391.96",
        "2.51",
        "369.92",
        "79.40",
        "79.4 ",
        "311.18",
        "231.877",
        "288.36",
        "230.698",
    ):
        for text in texts:
            assert not re.search(re.escape(figure) + r"\b", text), figure
