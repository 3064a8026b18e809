"""`railplan asbuilt` and `railplan grade` from the command line (the library is tested apart)."""

from __future__ import annotations

import json

import railplan
from railplan.design import design_to_json
from tests.test_asbuilt import render_ibnetdiscover, roft, six_faults
from tests.test_grade import pick_bad_link, scripted_results, small_roft


def test_asbuilt_cli_reports_the_six_faults_and_exits_1(cli, tmp_path):
    design = roft(448, "qm9700")
    (tmp_path / "design.json").write_text(design_to_json(design))
    edges, _truth = six_faults(design)
    dump = tmp_path / "ibnetdiscover.txt"
    dump.write_text(render_ibnetdiscover(design, edges))
    result = cli("asbuilt", tmp_path / "design.json", "--ibnetdiscover", dump, "--json")
    assert result.code == 1, result.err
    counts = json.loads(result.out)["counts"]
    assert (counts["swapped"], counts["missing"], counts["wrong_speed"], counts["unexpected"]) == (
        6,
        1,
        1,
        1,
    )  # three swapped cables = six link ends, one missing, one at the wrong speed, one extra
    text = cli(
        "asbuilt", tmp_path / "design.json", "--ibnetdiscover", dump, "--report", tmp_path / "r.md"
    )
    assert text.code == 1 and "swapped" in text.out
    assert (tmp_path / "r.md").read_text().startswith("#")


def test_asbuilt_cli_clean_error_for_a_missing_input(cli, tmp_path):
    (tmp_path / "design.json").write_text(design_to_json(roft(448, "qm9700")))
    result = cli("asbuilt", tmp_path / "design.json")
    assert result.code == 2 and "give at least one as-built input" in result.err


def test_grade_cli_names_the_node_fault_and_the_link(cli, tmp_path):
    design = small_roft("dmodk")
    (tmp_path / "design.json").write_text(design_to_json(design))
    slow = design.nodes[4].id
    plan = __import__("railplan.testplan", fromlist=["x"]).build_testplan(
        design, railplan.load_catalog()
    )
    pairs = [(t.nodes[0], t.nodes[1]) for t in plan.tests() if t.kind == "pair"]
    bad = pick_bad_link(design, pairs, avoid=slow)
    results = tmp_path / "results"
    results.mkdir()
    scripted_results(design, results, slow, bad)
    out = cli("grade", tmp_path / "design.json", "--results", results, "--json")
    assert out.code == 1, out.err
    data = json.loads(out.out)
    assert [f["node"] for f in data["diagnosis"]["node_faults"]] == [slow]
    text = cli("grade", tmp_path / "design.json", "--results", results)
    assert text.code == 1 and "node fault: " in text.out and slow in text.out
