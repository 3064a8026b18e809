"""A design.json is checked before use: types (pydantic) at the boundary, then ``check()``, in
every command that takes one; a tampered file is refused with one sentence per problem."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from railplan.design import design_from_dict
from railplan.errors import DesignFileError
from railplan.validate import check
from tests.conftest import ROOT

SOURCE = ROOT / "designs" / "seed001-64gpu" / "design.json"
Edit = Callable[[dict[str, Any]], None]


@cache
def base() -> dict[str, Any]:
    return json.loads(SOURCE.read_text(encoding="utf-8"))


def rename_node(d: dict[str, Any], new: str) -> None:
    old = d["nodes"][0]["id"]
    d["nodes"][0]["id"] = new
    for row in d["links"]:
        row["a_device"] = new if row["a_device"] == old else row["a_device"]
    for row in d["placements"]:
        row["device"] = new if row["device"] == old else row["device"]


def _set(path: str, value: Any) -> Edit:
    def edit(d: dict[str, Any]) -> None:
        *head, last = path.split(".")
        node: Any = d
        for key in head:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value

    return edit


def _copy_field(rows: str, field: str) -> Edit:
    return lambda d: d[rows][1].__setitem__(field, d[rows][0][field])


def _two_links_on_one_port(d: dict[str, Any]) -> None:
    d["links"][1]["b_device"], d["links"][1]["b_port"] = d["links"][0]["b_device"], 0
    d["links"][0]["b_port"] = 0


def _overlapping_racks(d: dict[str, Any]) -> None:
    for key in ("row", "position", "x_m", "y_m"):
        d["racks"][1][key] = d["racks"][0][key]


def _radix(d: dict[str, Any]) -> None:
    for sw in d["switches"]:
        sw["radix"] = 2


#: (name, edit, what the first error line must say)
TAMPERED: list[tuple[str, Edit, str]] = [
    ("duplicated cable id", _copy_field("cables", "id"), "cable id C00001 is used more than once"),
    ("duplicated link id", _copy_field("links", "id"), "link id NL000001 is used more than once"),
    ("two links on one port", _two_links_on_one_port, "is used by more than one link"),
    ("deleted cable", lambda d: d["cables"].pop(3), "has 0 cables"),
    ("deleted link", lambda d: d["links"].pop(3), "is cabled 0 times"),
    ("wrong gpus", _set("gpus", 128), "8 nodes x 8 GPUs is not the 128 GPUs asked"),
    ("wrong planes", _set("planes", 2), "switches sit in planes [0], expected 0..1"),
    ("radix 2", _radix, "(radix 2)"),
    ("overlapping racks", _overlapping_racks, "stand on the same"),
    ("a cable of -5 m", _set("cables.0.length_m", -5), "is -5 m long"),
    ("unknown role", _set("switches.0.role", "router"), "switches[0].role"),
    ("unknown link kind", _set("links.0.kind", "x"), "links[0].kind"),
    ("unknown device", _set("links.0.b_device", "ghost"), "switch ghost does not exist"),
    ("unknown media", _set("cables.0.media", "string"), "which is not in the catalog"),
    ("outside the rack", _set("placements.0.u", 50), "does not fit the 42U rack"),
    ("port planes cut", _set("shape.port_plane", [0]), "port_plane and port_rail"),
    ("NaN coordinate", _set("racks.0.x_m", float("nan")), "NaN is not a finite number"),
    ("huge port", _set("links.0.a_port", 10**30), "links[0].a_port"),
    ("bad spec inside", _set("spec.cluster.gpus", -3), "spec: cluster.gpus"),
    ("no links", lambda d: d.pop("links"), "not a railplan design file (no links)"),
    ("name with a newline", _set("name", "x\ntouch /tmp/pwned"), "name: not a safe name"),
    ("node id as an ssh option", lambda d: rename_node(d, "-oProxyCommand=x"), "nodes[0].id"),
    ("node id with a slash", lambda d: rename_node(d, "a/b"), "nodes[0].id: not a safe name"),
]


def tampered(tmp_path: Path, edit: Edit) -> Path:
    data = copy.deepcopy(base())
    edit(data)
    path = tmp_path / "design.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def assert_refused(result: Any, needle: str) -> None:
    assert result.code == 2, (result.code, result.err)
    assert "Traceback" not in result.err
    lines = result.err.strip().splitlines()
    assert lines and all(line.startswith("railplan: error: ") for line in lines)
    assert needle in result.err, result.err


@pytest.mark.parametrize(("name", "edit", "needle"), TAMPERED, ids=[t[0] for t in TAMPERED])
def test_plan_refuses_a_tampered_design(cli, tmp_path: Path, name: str, edit: Edit, needle: str):
    assert_refused(cli("plan", tampered(tmp_path, edit), "--json"), needle)


def commands(tmp_path: Path) -> list[list[Any]]:
    out = tmp_path / "out"
    (tmp_path / "results").mkdir(exist_ok=True)
    return [
        ["plan"],
        ["compare", "--no-traffic", "--no-layout"],
        ["cables"],
        ["analyze"],
        ["sheets", "-o", out],
        ["testplan", "-o", out],
        ["asbuilt", "--ibnetdiscover", tmp_path / "none.txt"],
        ["grade", "--results", tmp_path / "results"],
    ]


@pytest.mark.parametrize(
    ("name", "edit", "needle"),
    [TAMPERED[i] for i in (0, 3, 7, 9, 21)],
    ids=[TAMPERED[i][0] for i in (0, 3, 7, 9, 21)],
)
def test_every_command_that_takes_a_design_refuses_it(cli, tmp_path, name, edit, needle):
    path = tampered(tmp_path, edit)
    for command, *rest in commands(tmp_path):
        result = cli(command, path, *rest)
        assert_refused(result, needle)
    assert not (tmp_path / "out").exists()


def test_the_untouched_design_is_accepted(cli, tmp_path: Path) -> None:
    path = tampered(tmp_path, lambda d: None)
    assert cli("plan", path, "--json").code == 0
    assert cli("analyze", path, "--json").code == 0


def test_a_negative_cable_fails_check_itself() -> None:
    data = copy.deepcopy(base())
    data["cables"][0]["length_m"] = -5
    design = design_from_dict(data)
    assert any("C00001 is -5 m long" in p for p in check(design))


def test_many_problems_are_listed_one_per_line_and_capped() -> None:
    data = copy.deepcopy(base())
    for row in data["links"]:
        row["rate_gbps"] = "fast"
    with pytest.raises(DesignFileError) as info:
        design_from_dict(data, "d.json")
    lines = str(info.value).splitlines()
    assert len(lines) == 11 and lines[-1].startswith("d.json: ... and ")
    assert all(line.startswith("d.json: links[") for line in lines[:10])


@pytest.mark.parametrize("example", ["superpod-h100-4su", "basepod-8node"])
def test_per_tier_designs_with_devices_load_back_unchanged(example: str) -> None:
    """Attached devices, per-tier sizing and two-speed switches pass the boundary types."""
    from railplan import load_spec, plan
    from railplan.design import design_from_json, design_to_json

    design = plan(load_spec(ROOT / "examples" / f"{example}.yaml"))
    text = design_to_json(design)
    again = design_from_json(text)
    assert design_to_json(again) == text
    assert again.sizing.tier_sizing == design.sizing.tier_sizing
    assert again.devices == design.devices
    assert design.devices or example != "superpod-h100-4su"  # the UFM appliance
