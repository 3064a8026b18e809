"""Exports: cable schedule, NetBox import CSVs, NVIDIA P2P sheet, IB topology file, DOT, CLI."""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from railplan import load_spec, plan
from railplan.errors import DesignFileError, InfeasibleError
from railplan.pipeline.layout import complete
from railplan.render import cables_csv, dot, ibtopo, netbox, p2p
from railplan.render.atomic import write_atomic

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

# The columns of NetBox's DCIM bulk-import forms (netbox/dcim/forms/bulk_import.py, v4.x):
NETBOX_FORMS = {
    "racks.csv": (
        {"site", "name", "status", "width", "u_height"},
        {"site", "location", "name", "facility_id", "tenant", "status", "role", "form_factor",
         "serial", "asset_tag", "width", "u_height", "desc_units", "outer_width", "outer_depth",
         "outer_unit", "mounting_depth", "airflow", "weight", "max_weight", "weight_unit",
         "description", "comments", "tags"},
    ),
    "devices.csv": (
        {"role", "manufacturer", "device_type", "status", "site"},
        {"name", "role", "tenant", "manufacturer", "device_type", "platform", "serial",
         "asset_tag", "status", "site", "location", "rack", "position", "face", "latitude",
         "longitude", "parent", "device_bay", "airflow", "virtual_chassis", "vc_position",
         "vc_priority", "cluster", "description", "config_template", "comments", "tags"},
    ),
    "interfaces.csv": (
        {"device", "name", "type"},
        {"device", "name", "label", "parent", "bridge", "lag", "type", "speed", "duplex",
         "enabled", "mark_connected", "wwn", "vdcs", "mtu", "mgmt_only", "description",
         "poe_mode", "poe_type", "mode", "vrf", "rf_role", "rf_channel", "rf_channel_frequency",
         "rf_channel_width", "tx_power", "tags"},
    ),
    "cables.csv": (
        {"side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type",
         "side_b_name"},
        {"side_a_site", "side_a_device", "side_a_type", "side_a_name", "side_b_site",
         "side_b_device", "side_b_type", "side_b_name", "type", "status", "tenant", "label", "color", "length", "length_unit",
         "description", "comments", "tags"},
    ),
}  # fmt: skip
NETBOX_CABLE_TYPES = {"dac-passive", "dac-active", "aoc", "mmf-om4", "smf-os2"}
NVIDIA_P2P = (
    "A-Node,A-Port,Z-Node,Z-Port,Protocol,Shuffle-ID,A-Connector,A-MPO-Connector,Z-Connector,"
    "Z-MPO-Connector,A-Module-PN,Z-Module-PN,Source-Ref"
)


@pytest.fixture(scope="module")
def cabled(catalog):
    spec = load_spec(EXAMPLES / "h100-1k.yaml")
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    return design


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_cable_schedule_one_row_per_cable_rack_by_rack(cabled):
    table = rows(cables_csv.render(cabled))
    assert list(table[0]) == list(cables_csv.COLUMNS)
    assert len(table) == len(cabled.cables)
    assert {r["cable_id"] for r in table} == {c.id for c in cabled.cables}
    order = {r.id: (r.row, r.position) for r in cabled.racks}
    keys = [(order[r["a_rack"]], -int(r["a_u"])) for r in table]
    assert keys == sorted(keys)  # rack by rack, top of each rack first
    first = table[0]
    assert float(first["length_m"]) > 0 and first["media"] and first["label_a"].startswith("R")


def test_schedule_needs_cables(catalog):
    design = plan(load_spec(EXAMPLES / "seed000-2node.yaml"), catalog)
    with pytest.raises(DesignFileError, match="has no cables"):
        cables_csv.render(design)


def test_netbox_csvs_use_the_documented_import_columns(cabled, catalog):
    files = netbox.render(cabled, catalog, site="dc1")
    assert list(files) == ["racks.csv", "devices.csv", "interfaces.csv", "cables.csv"]
    for name, text in files.items():
        required, allowed = NETBOX_FORMS[name]
        header = set(next(csv.reader(io.StringIO(text))))
        assert required <= header <= allowed, name
    racks = {r["name"] for r in rows(files["racks.csv"])}
    devices = rows(files["devices.csv"])
    assert {d["rack"] for d in devices} <= racks
    assert len(devices) == len(cabled.nodes) + len(cabled.switches)
    assert {d["status"] for d in devices} == {"planned"} and {d["site"] for d in devices} == {"dc1"}
    ports = {(i["device"], i["name"]) for i in rows(files["interfaces.csv"])}
    assert {i["type"] for i in rows(files["interfaces.csv"])} == {"infiniband-ndr"}
    cables = rows(files["cables.csv"])
    assert len(cables) == len(cabled.cables)
    for c in cables:
        assert (c["side_a_device"], c["side_a_name"]) in ports
        assert (c["side_b_device"], c["side_b_name"]) in ports
        assert c["side_a_type"] == c["side_b_type"] == "dcim.interface"
        assert c["type"] in NETBOX_CABLE_TYPES
        assert re.fullmatch(r"[0-9a-f]{6}", c["color"]) and c["length_unit"] == "m"


# The P2P file's columns in NVIDIA's UFM Cable Validation Tool manual ("P2P File"), rack and U first
CVT_P2P = "A-Rack,A-U,A-Node Name,A-Type,A-Port,Z-Rack,Z-U,Z-Node Name,Z-Type,Z-Port"


@pytest.mark.parametrize("example", ["h100-1k", "seed003-roft"])
def test_p2p_sheet_uses_the_cable_validation_tool_columns(catalog, example):
    spec = load_spec(EXAMPLES / f"{example}.yaml")
    design, _ = complete(plan(spec, catalog), spec, catalog, method="naive")
    text = p2p.render(design, catalog)
    assert text.splitlines()[0] == CVT_P2P
    table = rows(text)
    ends = cables_csv.schedule(design)
    assert len(table) == len(ends) == len(design.cables)
    ib = catalog.switch(design.sizing.switch_model).protocol == "infiniband"
    for r, sr in zip(table, ends, strict=True):
        for side, end in (("A", sr.a), ("Z", sr.b)):
            assert (r[f"{side}-Rack"], int(r[f"{side}-U"]), r[f"{side}-Node Name"]) == (
                end.rack, end.u, end.device)  # fmt: skip
            port = r[f"{side}-Port"]
            if r[f"{side}-Type"] == "Switch":  # the front-panel name without its P, or swpNsM
                want = end.port[1:] if ib else "swp" + end.port[1:].replace("/", "s")
                if not ib and "/" in end.port:
                    cage, split = end.port[1:].split("/")
                    want = f"swp{cage}s{int(split) - 1}"
                assert port == want
            else:
                assert r[f"{side}-Type"] == "Host"
                n = int(port) if ib else int(port.removeprefix("rail"))
                assert 1 <= n <= design.shape.ports  # HCA n is mlx5_(n-1)


def test_p2p_links_sheet_has_nvidia_columns(cabled, catalog):
    text = p2p.render_links(cabled, catalog)
    assert text.splitlines()[0] == NVIDIA_P2P
    table = rows(text)
    assert len(table) == len(cabled.cables)
    assert {r["Protocol"] for r in table} == {"ib"}
    assert all(r["A-Module-PN"] and r["Z-Module-PN"] for r in table)
    assert [int(r["Source-Ref"]) for r in table] == list(range(1, len(table) + 1))


def test_ib_topology_file_sections(cabled, catalog):
    text = ibtopo.render(cabled, catalog)
    sections = text.strip().split("\n\n")
    assert len(sections) == len(cabled.switches)
    line = re.compile(r"^   P\d+ -4x-100G-> (MQM9700 p0-\S+ P\d+|HCA_mlx5_8 node\d{4} mlx5_\d/P1)$")
    body = [ln for s in sections for ln in s.splitlines()[1:]]
    assert all(line.match(ln) for ln in body)
    counts = cabled.link_counts()
    assert len(body) == counts["node_leaf"] + 2 * counts["leaf_spine"]  # both switch ends
    assert all(re.match(r"^MQM9700 p0-", s.splitlines()[0]) for s in sections)


def test_ib_topology_refuses_ethernet(catalog):
    spec = load_spec(EXAMPLES / "seed000-2node.yaml")
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    with pytest.raises(InfeasibleError, match="cx732q-n is an Ethernet switch"):
        ibtopo.render(design, catalog)


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz dot is not installed")
def test_dot_renders_with_graphviz(cabled, catalog):
    big = plan(load_spec(EXAMPLES / "h100-16k-3tier.yaml"), catalog)
    for design in (cabled, big):
        text = dot.render(design)
        out = subprocess.run(
            ["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        assert "<svg" in out.stdout
    aggregated = dot.render(big)
    assert "nodes SU1" in aggregated and aggregated.count("\n") < 2000  # bundles, not 50k edges


def test_write_atomic_replaces_whole_files(tmp_path):
    target = tmp_path / "sub" / "out.csv"
    write_atomic(target, "one\n")
    write_atomic(target, b"two\n")
    assert target.read_text() == "two\n"
    with pytest.raises(TypeError):
        write_atomic(target, 3)  # type: ignore[arg-type]
    assert target.read_text() == "two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.csv"]


def test_cli_cables_writes_schedule_and_netbox(cli, tmp_path):
    spec = EXAMPLES / "seed001-64gpu.yaml"
    out = tmp_path / "cables.csv"
    res = cli("cables", spec, "-o", out, "--time-limit", "1")
    assert res.code == 0, res.err
    assert out.read_text().startswith("cable_id,")
    res = cli("cables", spec, "--format", "netbox", "-o", tmp_path / "nb", "--time-limit", "1")
    assert res.code == 0, res.err
    assert sorted(p.name for p in (tmp_path / "nb").iterdir()) == [
        "cables.csv",
        "devices.csv",
        "interfaces.csv",
        "racks.csv",
    ]
    res = cli("cables", spec, "--format", "netbox")
    assert res.code == 2 and "give a directory with -o DIR" in res.err
    res = cli("cables", spec, "--format", "p2p", "--naive", "--design-out", tmp_path / "d.json")
    assert res.code == 0 and res.out.startswith("A-Rack,")
    res = cli("cables", tmp_path / "d.json", "--format", "dot")
    assert res.code == 0 and res.out.startswith("graph ")
