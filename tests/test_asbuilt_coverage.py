"""asbuilt: nothing verified is a failure, dropped sightings counted, stale LLDP neighbours."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from railplan.design import design_from_json
from railplan.field.asbuilt import check_asbuilt
from railplan.field.parse_lldp import lldp_age_seconds, parse_lldp_text

FIELD = Path(__file__).resolve().parent.parent / "examples" / "field"


# -- nothing verified is a failure ---------------------------------------------------------------


def test_ib_capture_with_site_names_exits_1_with_the_dropped_count(tmp_path, cli) -> None:
    text = (FIELD / "ibnetdiscover.txt").read_text()
    site = re.sub(r"p0-leaf-", "leaf-", text.replace("node000", "gpu-a0"))
    (tmp_path / "ib.txt").write_text(site)
    result = cli("asbuilt", FIELD / "ib-design.json", "--ibnetdiscover", tmp_path / "ib.txt")
    assert result.code == 1
    last = result.err.strip().splitlines()[-1]
    # the 32 leaf-spine links are seen from the spines; the 32 node links from nothing
    assert last.startswith("asbuilt: only 32 of 64 planned links (50%) could be verified")
    assert "64 sightings dropped (64 naming devices not in the design)" in last
    assert "'gpu-a01'" in last and "look like node0001, p0-leaf-su01-r0" in last
    report = check_asbuilt(
        design_from_json((FIELD / "ib-design.json").read_text()), ibnetdiscover=tmp_path / "ib.txt"
    )
    assert report.ignored == 64 and report.verified == 32
    assert {c.status for c in report.links if c.a.startswith("node")} == {"unverified"}


def test_lldp_files_of_unknown_hosts_only_exit_1_naming_the_nearest(tmp_path, cli) -> None:
    folder = tmp_path / "lldp"
    folder.mkdir()
    for f in (FIELD / "lldp").glob("gpu-*.json"):  # the hosts only, under site names
        shutil.copy(f, folder / f.name)
    result = cli("asbuilt", FIELD / "design.json", "--lldp", folder)
    assert result.code == 1
    last = result.err.strip().splitlines()[-1]
    assert last.startswith("asbuilt: only 0 of 16 planned links (0%) could be verified")
    assert "16 sightings dropped (16 from the file of a device not in the design)" in last
    assert "'gpu-001.dc1.example.net'" in last
    # the same capture through the site's name map verifies every node link
    ok = cli("asbuilt", FIELD / "design.json", "--lldp", folder, "--names", FIELD / "names.yaml")
    assert ok.code == 0, ok.err
    assert "could be verified" not in ok.err


def test_min_verified_lowers_the_bar_and_refuses_nonsense(tmp_path, cli) -> None:
    folder = tmp_path / "lldp"
    folder.mkdir()
    shutil.copy(FIELD / "lldp" / "gpu-001.dc1.example.net.json", folder)
    args = ("asbuilt", FIELD / "design.json", "--lldp", folder, "--names", FIELD / "names.yaml")
    short = cli(*args)
    assert short.code == 1 and "only 8 of 16 planned links (50%)" in short.err
    assert "no input covers node0002, p0-rail-all: add their captures" in short.err
    assert cli(*args, "--min-verified", "50").code == 0
    assert cli(*args, "--min-verified", "51").code == 1
    bad = cli(*args, "--min-verified", "150")
    assert bad.code == 2 and "from 0 to 100" in bad.err


def test_healthy_bundled_captures_pass(cli) -> None:
    result = cli(
        "asbuilt", FIELD / "design.json", "--lldp", FIELD / "lldp", "--names", FIELD / "names.yaml"
    )
    assert result.code == 0 and "dropped" not in result.err


# -- stale LLDP neighbours -----------------------------------------------------------------------


def neighbour(ifname: str, sysname: str, port: str, age: str, ttl: str) -> dict:
    """One interface of ``lldpcli -f json show neighbors details`` as lldpd 1.0.16 writes it."""
    return {
        ifname: {
            "via": "LLDP",
            "rid": "1",
            "age": age,
            "chassis": {sysname: {"id": {"type": "mac", "value": "9a:e0:89:fe:9d:dc"}}},
            "port": {
                "id": {"type": "mac", "value": "9a:e0:89:fe:9d:dc"},
                "descr": port,
                "ttl": ttl,
            },
        }
    }


def capture(*interfaces: dict) -> str:
    # lldpcli -f json writes a list under "interface" when a port has several neighbours
    return json.dumps({"lldp": {"interface": list(interfaces)}})


def test_lldp_ages_read_as_lldpd_prints_them() -> None:
    assert lldp_age_seconds("0 day, 00:00:25") == 25
    assert lldp_age_seconds("2 days, 01:00:03") == 2 * 86400 + 3603
    assert lldp_age_seconds("soon") is None


def test_a_lone_old_neighbour_is_current() -> None:
    """lldpcli's age counts from the last change of the neighbour's values, not its last frame."""
    parsed = parse_lldp_text(
        capture(neighbour("eth0", "sw1", "Ethernet0", "3 days, 00:00:00", "120")), "h.json", "h"
    )
    assert len(parsed.sightings) == 1 and parsed.notes == ()


def test_an_old_entry_beside_a_new_one_is_stale() -> None:
    text = capture(
        neighbour("eth0", "old-sw", "Ethernet0", "0 day, 00:00:25", "4"),
        neighbour("eth0", "new-sw", "Ethernet8", "0 day, 00:00:02", "4"),
    )
    parsed = parse_lldp_text(text, "h.json", "h")
    assert [s.remote_names[0] for s in parsed.sightings] == ["new-sw"]
    assert [k for k, _ in parsed.notes] == ["stale"]
    assert "old-sw Ethernet0 (unchanged for 25 s, TTL 4 s)" in parsed.notes[0][1]


def test_two_current_neighbours_on_one_port_are_their_own_finding() -> None:
    text = capture(
        neighbour("eth0", "sw-a", "Ethernet0", "0 day, 00:10:00", "120"),
        neighbour("eth0", "sw-b", "Ethernet4", "0 day, 00:05:00", "120"),
    )
    parsed = parse_lldp_text(text, "h.json", "h")
    assert [s.remote_names[0] for s in parsed.sightings] == ["sw-b"]  # the youngest
    assert [k for k, _ in parsed.notes] == ["two_neighbours"]
    assert "lists 2 LLDP neighbours (sw-a Ethernet0 and sw-b Ethernet4)" in parsed.notes[0][1]


def test_plain_text_carries_age_and_ttl() -> None:
    text = "\n".join(
        [
            "-" * 60,
            "LLDP neighbors:",
            "-" * 60,
            "Interface:    eth0, via: LLDP, RID: 1, Time: 0 day, 00:00:25",
            "  Chassis:",
            "    ChassisID:    mac 9a:e0:89:fe:9d:dc",
            "    SysName:      old-sw",
            "  Port:",
            "    PortID:       ifname Ethernet0",
            "    TTL:          4",
            "Interface:    eth0, via: LLDP, RID: 2, Time: 0 day, 00:00:01",
            "  Chassis:",
            "    ChassisID:    mac 9a:e0:89:fe:9d:dd",
            "    SysName:      new-sw",
            "  Port:",
            "    PortID:       ifname Ethernet8",
            "    TTL:          4",
            "-" * 60,
        ]
    )
    parsed = parse_lldp_text(text, "h.txt", "h")
    assert [s.remote_names[0] for s in parsed.sightings] == ["new-sw"]
    assert [k for k, _ in parsed.notes] == ["stale"]


def test_stale_entry_is_a_finding_not_a_miswired_cable(tmp_path) -> None:
    """The bundled host capture, with a stale leftover of another cable on one port."""
    design = design_from_json((FIELD / "design.json").read_text())
    folder = tmp_path / "lldp"
    shutil.copytree(FIELD / "lldp", folder)
    host = folder / "gpu-001.dc1.example.net.json"
    doc = json.loads(host.read_text())
    first = doc["lldp"][0]["interface"][0]
    ghost = json.loads(json.dumps(first))
    ghost["age"] = "0 day, 00:05:00"
    ghost["chassis"][0]["name"] = [{"value": "p0-rail-all"}]
    ghost["port"][0]["id"] = [{"type": "local", "value": "etp9"}]
    ghost["port"][0]["ttl"] = [{"value": "120"}]
    first["age"] = "0 day, 00:00:05"
    first["port"][0]["ttl"] = [{"value": "120"}]
    doc["lldp"][0]["interface"].append(ghost)
    host.write_text(json.dumps(doc))
    report = check_asbuilt(design, lldp=[folder], names=FIELD / "names.yaml")
    assert [f.kind for f in report.findings] == ["stale"]
    assert report.counts()["ok"] == 16 and not report.unexpected
    assert not report.ok
