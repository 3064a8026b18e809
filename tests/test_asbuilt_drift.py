"""asbuilt --since: the drift between two captures names the moved cable and its labels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from railplan.field.drift import drift, read_capture
from railplan.field.names import NameMap
from railplan.pipeline.source import read_design
from tests.conftest import EXAMPLES

FIELD = EXAMPLES / "field"
DESIGN = FIELD / "design.json"
NAMES = FIELD / "names.yaml"


def _recable(folder: Path, host_moves: dict[str, str], switch_moves: dict[str, str]) -> None:
    """Edit a copy of the example capture: host interfaces now see other switch ports."""
    host = folder / "gpu-001.dc1.example.net.json"
    data = json.loads(host.read_text())
    for iface in data["lldp"][0]["interface"]:
        if iface["name"] in host_moves:
            iface["port"][0]["id"][0]["value"] = host_moves[iface["name"]]
    host.write_text(json.dumps(data, indent=2))
    table = folder / "p0-rail-all.txt"
    text = table.read_text()
    for old, new in switch_moves.items():
        assert old in text
        text = text.replace(old, new)
    table.write_text(text)


@pytest.fixture
def moved_capture(tmp_path):
    new = tmp_path / "now"
    shutil.copytree(FIELD / "lldp", new)
    # node0001 nic0 moved from switch port 1 (Ethernet0) to the free port 17 (Ethernet128)
    _recable(new, {"ens1f0np0": "etp17"}, {"Ethernet0    gpu-001": "Ethernet128  gpu-001"})
    return new


def test_drift_names_the_moved_cable_and_its_labels(moved_capture):
    design = read_design(DESIGN)
    names = NameMap.load(design, NAMES)
    old = read_capture(design, names, [FIELD / "lldp"])
    new = read_capture(design, names, [moved_capture])
    report = drift(design, names, old, new)
    (entry,) = report.entries
    cab = next(c for c in design.cables if c.label_a.endswith("N1-nic0"))
    assert entry.kind == "moved"
    assert (entry.cable, entry.label_a, entry.label_b) == (cab.id, cab.label_a, cab.label_b)
    assert entry.before.endswith("p0-rail-all P1") and entry.after.endswith("p0-rail-all P17")
    assert entry.planned is False
    assert report.unchanged == len(design.links) - 1
    assert drift(design, names, old, old).entries == ()


def test_two_exchanged_cables_are_one_swap(tmp_path):
    new = tmp_path / "now"
    shutil.copytree(FIELD / "lldp", new)
    # node0001 nic0 and nic1 exchanged at the switch (Ethernet0 <-> Ethernet16)
    _recable(
        new,
        {"ens1f0np0": "etp3", "ens2f0np0": "etp1"},
        {
            "Ethernet0    gpu-001.dc1.example.net  b8:3f:d2:aa:bb:cc              ens1f0np0": "X0",
            "Ethernet16   gpu-001.dc1.example.net  b8:3f:d2:aa:bb:cc              ens2f0np0": "X16",
        },
    )
    table = new / "p0-rail-all.txt"
    row = "{}  gpu-001.dc1.example.net  b8:3f:d2:aa:bb:cc              {}"
    table.write_text(
        table.read_text()
        .replace("X0", row.format("Ethernet0  ", "ens2f0np0"))
        .replace("X16", row.format("Ethernet16 ", "ens1f0np0"))
    )
    design = read_design(DESIGN)
    names = NameMap.load(design, NAMES)
    report = drift(
        design,
        names,
        read_capture(design, names, [FIELD / "lldp"]),
        read_capture(design, names, [new]),
    )
    assert [e.kind for e in report.entries] == ["swapped", "swapped"]
    assert report.count("moved") == report.count("removed") == report.count("added") == 0


def test_asbuilt_since_on_the_command_line(moved_capture, cli):
    r = cli(
        "asbuilt",
        str(DESIGN),
        "--lldp",
        str(moved_capture),
        "--names",
        str(NAMES),
        "--since",
        str(FIELD / "lldp"),
        "--json",
    )
    out = json.loads(r.out)
    assert r.code == 1  # the plan check still flags the cable on the wrong port
    (change,) = out["drift"]["changes"]
    design = read_design(DESIGN)
    cab = next(c for c in design.cables if c.label_a.endswith("N1-nic0"))
    assert change["kind"] == "moved" and change["cable"] == cab.id
    assert change["label_a"] == cab.label_a and change["label_b"] == cab.label_b
    text = cli(
        "asbuilt",
        str(DESIGN),
        "--lldp",
        str(moved_capture),
        "--names",
        str(NAMES),
        "--since",
        str(FIELD / "lldp"),
    )
    assert cab.id in text.out and "1 moved" in text.out
