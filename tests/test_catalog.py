"""Catalog validation: optics and cables load, and bad entries fail naming file and entry."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from railplan.catalog import PRICE_KINDS, SOURCE_KINDS, Catalog, load_catalog, parse_catalog
from railplan.errors import CatalogError

CATALOGS = Path(__file__).resolve().parent.parent / "catalogs"

CORD = {
    "id": "cord",
    "name": "OM4 MPO-12/APC cord",
    "kind": "fibre",
    "fibre": "mmf",
    "end_a": "mpo-12-apc",
    "end_b": "mpo-12-apc",
    "lengths_m": [1, 5, 10],
    "reach_m": {"value": 50, "source": "estimate: test"},
    "power_w": {"value": 0, "source": "standard: passive"},
    "price_usd": {"value": 50, "source": "estimate: test"},
}
SR4 = {
    "id": "sr4",
    "name": "OSFP 400G SR4",
    "form_factor": "osfp",
    "ports": 1,
    "port_speed_gbps": 400,
    "interface": "400g-sr4",
    "fibre": "mmf",
    "connector": "mpo-12-apc",
    "reach_m": {"value": 50, "source": "vendor: test"},
    "power_w": {"value": 8, "source": "vendor: test"},
    "price_usd": {"value": 700, "source": "estimate: test"},
}
DAC = {
    "id": "dac",
    "name": "DAC twin-port OSFP to 2 x 400G OSFP",
    "kind": "dac",
    "end_a": "osfp",
    "end_b": "osfp",
    "speed_gbps": 400,
    "links": 2,
    "breakout": 2,
    "lengths_m": [1, 2, 3],
    "reach_m": {"value": 3, "source": "vendor: test"},
    "power_w": {"value": 0, "source": "vendor: passive"},
    "price_usd": {"value": 250, "source": "estimate: test"},
    "price_per_m_usd": {"value": 50, "source": "estimate: test"},
}


def optics(**changes: Any) -> list[tuple[str, object]]:
    """An optics.yaml document with one transceiver, one cord and one DAC, patched."""
    doc = {
        "transceivers": [copy.deepcopy(SR4)],
        "cables": [copy.deepcopy(CORD), copy.deepcopy(DAC)],
    }
    for path, value in changes.items():
        section, index, field = path.split("__")
        doc[section][int(index)][field] = value
    return [("optics.yaml", doc)]


def fails(docs: list[tuple[str, object]]) -> str:
    with pytest.raises(CatalogError) as err:
        parse_catalog(docs)
    return str(err.value)


def test_bundled_catalog_has_optics_for_every_speed(catalog: Catalog) -> None:
    speeds = {t.port_speed_gbps for t in catalog.transceivers.values()}
    assert {200, 400, 800} <= speeds
    kinds = {c.kind for c in catalog.cables.values()}
    assert kinds == {"dac", "acc", "aec", "aoc", "fibre", "trunk"}
    assert any(t.ports == 2 and t.form_factor == "osfp" for t in catalog.transceivers.values())
    assert any(c.breakout == 2 and c.kind == "fibre" for c in catalog.cables.values())
    for item in [*catalog.transceivers.values(), *catalog.cables.values()]:
        for fig in (item.reach_m, item.power_w):
            assert fig.source.lower().startswith(SOURCE_KINDS)
        assert item.price_usd.source.kind in PRICE_KINDS and item.price_usd.date


def test_a_minimal_optics_file_parses() -> None:
    cat = parse_catalog(optics())
    assert set(cat.transceivers) == {"sr4"}
    assert cat.cables["dac"].price_at(2.0) == 350.0
    assert cat.cables["dac"].stocked(1.2) == 2 and cat.cables["dac"].stocked(3.5) is None


def test_unknown_mode_of_names_file_and_entry() -> None:
    assert fails(optics(transceivers__0__mode_of="nope")) == (
        "optics.yaml: transceivers[sr4]: mode_of 'nope' is not a transceiver in the catalog"
    )


def test_a_mode_keeps_the_part_price() -> None:
    docs = optics()
    twin = dict(copy.deepcopy(SR4), id="sr4-200g", port_speed_gbps=200, mode_of="sr4")
    twin["price_usd"] = {"value": 500, "source": "estimate: cheaper"}
    docs[0][1]["transceivers"].append(twin)  # type: ignore[index]
    assert "a mode of sr4 must keep its form factor (osfp) and price (700 USD, 466.67-1050)" in (
        fails(docs)
    )


def test_impossible_breakout_is_refused() -> None:
    msg = fails(optics(cables__1__links=2, cables__1__breakout=3))
    assert msg == "optics.yaml: cables[dac]: 2 links cannot split evenly over 3 b ends"


def test_impossible_speeds_are_refused() -> None:
    msg = fails(optics(transceivers__0__form_factor="qsfp28"))
    assert (
        msg == "optics.yaml: transceivers[sr4]: 1 x 400G exceeds the 100G a qsfp28 module carries"
    )
    msg = fails(optics(cables__1__end_b="qsfp56"))
    assert msg == "optics.yaml: cables[dac]: 1 x 400G exceeds the 200G a qsfp56 end carries"
    msg = fails(optics(cables__1__speed_gbps=0))
    assert "a dac cable needs speed_gbps" in msg


def test_missing_source_is_refused_clearly() -> None:
    msg = fails(optics(transceivers__0__price_usd=700))
    assert msg.startswith("optics.yaml: transceivers[sr4]: price_usd: a bare 700 has no source;")
    msg = fails(optics(cables__1__reach_m={"value": 3}))
    assert msg == "optics.yaml: cables[dac]: reach_m.source: is missing; add it"
    msg = fails(optics(cables__0__power_w={"value": 0, "source": "guess"}))
    assert msg.startswith("optics.yaml: cables[cord]: power_w.source: must start with one of")


def test_unknown_connector_and_form_factor_are_refused() -> None:
    assert "connector 'sc' is not one of" in fails(optics(transceivers__0__connector="sc"))
    assert "cables[dac]: end 'cxp' is not a form factor" in fails(optics(cables__1__end_a="cxp"))
    assert "cables[cord]: fibre end 'osfp' is not a connector" in fails(
        optics(cables__0__end_a="osfp")
    )
    assert "transceivers[sr4]: form_factor:" in fails(optics(transceivers__0__form_factor="cfp"))


def test_an_optic_without_a_fibre_cord_is_refused() -> None:
    msg = fails(optics(transceivers__0__fibre="smf"))
    assert msg == (
        "optics.yaml: transceivers[sr4]: no fibre cable has a mpo-12-apc end for smf; "
        "add one to the cables section"
    )


def test_fibre_cords_carry_no_speed_and_split_evenly() -> None:
    assert "leave speed_gbps out" in fails(optics(cables__0__speed_gbps=400))
    assert "links = breakout = N" in fails(optics(cables__0__links=2))


def test_stocked_lengths_within_reach_and_increasing() -> None:
    assert "exceeds the reach 3 m" in fails(optics(cables__1__lengths_m=[1, 5]))
    assert "increasing list" in fails(optics(cables__1__lengths_m=[2, 1]))


def test_duplicate_ids_and_unknown_nic_name_the_file() -> None:
    docs = optics()
    docs.append(("more.yaml", {"transceivers": [copy.deepcopy(SR4)]}))
    assert fails(docs) == "more.yaml: transceivers id 'sr4' is defined twice (also in optics.yaml)"
    node = {"id": "box", "name": "Box", "gpus": 8, "nic": "nope", "nics": 8,
            "form_factor": "osfp", "source": "vendor: test"}  # fmt: skip
    msg = fails([*optics(), ("nodes.yaml", {"nodes": [node]})])
    assert msg == "nodes.yaml: nodes[box]: unknown nic 'nope'"


def test_bundled_files_fail_with_their_name_when_broken(tmp_path: Path) -> None:
    for file in CATALOGS.glob("*.yaml"):
        (tmp_path / file.name).write_text(file.read_text(encoding="utf-8"), encoding="utf-8")
    doc = yaml.safe_load((tmp_path / "optics.yaml").read_text(encoding="utf-8"))
    doc["cables"][0]["breakout"] = 3
    (tmp_path / "optics.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(CatalogError) as info:
        load_catalog(tmp_path)  # a user folder: the message gives the file's path
    assert str(info.value).startswith(
        f"{tmp_path.resolve()}/optics.yaml: cables[dac-osfp-800g-twin]: "
    )
