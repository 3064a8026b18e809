"""The NetBox import CSVs use only values NetBox's own choice sets and import forms accept.

tests/fixtures/netbox/choices.json is a copy of those lists made by
tests/fixtures/netbox/extract.py from netbox-community/netbox (its "source" names the commit).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from railplan import load_spec, plan
from railplan.pipeline.layout import complete
from railplan.render import netbox

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "netbox" / "choices.json"
NETBOX = json.loads(FIXTURE.read_text(encoding="utf-8"))
CHOICES = {name: {str(v) for v in values} for name, values in NETBOX["choices"].items()}
FORMS = {
    "racks.csv": "RackImportForm",
    "devices.csv": "DeviceImportForm",
    "interfaces.csv": "InterfaceImportForm",
    "cables.csv": "CableImportForm",
}
#: (file, column) -> the NetBox choice set its values must come from
CHOICE_COLUMNS = {
    ("racks.csv", "status"): "RackStatusChoices",
    ("racks.csv", "width"): "RackWidthChoices",
    ("devices.csv", "status"): "DeviceStatusChoices",
    ("devices.csv", "face"): "DeviceFaceChoices",
    ("interfaces.csv", "type"): "InterfaceTypeChoices",
    ("cables.csv", "type"): "CableTypeChoices",
    ("cables.csv", "status"): "LinkStatusChoices",
    ("cables.csv", "length_unit"): "CableLengthUnitChoices",
    ("cables.csv", "color"): "ColorChoices",
}
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_the_copy_names_its_source() -> None:
    source = NETBOX["source"]
    assert source["repository"] == "https://github.com/netbox-community/netbox"
    assert len(source["commit"]) == 40 and "netbox/dcim/choices.py" in source["files"]
    assert "infiniband-ndr" in CHOICES["InterfaceTypeChoices"]
    assert "infiniband-ndr-4x" not in CHOICES["InterfaceTypeChoices"]  # the value once exported


@pytest.fixture(scope="module", params=["h100-1k", "seed003-matrix", "superpod-h100-4su"])
def files(request, catalog) -> tuple[object, dict[str, str]]:
    spec = load_spec(EXAMPLES / f"{request.param}.yaml")
    design, _ = complete(plan(spec, catalog), spec, catalog, method="naive")
    return design, netbox.render(design, catalog, site="dc1")


def test_every_column_and_choice_is_one_netbox_accepts(files) -> None:
    _, out = files
    for name, text in out.items():
        header = next(csv.reader(io.StringIO(text)))
        assert set(header) <= set(NETBOX["import_forms"][FORMS[name]]), name
        for row in rows(text):
            for (file, column), choice_set in CHOICE_COLUMNS.items():
                if file == name and row[column]:
                    assert row[column] in CHOICES[choice_set], (name, column, row[column])


def test_cables_carry_their_site_and_servers_their_maker(files, catalog) -> None:
    design, out = files
    cables = rows(out["cables.csv"])
    assert {(c["side_a_site"], c["side_b_site"]) for c in cables} == {("dc1", "dc1")}
    nodes = {n.id for n in design.nodes}
    makers = {d["manufacturer"] for d in rows(out["devices.csv"]) if d["name"] in nodes}
    vendor = catalog.node(design.shape.model).vendor
    assert makers == {vendor or "Generic"}


def test_interface_types_for_every_catalog_port(catalog) -> None:
    """Every switch and NIC port speed of the catalog maps to a NetBox interface type, and to the
    exact `<speed>gbase-x-<cage>` one whenever NetBox has it."""
    ports = [(s.protocol, m.speed_gbps, s.form_factor) for s in catalog.switches.values()
             for m in s.modes]  # fmt: skip
    ports += [(p, n.port_speed_gbps, n.form_factor) for n in catalog.nics.values()
              for p in ("ethernet", "infiniband")]  # fmt: skip
    for protocol, speed, form_factor in ports:
        slug = netbox.interface_type(protocol, speed, form_factor)
        assert slug in CHOICES["InterfaceTypeChoices"]
        ff = {"qsfp-dd": "qsfpdd"}.get(form_factor, form_factor)
        exact = f"{speed}gbase-x-{ff}" if protocol == "ethernet" else ""
        if protocol == "infiniband":
            exact = {100: "edr", 200: "hdr", 400: "ndr", 800: "xdr"}.get(speed, "")
            exact = f"infiniband-{exact}" if exact else ""
        if exact in CHOICES["InterfaceTypeChoices"]:
            assert slug == exact, (protocol, speed, form_factor)
