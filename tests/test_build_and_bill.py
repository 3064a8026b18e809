"""The whole pipeline: plan and compare bill every design, and check covers the cables."""

from __future__ import annotations

import dataclasses
import json

import pytest

from railplan import check, load_spec
from railplan.pipeline.build import build
from railplan.pipeline.compare import bom_differences, compare
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def built_1k():
    return build(load_spec(EXAMPLES / "h100-1k.yaml"))


def test_build_lays_out_cables_and_bills_the_1k_example(built_1k):
    design, bill = built_1k.design, built_1k.bom
    assert len(design.cables) == len(design.links)
    assert check(design) == []
    assert bill is not None
    assert bill.totals.switches == 48
    assert bill.totals.cost_usd == pytest.approx(sum(line.total_usd for line in bill.lines))
    assert bill.totals.power_w > 0
    assert built_1k.placement is not None and built_1k.placement.gap >= 0


def test_check_catches_a_cable_too_short_for_its_part(built_1k):
    design = built_1k.design
    cable = design.cables[0]
    too_long = dataclasses.replace(cable, length_m=10_000.0)
    broken = dataclasses.replace(design, cables=(too_long, *design.cables[1:]))
    assert any(cable.id in p for p in check(broken))


def test_check_catches_a_missing_cable_and_overlapping_devices(built_1k):
    design = built_1k.design
    assert any(
        "has 0 cables" in p for p in check(dataclasses.replace(design, cables=design.cables[1:]))
    )
    first, second = [p for p in design.placements if p.device.startswith("p0-spine")][:2]
    moved = dataclasses.replace(second, rack=first.rack, u=first.u)
    placements = tuple(moved if p is second else p for p in design.placements)
    assert any(
        "both occupy" in p for p in check(dataclasses.replace(design, placements=placements))
    )


def test_plan_json_carries_bom_and_totals(cli):
    result = cli("plan", EXAMPLES / "seed000-2node.yaml", "--json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert {"cost_usd", "power_w", "transceivers", "cables"} <= set(data["totals"])
    kinds = {line["kind"] for line in data["bom"]}
    assert "switch" in kinds
    for line in data["bom"]:
        assert line["total_usd"] == pytest.approx(line["count"] * line["unit_price_usd"])
        assert line["source"]
    assert data["totals"]["cost_usd"] == pytest.approx(
        sum(line["total_usd"] for line in data["bom"])
    )
    again = cli("plan", EXAMPLES / "seed000-2node.yaml", "--json")
    assert again.out == result.out  # solver reports carry no wall time: byte-identical


def _by_family(spec_path):
    # the two families the test compares (compare builds each family on its own)
    rows = compare(load_spec(spec_path), families=("roft", "matrix"), layout=True)
    return {r.family: r for r in rows if r.feasible}


@pytest.mark.parametrize("example", ["seed003-roft.yaml", "matrix-4k.yaml"])
def test_compare_bills_roft_and_matrix_and_derives_the_differences(example):
    rows = _by_family(EXAMPLES / example)
    roft, matrix = rows["roft"], rows["matrix"]
    assert roft.bom is not None and matrix.bom is not None
    diff = bom_differences(roft, matrix)
    assert diff["switches"] == matrix.bom.count("switch") - roft.bom.count("switch")
    assert diff["switches"] == len(matrix.design.switches) - len(roft.design.switches) < 0
    assert diff["transceivers"] == matrix.bom.count("transceiver") - roft.bom.count("transceiver")
    assert diff["cost_usd"] == pytest.approx(matrix.bom.totals.cost_usd - roft.bom.totals.cost_usd)
    assert diff["cost_usd"] < 0  # fewer switches and half the switch-to-switch cables
    assert matrix.bom.totals.power_w < roft.bom.totals.power_w


def test_compare_cli_shows_cost_and_power(cli):
    result = cli("compare", EXAMPLES / "seed003-roft.yaml", "--no-traffic")
    assert result.code == 0, result.err
    assert "cost (USD)" in result.out and "power typical (kW)" in result.out
    assert "cost vs roft (USD)" in result.out
