"""Design JSON: lossless round trip, byte-identical output, the plan --json contract."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys

from railplan import design_from_json, design_to_json, plan
from railplan.design.summary import plan_summary
from tests.conftest import EXAMPLES, ROOT, make_spec

REQUIRED_KEYS = {
    "name",
    "topology",
    "gpus",
    "nodes",
    "planes",
    "tiers",
    "switch_model",
    "switches",
    "links",
    "lower_bound_switches",
    "oversubscription",
}


def test_round_trip_is_lossless(catalog):
    design = plan(make_spec(2048, node="dgx-h100", switches=["qm9700"], planes=2), catalog)
    text = design_to_json(design)
    again = design_from_json(text)
    assert again == design
    assert design_to_json(again) == text


def test_same_spec_twice_gives_byte_identical_design_json(cli, tmp_path):
    spec = EXAMPLES / "h100-16k-3tier.yaml"
    assert cli("plan", spec, "-o", tmp_path / "a").code == 0
    assert cli("plan", spec, "-o", tmp_path / "b").code == 0
    a = (tmp_path / "a" / "design.json").read_bytes()
    assert a == (tmp_path / "b" / "design.json").read_bytes()
    assert (tmp_path / "a" / "spec.yaml").read_bytes() == (
        tmp_path / "b" / "spec.yaml"
    ).read_bytes()
    assert not [
        p for p in (tmp_path / "a").iterdir() if p.name.startswith(".")
    ]  # no temp files left


def test_written_spec_and_design_plan_the_same(cli, tmp_path):
    assert cli("plan", EXAMPLES / "h100-1k.yaml", "-o", tmp_path).code == 0
    from_spec = json.loads(cli("plan", tmp_path / "spec.yaml", "--json").out)
    from_design = json.loads(cli("plan", tmp_path / "design.json", "--json").out)
    assert "solver" in from_spec and "solver" not in from_design  # a design.json is not re-solved
    from_spec.pop("solver")
    assert from_spec == from_design


def test_plan_json_carries_the_contract_keys(cli):
    result = cli(
        "plan",
        "--gpus",
        "1024",
        "--node",
        "dgx-h100",
        "--switch",
        "qm9700",
        "--topology",
        "roft",
        "--json",
    )
    assert result.code == 0
    data = json.loads(result.out)  # exactly one JSON object
    assert set(data) >= REQUIRED_KEYS
    assert set(data["switches"]) >= {"leaf", "spine", "core", "total"}
    assert set(data["links"]) >= {"node_leaf", "leaf_spine", "spine_core"}
    for group in ("switches", "links"):
        assert all(isinstance(v, int) for v in data[group].values())
    assert data["switches"] == {"leaf": 32, "spine": 16, "core": 0, "total": 48}


def test_set_overrides_any_field(cli):
    base = ["plan", "--gpus", "1024", "--node", "dgx-h100", "--switch", "qm9700", "--json"]
    base += ["--topology", "roft"]
    data = json.loads(cli(*base, "--set", "fabric.oversubscription=3:1").out)
    assert data["oversubscription"] == "3:1"
    data = json.loads(cli(*base, "--planes", "2").out)
    assert data["planes"] == 2 and data["switches"]["total"] == 2 * 24


def test_summary_counts_match_the_design(catalog):
    design = plan(make_spec(16384, node="dgx-h100", switches=["qm9700"]), catalog)
    s = plan_summary(design)
    assert s["switches"]["total"] == len(design.switches)
    assert sum(s["links"].values()) == len(design.links)


def test_schema_is_json_schema_of_the_spec(cli):
    schema = json.loads(cli("schema").out)
    assert schema["title"] == "railplan spec"
    assert {"cluster", "fabric", "layout"} <= set(schema["properties"])


def test_api_quickstart_runs(capsys):
    runpy.run_path(str(EXAMPLES / "api_quickstart.py"), run_name="__main__")
    assert "roft 2 tiers" in capsys.readouterr().out


def test_console_script_entry_point():
    out = subprocess.run(
        [sys.executable, "-m", "railplan", "plan", str(EXAMPLES / "seed000-2node.yaml"), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    ).stdout
    assert json.loads(out)["switches"]["total"] == 1


def test_docs_python_api_block_runs(monkeypatch, capsys):
    page = ROOT / "docs" / "reference" / "python-api.md"
    block = page.read_text().split("```python")[1].split("```")[0]
    monkeypatch.chdir(ROOT)
    exec(compile(block, str(page), "exec"), {})
    out = capsys.readouterr().out
    assert "'total': 48" in out and "rail-only cluster.gpus" in out
