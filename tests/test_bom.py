"""BOM: exact counts and totals for a hand-built design, per-cage optics, JSON shape."""

from __future__ import annotations

import dataclasses

import pytest

from railplan.catalog import Catalog
from railplan.design import Cable, Design, Link, Node, NodeShape, Routing, Sizing, Switch
from railplan.errors import InfeasibleError
from railplan.physical import media
from railplan.physical.bom import NO_CABLES, bom
from railplan.validate.cables import check_cables
from tests.conftest import make_spec

LEAF = "sn5600"  # NVIDIA Spectrum-4: 64 x 800G OSFP cages, run as 128 x 400G (two per cage)


def hand_design(cables: tuple[Cable, ...] = ()) -> Design:
    """Two nodes with two single-port 400G OSFP NICs, two leaves and one spine.

    - leaf0 cage 1 (P1/1, P1/2) fans out to both nodes' nic0 over one 1:2 splitter DAC;
    - leaf1 cage 1 reaches both nodes' nic1 over optics: one twin-port 2xSR4 module in the
      leaf, a single-port SR4 in each NIC, one MPO cord each (routed 20 m and 30 m);
    - leaf0 cage 2 carries two parallel links to spine cage 1: one twin-port DAC;
    - leaf1 cage 2 carries two parallel links to spine cage 2: 2xDR4 modules, 100 m cords.
    """
    shape = NodeShape(
        model="custom",
        gpus=2,
        nics=2,
        ports_per_nic=1,
        port_speed_gbps=400,
        nic_model="cx7-400g",
        form_factor="osfp-rhs",
        ports_per_cage=1,
        port_plane=(0, 0),
        port_rail=(0, 1),
    )
    sw = dict(plane=0, radix=128, port_speed_gbps=400, ports_per_cage=2)
    switches = (
        Switch("leaf0", LEAF, "leaf", rail=0, **sw),  # type: ignore[arg-type]
        Switch("leaf1", LEAF, "leaf", rail=1, **sw),  # type: ignore[arg-type]
        Switch("spine0", LEAF, "spine", **sw),  # type: ignore[arg-type]
    )
    links = (
        Link("NL1", "node-leaf", "n1", 0, "leaf0", 0, 400, 0, 0),
        Link("NL2", "node-leaf", "n2", 0, "leaf0", 1, 400, 0, 0),
        Link("NL3", "node-leaf", "n1", 1, "leaf1", 0, 400, 0, 1),
        Link("NL4", "node-leaf", "n2", 1, "leaf1", 1, 400, 0, 1),
        Link("LS1", "leaf-spine", "leaf0", 2, "spine0", 0, 400, 0),
        Link("LS2", "leaf-spine", "leaf0", 3, "spine0", 1, 400, 0),
        Link("LS3", "leaf-spine", "leaf1", 2, "spine0", 2, 400, 0),
        Link("LS4", "leaf-spine", "leaf1", 3, "spine0", 3, 400, 0),
    )
    return Design(
        name="hand",
        topology="roft",
        gpus=4,
        planes=1,
        shape=shape,
        sizing=Sizing(2, LEAF, 128, "1:1", 2, 2, 2, 1, 0, 3, True),
        routing=Routing("ecmp"),
        nodes=(Node("n1", 0, 0, 0, 0), Node("n2", 1, 0, 0, 0)),
        switches=switches,
        links=links,
        cables=cables,
    )


def cab(link: str, part: str, length: float, ta: str = "", tb: str = "") -> Cable:
    return Cable(f"C-{link}", link, part, ta, tb, length, "", "", "")


SR4, TWIN_SR4, TWIN_DR4 = "osfp-400g-sr4", "osfp-800g-2xsr4", "osfp-800g-2xdr4"
HAND_CABLES = (
    cab("NL1", "dac-osfp-800g-2x400g-osfp", 2.0),
    cab("NL2", "dac-osfp-800g-2x400g-osfp", 1.5),
    cab("NL3", "fibre-mmf-mpo12-apc", 20.0, SR4, TWIN_SR4),
    cab("NL4", "fibre-mmf-mpo12-apc", 30.0, SR4, TWIN_SR4),
    cab("LS1", "dac-osfp-800g-twin", 1.5),
    cab("LS2", "dac-osfp-800g-twin", 1.5),
    cab("LS3", "fibre-smf-mpo12-apc", 100.0, TWIN_DR4, TWIN_DR4),
    cab("LS4", "fibre-smf-mpo12-apc", 100.0, TWIN_DR4, TWIN_DR4),
)


def test_hand_built_design_counts_and_totals(catalog: Catalog) -> None:
    design = hand_design(HAND_CABLES)
    assert check_cables(design, catalog) == []
    got = bom(design, catalog)
    counts = {(ln.part, ln.length_m): ln.count for ln in got.lines}
    assert counts == {
        (LEAF, None): 3,
        (TWIN_DR4, None): 2,  # one per cage: spine cage 2 and leaf1 cage 2
        (SR4, None): 2,
        (TWIN_SR4, None): 1,  # one module serves NL3 and NL4
        ("dac-osfp-800g-twin", 1.5): 1,  # one cable carries LS1 and LS2
        ("dac-osfp-800g-2x400g-osfp", 2.0): 1,  # one splitter for NL1 and NL2, at the longer leg
        ("fibre-mmf-mpo12-apc", 30.0): 2,  # both fibres of the twin module cut to 30 m
        ("fibre-smf-mpo12-apc", 100.0): 2,
    }
    t, c = catalog.transceivers, catalog.cables
    sw = catalog.switch(LEAF)
    expected = (
        3 * sw.price_usd.value
        + 2 * t[TWIN_DR4].price_usd.value
        + 2 * t[SR4].price_usd.value
        + t[TWIN_SR4].price_usd.value
        + c["dac-osfp-800g-twin"].price_at(1.5)
        + c["dac-osfp-800g-2x400g-osfp"].price_at(2.0)
        + 2 * c["fibre-mmf-mpo12-apc"].price_at(30.0)
        + 2 * c["fibre-smf-mpo12-apc"].price_at(100.0)
    )
    assert expected == 606_082.0  # 600,000 switches + 4,917 optics + 1,165 cables
    assert got.totals.cost_usd == expected
    # switches typical, optics, and the EEPROMs of the twin DAC (0.2 W) and the splitter (0.3 W)
    assert got.totals.power_w == 3 * 1100 + 2 * 17 + 2 * 8 + 15 + 0.5
    # each switch at max(its maximum, typical + its optics); node optics and cables on top
    assert got.totals.power_max_w == 3 * 2700 + 2 * 8 + 0.5
    assert (got.totals.switches, got.totals.transceivers, got.totals.cables) == (3, 5, 6)
    assert (got.totals.fibres, got.totals.splitters, got.totals.rack_units) == (4, 1, 6)
    t = got.totals  # links and physical cables separately, per tier
    assert (t.links, t.physical_cables, t.transceivers_node, t.transceivers_switch) == (8, 6, 2, 3)
    assert t.per_tier == {
        "node_leaf": {"links": 4, "physical_cables": 3, "transceivers": 3},
        "leaf_spine": {"links": 4, "physical_cables": 3, "transceivers": 2},
    }
    kinds = {ln.part: ln.kind for ln in got.lines}
    assert kinds["dac-osfp-800g-2x400g-osfp"] == "splitter"
    assert kinds["fibre-mmf-mpo12-apc"] == "fibre"
    assert kinds["dac-osfp-800g-twin"] == "cable"
    for ln in got.lines:
        assert ln.total_usd == pytest.approx(ln.unit_price_usd * ln.count)
        assert ln.source.split(":")[0] in (
            "estimate",
            "reseller",
            "list",
            "vendor",
            "datasheet",
            "list price",
            "standard",
        )


def test_bom_json_has_the_keys_plan_json_needs(catalog: Catalog) -> None:
    data = bom(hand_design(HAND_CABLES), catalog).to_json()
    assert set(data) == {"bom", "totals", "notes"}
    assert {"cost_usd", "power_w", "transceivers", "cables"} <= set(data["totals"])
    line = data["bom"][0]
    assert {"part", "kind", "count", "unit_price_usd", "total_usd", "source"} <= set(line)
    assert line["kind"] == "switch"


def test_without_cables_the_bom_covers_switches_only(catalog: Catalog) -> None:
    got = bom(hand_design(), catalog)
    assert [ln.kind for ln in got.lines] == ["switch"]
    assert got.totals.cost_usd == 3 * catalog.switch(LEAF).price_usd.value
    assert (got.totals.transceivers, got.totals.cables) == (0, 0)
    assert NO_CABLES in got.notes


def test_two_optics_in_one_twin_cage_are_refused(catalog: Catalog) -> None:
    cables = list(HAND_CABLES)
    cables[3] = cab("NL4", "fibre-smf-mpo12-apc", 30.0, "osfp-400g-dr4", TWIN_DR4)
    with pytest.raises(
        InfeasibleError, match=r"cage 1 of leaf1 holds osfp-800g-2xsr4 .*mmf and smf"
    ):
        bom(hand_design(tuple(cables)), catalog)


def test_nics_are_priced_on_request(catalog: Catalog) -> None:
    got = bom(hand_design(HAND_CABLES), catalog, include_nics=True)
    nic = next(ln for ln in got.lines if ln.kind == "nic")
    assert (nic.part, nic.count) == ("cx7-400g", 4)
    plain = bom(hand_design(HAND_CABLES), catalog)
    unit = catalog.nic("cx7-400g").price_usd.value
    assert got.totals.cost_usd == plain.totals.cost_usd + 4 * unit


def test_bom_of_a_planned_design_matches_the_media_assignment(catalog: Catalog) -> None:
    from railplan.pipeline.plan import plan

    design = plan(make_spec(256, "dgx-h100", switches=["qm9700"]), catalog)
    lengths = {lk.id: 4.0 + (i % 7) * 6.0 for i, lk in enumerate(design.links)}
    got = media.assign_design(design, catalog, lengths)
    cables = tuple(
        cab(lk.id, got.choices[lk.id].cable, got.choices[lk.id].stocked_length_m,
            got.choices[lk.id].transceiver_a, got.choices[lk.id].transceiver_b)
        for lk in design.links
    )  # fmt: skip
    billed = bom(dataclasses.replace(design, cables=cables), catalog)
    switches = sum(ln.total_usd for ln in billed.lines if ln.kind == "switch")
    assert billed.totals.cost_usd - switches == pytest.approx(got.cost_usd)
    # one module per cage that holds optics, though a DGX H100 twin-port cage carries two links
    ends = media.link_ends(design, catalog)
    cages = set()
    for lk in design.links:
        choice = got.choices[lk.id]
        for end, name in zip(
            ends[lk.id], (choice.transceiver_a, choice.transceiver_b), strict=True
        ):
            if name:
                cages.add(end.key)
    optics_links = sum(1 for c in got.choices.values() if c.transceiver_a)
    assert billed.totals.transceivers == len(cages) < 2 * optics_links
    assert sum(1 for d, _ in cages if d.startswith("node")) == 4 * len(design.nodes)
    assert billed == bom(dataclasses.replace(design, cables=cables), catalog)


def test_switch_lines_carry_the_orderable_part_number(catalog: Catalog) -> None:
    """QM9700 is ordered as MQM9700-NS2F (P2C airflow) per NVIDIA's QM9700 user manual."""
    design = hand_design()
    design = dataclasses.replace(
        design, switches=tuple(dataclasses.replace(s, model="qm9700") for s in design.switches)
    )
    (line,) = bom(design, catalog).lines
    assert (line.part, line.part_number, line.count) == ("qm9700", "MQM9700-NS2F", 3)
    assert "MQM9700-NS2R" in catalog.switch("qm9700").notes  # the C2P airflow variant
