"""`railplan compare` and `railplan analyze` from the command line: keys, numbers, determinism."""

from __future__ import annotations

import csv
import json

import pytest

from tests.conftest import EXAMPLES
from tests.test_design_io import REQUIRED_KEYS

FAMILIES = {"roft", "matrix", "fat-tree", "rail-only"}
ANALYZE_KEYS = {
    "pattern",
    "routing",
    "flows",
    "pairs",
    "fraction_full",
    "fraction_half_or_less",
    "bandwidth",
    "hottest_links",
}


@pytest.mark.parametrize("example", ["seed000-2node", "seed001-64gpu", "h100-1k"])
def test_compare_on_examples_lists_every_family(cli, example):
    result = cli("compare", EXAMPLES / f"{example}.yaml", "--json", "--no-traffic")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    seen = {d["topology"] for d in data["designs"]} | {i["topology"] for i in data["infeasible"]}
    assert seen == FAMILIES
    for d in data["designs"]:
        assert REQUIRED_KEYS | {"max_hops", "inter_switch_links"} <= set(d)
    for item in data["infeasible"]:
        assert item["reason"]
    text = cli("compare", EXAMPLES / f"{example}.yaml", "--no-traffic")
    assert text.code == 0
    for family in FAMILIES:
        assert family in text.out


def test_compare_matrix_saves_a_third_of_the_switches(cli):
    result = cli(
        "compare", "--gpus", "1024", "--node", "h20-4x2x200g", "--switch", "cx864e-n", "--json"
    )
    designs = {d["topology"]: d for d in json.loads(result.out)["designs"]}
    roft, matrix = designs["roft"], designs["matrix"]
    assert 3 * matrix["switches"]["total"] == 2 * roft["switches"]["total"]
    assert 2 * matrix["inter_switch_links"] == roft["inter_switch_links"]
    assert (roft["max_hops"], matrix["max_hops"]) == (3, 2)
    # traffic: Matrix and ROFT keep every pair test at full rate, per-rack cabling does not
    assert matrix["traffic"]["pairs"]["fraction_full"] == 1.0
    assert roft["traffic"]["pairs"]["fraction_full"] == 1.0
    assert designs["fat-tree"]["traffic"]["pairs"]["fraction_full"] < 0.5


#: a 256-GPU per-rack fat-tree, analysed with JSON output, hashed as RoCE would be
#: (InfiniBand's default D-mod-k keeps these pairs at full rate)
ANALYZE_PER_RACK = (
    "analyze", "--gpus", "256", "--node", "hgx-h100-8x400g", "--switch", "qm9700",
    "--topology", "fat-tree", "--routing", "ecmp", "--json",
)  # fmt: skip


def test_analyze_json_keys_and_determinism(cli):
    args = ANALYZE_PER_RACK
    first = cli(*args)
    assert first.code == 0, first.err
    data = json.loads(first.out)
    assert set(data) >= ANALYZE_KEYS
    assert set(data["bandwidth"]) == {"min", "p10", "median", "mean", "max"}
    assert data["fraction_full"] < 0.5  # per-rack cabling: most pairs collide
    assert cli(*args).out == first.out


def test_analyze_more_flows_per_nic_raise_the_mean(cli):
    base = ANALYZE_PER_RACK
    one = json.loads(cli(*base, "--flows-per-nic", "1").out)["bandwidth"]["mean"]
    eight = json.loads(cli(*base, "--flows-per-nic", "8").out)["bandwidth"]["mean"]
    assert eight > one + 0.1


def test_analyze_writes_a_per_pair_csv(cli, tmp_path):
    out = tmp_path / "pairs.csv"
    result = cli("analyze", EXAMPLES / "seed001-64gpu.yaml", "--csv", out)
    assert result.code == 0, result.err
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 8 * 7 // 2
    assert {"node_a", "node_b", "fraction"} <= set(rows[0])


def test_analyze_bad_pattern_is_a_clean_error(cli):
    result = cli("analyze", EXAMPLES / "seed000-2node.yaml", "--pattern", "broadcast")
    assert result.code == 2
    assert "pattern 'broadcast'" in result.err and "Traceback" not in result.err


def test_compare_traffic_counts_in_each_familys_nic_with_pd_and_worst_failure(cli):
    result = cli("compare", EXAMPLES / "seed003-matrix.yaml", "--json", "--failures")
    assert result.code == 0, result.err
    designs = {d["topology"]: d["traffic"] for d in json.loads(result.out)["designs"]}
    matrix, roft = designs["matrix"], designs["roft"]
    assert (matrix["bonding"], matrix["line_rate_gbps"]) == ("bond", {"nic": 400.0, "port": 200.0})
    assert (roft["bonding"], roft["line_rate_gbps"]["nic"]) == ("independent", 200.0)
    assert (matrix["routing"], roft["routing"]) == ("deterministic", "ecmp")
    for t in designs.values():
        assert {"pairs", "alltoall", "pd", "worst_failure"} <= set(t)
        assert t["pd"]["rule"] == "spread" and t["pd"]["collective_fraction"] == 1.0
    # a dead leaf cuts a ROFT's nodes off that rail; a bonded Matrix NIC fails over
    assert roft["worst_failure"]["collective_fraction"] == 0.0
    assert roft["worst_failure"]["cut_off_nodes"] == 4
    assert matrix["worst_failure"]["collective_fraction"] == 0.5
    text = cli("compare", EXAMPLES / "seed003-matrix.yaml", "--failures")
    assert "400G bond" in text.out and "PD pace" in text.out
    assert "matrix: worst single failure p0-leafA-r0-01 (leaf-a switch)" in text.out


def test_analyze_reports_bonded_nic_rates_and_pd_placement(cli):
    args = ("analyze", EXAMPLES / "seed003-matrix.yaml", "--pattern", "pd", "--json")
    data = json.loads(cli(*args, "--placement", "split", "--mapping", "one").out)
    assert data["line_rate_gbps"] == {"nic": 400.0, "port": 200.0} and data["bonding"] == "bond"
    assert any("rule split" in n and "mapping one" in n for n in data["notes"])
    table = cli("analyze", EXAMPLES / "seed003-matrix.yaml").out
    assert "400G NIC, 2 x 200G bonded" in table
    bad = cli(*args, "--placement", "diagonal")
    assert bad.code == 2 and "rule: 'diagonal' is not a placement rule" in bad.err


def test_partners_beyond_the_stated_nodes_are_refused_before_the_advisor_speaks(cli) -> None:
    # 16 GPUs are 2 nodes: one partner at most; refused in one sentence, with no advisor note
    res = cli("analyze", "--gpus", "16", "--node", "dgx-h100", "--partners", "999")
    assert res.code == 2
    assert res.err == "railplan: error: partners: give 1..1 partners per node for 2 nodes\n"
