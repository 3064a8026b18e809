"""Media follow the protocol, the equipment vendor and the cage: NDR bills no AOC/AEC, DGX
and switch optics are separate parts, NVIDIA part numbers stay on NVIDIA gear, and the 4-SU
SuperPOD bill reads against the counts NVIDIA publishes."""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from railplan.catalog import Catalog, cage_accepts, load_catalog
from railplan.errors import InfeasibleError
from railplan.pipeline.build import Build, build
from tests.conftest import make_spec


@cache
def superpod(fibre_only: bool = False) -> Build:
    """The 4-SU DGX SuperPOD (H100): 127 DGX, 32 leaves and 16 spines of QM9700.

    NVIDIA's DGX SuperPOD reference architecture (DGX H100, RA-11333-001), component tables of
    its appendix, lists for this fabric 2,040 NDR cables (1,016 DGX-leaf links + 1,024
    leaf-spine links: one MPO fibre per 400G link), 1,536 switch twin-port transceivers (every
    one of the 32 cages of the 48 QM9700) and 508 DGX transceivers (127 DGX x 4 twin-port
    cages). With the whole catalog railplan puts copper where the racks are close; cut to
    fibre it reproduces the published bill exactly.
    """
    catalog = load_catalog()
    if fibre_only:
        cables = {k: c for k, c in catalog.cables.items() if c.optical}
        catalog = catalog.model_copy(update={"cables": cables})
    return build(make_spec(1016, "dgx-h100", switches=["qm9700"]), catalog)


def test_superpod_bill_reads_against_the_published_counts() -> None:
    b = superpod()
    assert b.bom is not None
    t = b.bom.totals
    links = b.design.link_counts()
    assert (links["node_leaf"], links["leaf_spine"]) == (1016, 1024)
    assert t.per_tier["node_leaf"]["links"] + t.per_tier["leaf_spine"]["links"] == 2040
    catalog = load_catalog()
    kinds = Counter()
    for ln in b.bom.lines:
        if ln.kind in ("cable", "fibre", "splitter"):
            kinds[catalog.cables[ln.part].kind] += ln.count
    assert kinds["aoc"] == kinds["aec"] == 0  # not offered for NDR
    # copper joins two cages per cable (twin-port DAC/ACC): each takes a cage off the optics
    copper = kinds["dac"] + kinds["acc"]
    on_copper = sum(1 for c in b.design.cables if catalog.cables[c.media].kind in ("dac", "acc"))
    assert t.transceivers_switch + copper * 2 == 48 * 32 == 1536
    assert t.transceivers_node == 127 * 4 == 508  # every DGX cage on fibre here
    assert kinds["fibre"] + on_copper == 2040
    flat = {ln.part: ln.count for ln in b.bom.lines if ln.kind == "transceiver"}
    assert flat["osfp-rhs-800g-2xsr4"] == t.transceivers_node  # MMA4Z00-NS-FLT on the DGX
    parts = {ln.part_number for ln in b.bom.lines if ln.kind == "transceiver"}
    assert {"MMA4Z00-NS", "MMA4Z00-NS-FLT"} <= parts


def test_superpod_cut_to_fibre_is_the_published_bill() -> None:
    b = superpod(fibre_only=True)
    assert b.bom is not None
    t = b.bom.totals
    assert (t.cables, t.transceivers_switch, t.transceivers_node) == (2040, 1536, 508)
    assert t.per_tier == {
        "node_leaf": {"links": 1016, "physical_cables": 1016, "transceivers": 508 + 512},
        "leaf_spine": {"links": 1024, "physical_cables": 1024, "transceivers": 1024},
    }


def test_infiniband_notes_say_why_cheaper_parts_were_skipped() -> None:
    b = superpod()
    assert b.placement is not None
    notes = " ".join(b.placement.notes)
    assert "does not support infiniband" in notes
    assert "aoc-osfp-800g-twin would cost less" in notes


def test_nvidia_parts_stay_on_nvidia_gear(catalog: Catalog) -> None:
    b = build(make_spec(256, "h20-4x2x200g", topology="matrix", switches=["cx864e-n"]), catalog)
    d = b.design
    assert b.bom is not None
    for ln in b.bom.lines:
        if ln.kind in ("transceiver", "cable", "fibre", "splitter", "harness", "trunk"):
            part = catalog.transceivers.get(ln.part) or catalog.cables[ln.part]
            assert part.vendor == "", f"{ln.part} ({part.vendor}) on Asterfusion/Broadcom gear"
    assert d.cables


def test_dgx_on_an_ethernet_switch_of_another_vendor(catalog: Catalog) -> None:
    """DGX cages take NVIDIA flat-top modules (the NIC is NVIDIA's); the switch cages take
    multi-vendor finned modules; the fibre between them is vendor-neutral."""
    b = build(make_spec(256, "dgx-h100", switches=["cx864e-n"]), catalog)
    switches = b.design.switch_by_id()
    links = {lk.id: lk for lk in b.design.links}
    for c in b.design.cables:
        lk = links[c.link_id]
        if c.transceiver_a:
            node = catalog.transceivers[c.transceiver_a]
            assert lk.a_device not in switches and node.form_factor == "osfp-rhs"
            assert node.vendor in ("NVIDIA", "")
        if c.transceiver_b:
            assert catalog.transceivers[c.transceiver_b].vendor == ""
        assert catalog.cables[c.media].vendor == ""


def test_flat_top_and_finned_top_never_swap_cages(catalog: Catalog) -> None:
    assert not cage_accepts("osfp", "osfp-rhs") and not cage_accepts("osfp-rhs", "osfp")
    for node in ("dgx-h100", "hgx-h100-8x400g", "dgx-b300", "hgx-b300-8x2x400g"):
        assert catalog.node(node).form_factor == "osfp-rhs"
    for sw in ("qm9700", "sn5600", "q3400", "cx864e-n"):
        assert catalog.switch(sw).form_factor == "osfp"


def test_b300_2x400g_node_takes_twin_port_optics(catalog: Catalog) -> None:
    b = build(make_spec(512, "hgx-b300-8x2x400g", switches=["sn5600"]), catalog)
    assert b.bom is not None
    node_parts = {c.transceiver_a for c in b.design.cables if c.transceiver_a}
    for name in node_parts:
        t = catalog.transceivers[name]
        assert (t.form_factor, t.ports) == ("osfp-rhs", 2)  # one twin-port module per CX-8
    splitters = [ln for ln in b.bom.lines if ln.kind == "splitter"]
    assert not splitters


def test_nic_that_does_not_run_the_protocol_is_refused(catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError, match=r"NIC cx8-800g .* does not run ethernet"):
        build(make_spec(64, "dgx-b300", switches=["sn5600"]), catalog, layout=True)


def test_q3400_runs_400g_to_connectx8(catalog: Catalog) -> None:
    """Quantum-X800 at 4 x 400G per cage (2 lanes of 200G each) to ConnectX-8 at 400G: a
    1.6T twin-port module per switch cage, 1:2 single-mode splitters (NVIDIA MFP7E40) or the
    fibre plant, an 800G flat-top module per NIC running two lanes."""
    spec = make_spec(2048, "dgx-b300", switches=["q3400"])
    spec = spec.model_copy(
        update={"cluster": spec.cluster.model_copy(update={"port_speed_gbps": 400})}
    )
    b = build(spec, catalog)
    assert b.bom is not None
    parts = {ln.part for ln in b.bom.lines}
    assert "osfp-1600g-2xdr4-4x400g" in parts and "osfp-rhs-800g-dr4-400g" in parts
    assert b.design.sizing.radix == 288


def test_per_length_part_numbers_reach_the_bill(catalog: Catalog) -> None:
    part = catalog.cables["dac-osfp-800g-twin"]
    assert part.part_number_at(1.5) == "MCP4Y10-N01A"
    assert part.part_number_at(0.5) == "MCP4Y10-N00A"
    b = superpod()
    assert b.bom is not None
    for ln in b.bom.lines:
        if ln.part == "dac-osfp-800g-twin":
            assert ln.part_number == catalog.cables[ln.part].part_numbers[ln.length_m or 0.0]
