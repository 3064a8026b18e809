"""NetBox files of several designs in one NetBox: site-scoped device names, physical cable IDs."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest

from railplan.design import design_from_json
from railplan.errors import SpecError
from railplan.render import netbox

FIELD = Path(__file__).resolve().parent.parent / "examples" / "field"


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def two_sites(tmp_path, cli) -> dict[str, dict[str, list[dict[str, str]]]]:
    """The Ethernet and the InfiniBand field example written for two sites by the CLI."""
    out: dict[str, dict[str, list[dict[str, str]]]] = {}
    base = tmp_path
    for site, design in (("DC 1", "design.json"), ("dc2/hall-b", "ib-design.json")):
        folder = base / design.removesuffix(".json")
        result = cli(
            "cables", FIELD / design, "--format", "netbox", "--netbox-site", site, "-o", folder
        )
        assert result.code == 0, result.err
        out[site] = {f.name: rows(f.read_text()) for f in sorted(folder.iterdir())}
    return out


def test_device_names_are_unique_across_designs(two_sites) -> None:
    names = Counter(d["name"] for files in two_sites.values() for d in files["devices.csv"])
    assert names and max(names.values()) == 1
    assert "node0001.dc-1" in names and "node0001.dc2-hall-b" in names
    for site, files in two_sites.items():
        own = {d["name"] for d in files["devices.csv"]}
        assert {d["site"] for d in files["devices.csv"]} == {site}
        # InterfaceImportForm looks its device up by name across all sites: every name is
        # one device, of this design
        assert {i["device"] for i in files["interfaces.csv"]} <= own
        for c in files["cables.csv"]:
            assert c["side_a_site"] == c["side_b_site"] == site
            assert {c["side_a_device"], c["side_b_device"]} <= own
        ports = Counter((i["device"], i["name"]) for i in files["interfaces.csv"])
        assert max(ports.values()) == 1


def test_twin_port_legs_carry_the_physical_cable_id(two_sites) -> None:
    design = design_from_json((FIELD / "ib-design.json").read_text())
    legs = Counter(c.physical for c in design.cables)
    twins = {c.id: c for c in design.cables if legs[c.physical] == 2}
    assert len(twins) == 32  # 16 twin-port DACs, two legs each
    cables = two_sites["dc2/hall-b"]["cables.csv"]
    assert len(cables) == len(design.cables) == 64
    by_id = {c["label"].split()[0]: c for c in cables}
    for cid, cable in twins.items():
        row = by_id[cid]
        assert row["label"] == f"{cid} {cable.physical} {cable.leg}"
        assert f"leg {cable.leg} of physical cable {cable.physical} (2 legs)" in row["description"]
    physical = Counter(row["label"].split()[1] for row in cables if len(row["label"].split()) > 1)
    assert set(physical.values()) == {2} and len(physical) == 16
    singles = [c for c in design.cables if legs[c.physical] == 1]
    assert all(by_id[c.id]["label"] == c.id for c in singles)


def test_without_the_site_option_names_stay_the_design_ids(catalog) -> None:
    design = design_from_json((FIELD / "design.json").read_text())
    files = netbox.render(design, catalog, site="dc1")
    assert {d["name"] for d in rows(files["devices.csv"])} == {
        *(n.id for n in design.nodes),
        *(s.id for s in design.switches),
        *(d.id for d in design.devices),
    }


def test_a_site_without_letters_or_both_site_options_are_refused(tmp_path, catalog, cli) -> None:
    design = design_from_json((FIELD / "design.json").read_text())
    with pytest.raises(SpecError, match="--netbox-site"):
        netbox.render(design, catalog, site="---", scoped=True)
    with pytest.raises(SpecError, match="longer than NetBox's 64"):
        netbox.render(design, catalog, site="x" * 70, scoped=True)
    result = cli(
        "cables",
        FIELD / "design.json",
        "--format",
        "netbox",
        "--netbox-site",
        "a",
        "--site",
        "b",
        "-o",
        tmp_path / "nb",
    )
    assert result.code == 2 and "not both" in result.err
