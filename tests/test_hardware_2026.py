"""2026 hardware: rack-scale NVL72 systems, B200/B300 and AMD nodes, Tomahawk 5/6 and CPO
switches, 1.6T and LPO optics, each planned against its published reference fabric.

Held-out checks (published counts the models were not fitted to): NVIDIA's DGX SuperPOD B300
Spectrum-4 Ethernet RA, Table 3 "Larger DGX SuperPOD component counts" (1-16 SU), the B300
Quantum-X800 XDR RA's Table 3 (1-18 SU), Juniper's AI data center JVD scaling table (16
stripes from 64 spines at 8,192 GPUs), and Lambda's
GB300 NVL72 table of NVIDIA Quantum-X Photonics switches per cluster size ("Unbox one of
NVIDIA's first co-packaged optics switches": 576 GPUs 12 switches, 4,608 GPUs 100, 10,368 GPUs
216, 41,472 GPUs 1,440).
"""

from __future__ import annotations

import json
import math
import os
import re
from collections import Counter

import numpy as np
import pytest

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.errors import InfeasibleError, SpecError
from railplan.pipeline.build import build
from railplan.pipeline.plan import plan
from railplan.spec import load_spec, spec_from_dict
from railplan.traffic.index import FabricIndex
from railplan.traffic.patterns import PatternError, alltoall_pairs, ring_pairs
from railplan.validate import check
from tests.conftest import EXAMPLES, ROOT, make_spec
from tests.test_bill_sweep import SAMPLED

SLOW = os.environ.get("RAILPLAN_SLOW") == "1"

SYSTEMS = ["gb200-nvl72", "gb300-nvl72", "dgx-b200", "mi300x-8x400g", "mi355x-8x400g"]
#: the switches the catalog held before 2026 (the issue lists them)
BEFORE = {"cx732q-n", "cx864e-n", "q3400", "qm9700", "s9827-128dh", "sn5600"}


@pytest.mark.parametrize("system", SYSTEMS)
def test_catalog_show_prints_each_system(cli, system: str) -> None:  # type: ignore[no-untyped-def]
    res = cli("catalog", "show", system)
    assert res.code == 0, res.err
    assert f"id: {system}" in res.out and "gpus:" in res.out and "nic:" in res.out


def test_catalog_lists_new_switches_with_two_tomahawk6_vendors_and_cpo(catalog: Catalog) -> None:
    new = set(catalog.switches) - BEFORE
    assert len(new) >= 8
    th6 = {
        s.vendor
        for s in catalog.switches.values()
        if s.asic_tbps == 102.4 and "Tomahawk 6" in s.name + s.source
    }
    assert len(th6) >= 2, th6
    cpo = {s.id for s in catalog.switches.values() if s.co_packaged}
    assert {"sn6810", "q3450"} <= cpo
    for s in (catalog.switches[i] for i in new):
        assert s.source, f"{s.id} names no source for its port table"
        # radix at the native speed fills the ASIC or stays below it
        assert s.cages * s.cage_speed_gbps <= s.asic_tbps * 1000


def test_catalog_list_shows_them(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("catalog", "list")
    assert res.code == 0
    rows = [ln.split()[1] for ln in res.out.splitlines() if ln.startswith("switches")]
    assert len(rows) >= len(BEFORE) + 8 and "arista-7060xe7-64ps" in rows and "q3450" in rows


# -- rack-scale NVL72 -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gb200(catalog: Catalog):  # type: ignore[no-untyped-def]
    return build(make_spec(576, "gb200-nvl72", switches=["qm9700"]), catalog)


def test_gb200_576_plans_bills_and_checks(gb200, catalog: Catalog) -> None:  # type: ignore[no-untyped-def]
    d: Design = gb200.design
    assert check(d, catalog) == []
    assert gb200.bom is not None and gb200.bom.totals.links == len(d.links) == len(d.cables)
    # 144 trays of 4 NICs: 4 rails; a QM9700 leaf takes 32 trays 1:1, so 5 whole SUs of 32
    # trays (the last partly filled) give 4 x 5 leaves, each with 32 uplinks; the fewest spines
    # dividing 32 whose 64 ports hold 20 leaves are 16 (two links from every leaf to each)
    assert len(d.nodes) == 144 and d.shape.nics == 4 and d.shape.gpus == 4
    assert d.sizing.su_nodes == 32 and d.sizing.sus == math.ceil(144 / 32) == 5
    assert d.switch_counts() == {"leaf": 20, "spine": 16, "core": 0, "total": 36}
    assert d.link_counts()["node_leaf"] == 576 and d.link_counts()["leaf_spine"] == 20 * 32


def test_gb200_one_rack_per_nvl72(gb200) -> None:  # type: ignore[no-untyped-def]
    d: Design = gb200.design
    place = {p.device: p for p in d.placements}
    per_rack = Counter(place[n.id].rack for n in d.nodes)
    assert len(per_rack) == 576 // 72 == 8 and set(per_rack.values()) == {18}
    for n in d.nodes:  # the 18 trays of one NVLink domain share one rack
        assert n.index // d.shape.domain_nodes == n.rack
    assert d.shape.domain_nodes == 18
    compute = [r for r in d.racks if r.kind == "compute"]
    assert len(compute) == 8


def test_rails_follow_the_tray_nic_index(gb200) -> None:  # type: ignore[no-untyped-def]
    d: Design = gb200.design
    sw = d.switch_by_id()
    for lk in d.links:
        if lk.kind == "node-leaf":
            assert sw[lk.b_device].rail == lk.a_port  # NIC k of every tray on rail k


def test_gb300_on_q3400_is_nvidias_one_su(catalog: Catalog) -> None:
    built = build(make_spec(576, "gb300-nvl72", switches=["q3400"]), catalog)
    d = built.design
    assert check(d, catalog) == []
    # 144 trays x 4 ConnectX-8 at 800G: one Q3400 leaf per rail takes 72 trays, 2 SUs
    assert d.switch_counts() == {"leaf": 8, "spine": 4, "core": 0, "total": 12}
    place = {p.device: p.rack for p in d.placements}
    assert set(Counter(place[n.id] for n in d.nodes).values()) == {18}


# -- GB200 / GB300 NVL72 compute fabrics from first principles -------------------------------

# NVIDIA's DGX SuperPOD GB200 RA names the SU (8 DGX GB200 racks, 576 GPUs), the switch
# (QM9700, NDR 400G) and the wiring (rail-optimized, full fat tree), but the per-SU leaf and
# spine table was not found in any source searched (docs/hardware-2026.md lists the searches).
# These tests assert the derivation instead: every tray NIC k is one port of rail k, a 1:1 leaf
# takes half its ports down, so a rail needs ceil(trays / down ports) leaves; each leaf sends
# its uplinks evenly to the fewest spines whose ports hold every leaf (a divisor of the
# uplinks). Two tiers while one spine's ports can reach every leaf, three beyond.


def nvl72_counts(racks: int, leaf_ports: int) -> tuple[int, int | None]:
    """(leaves, spines of a two-tier fabric or None) for ``racks`` NVL72 racks of 4-NIC trays."""
    down = leaf_ports // 2
    leaves = 4 * math.ceil(18 * racks / down)
    if leaves > leaf_ports:
        return leaves, None
    return leaves, next(
        s for s in range(1, down + 1) if down % s == 0 and s * leaf_ports >= leaves * down
    )


@pytest.mark.parametrize(
    ("node", "switch", "ports", "racks"),
    [("gb200-nvl72", "qm9700", 64, r) for r in (*range(1, 29), 29, 32, 64)]
    + [("gb300-nvl72", "q3400", 144, r) for r in (1, 2, 4, 8, 16, 24, 32, 64, 128, 144)],
)
def test_nvl72_fabric_follows_the_port_count(
    catalog: Catalog, node: str, switch: str, ports: int, racks: int
) -> None:
    d = plan(make_spec(72 * racks, node, switches=[switch]), catalog)
    leaves, spines = nvl72_counts(racks, ports)
    counts = d.switch_counts()
    assert counts["leaf"] == leaves and d.sizing.leaf_up == d.sizing.leaf_down == ports // 2
    if spines is None:  # one spine can no longer reach every leaf of a rail group
        assert d.sizing.tiers == 3 and counts["core"] > 0
    else:
        assert d.sizing.tiers == 2 and counts["spine"] == spines and counts["core"] == 0
    assert d.link_counts()["node_leaf"] == 4 * 18 * racks
    racks_of = Counter(n.rack for n in d.nodes)
    assert len(racks_of) == racks and set(racks_of.values()) == {18}
    assert check(d, catalog) == []


@pytest.mark.parametrize(
    ("sus", "leaf", "spine", "tiers"),
    [(1, 20, 16, 2), (2, 36, 32, 2), (3, 56, 32, 2), (4, 72, 96, 3)],
)
def test_gb200_per_nvidia_su_of_8_racks(
    catalog: Catalog, sus: int, leaf: int, spine: int, tiers: int
) -> None:
    """Counts per NVIDIA SU (8 racks, 576 GPUs) as railplan derives them, 1-4 SU: the figures
    the derivation gives, not a published table (none was found)."""
    d = plan(make_spec(576 * sus, "gb200-nvl72", switches=["qm9700"]), catalog)
    assert nvl72_counts(8 * sus, 64)[0] == leaf
    c = d.switch_counts()
    assert (c["leaf"], c["spine"], d.sizing.tiers) == (leaf, spine, tiers)


def test_gb300_on_q3400_matches_the_b300_xdr_table_port_for_port(catalog: Catalog) -> None:
    """An SU of 8 GB300 NVL72 racks is 576 ConnectX-8 at 800G, the same ports as one DGX B300
    XDR SU of 72 nodes: the fabric is the same at every SU count NVIDIA prints for B300."""
    for sus, _nodes, gpus, leaf, spine, nl, ls in B300_XDR_TABLE_3:
        d = plan(make_spec(gpus, "gb300-nvl72", switches=["q3400"]), catalog)
        c = d.switch_counts()
        assert (c["leaf"], c["spine"], c["core"], d.sizing.tiers) == (leaf, spine, 0, 2), sus
        assert (d.link_counts()["node_leaf"], d.link_counts()["leaf_spine"]) == (nl, ls)


@pytest.mark.parametrize(
    ("gpus", "switches", "tiers"), [(576, 12, 2), (4608, 100, 2), (10368, 216, 2), (41472, 1440, 3)]
)
def test_lambda_gb300_cpo_switch_counts(
    catalog: Catalog, gpus: int, switches: int, tiers: int
) -> None:
    """Lambda's published Quantum-X Photonics switch count per GB300 NVL72 cluster size."""
    d = plan(make_spec(gpus, "gb300-nvl72", switches=["q3450"]), catalog)
    assert d.switch_counts()["total"] == switches and d.sizing.tiers == tiers


def test_cpo_links_bill_no_pluggable_at_the_switch(catalog: Catalog) -> None:
    built = build(make_spec(576, "gb300-nvl72", switches=["q3450"]), catalog)
    d = built.design
    assert check(d, catalog) == []
    cable = {c.link_id: c for c in d.cables}
    for lk in d.links:
        cab = cable[lk.id]
        if lk.kind == "node-leaf":
            assert cab.transceiver_b == "cpo-800g-dr4-nvidia"  # the leaf's own engine
            assert catalog.transceivers[cab.transceiver_a].form_factor == "osfp-rhs"
        else:  # leaf-spine: an engine at both ends, fibre between
            assert cab.transceiver_a == cab.transceiver_b == "cpo-800g-dr4-nvidia"
    assert built.bom is not None
    lines = {ln.part: ln for ln in built.bom.lines}
    engine = lines["cpo-800g-dr4-nvidia"]
    # one engine port per switch port used (576 down, 576 up at the leaves, 576 at the spines),
    # priced and powered inside the switch; the modules bought are the trays' 576 only
    assert engine.kind == "optical-engine" and engine.count == 3 * 576
    assert engine.unit_price_usd == 0 and engine.total_power_w == 0
    t = built.bom.totals
    assert t.transceivers == t.transceivers_node == 576 and t.transceivers_switch == 0
    # CPO against pluggable: the same 576 GPUs on air-cooled Q3400s with modules in the cages
    plug = build(make_spec(576, "gb300-nvl72", switches=["q3400"]), catalog)
    assert plug.bom is not None and plug.design.switch_counts() == built.design.switch_counts()
    p = plug.bom.totals
    assert p.transceivers_switch == 8 * 72 + 4 * 72  # one twin-port module per cage used
    assert t.power_w < p.power_w  # the engines' power is inside the 3.95 kW switches


def test_nvl72_gpus_come_in_whole_racks(catalog: Catalog) -> None:
    with pytest.raises(
        SpecError,
        match=r"not whole gb200-nvl72 racks of 72 GPUs \(one NVLink domain each\); use 648 or 576",
    ):
        plan(make_spec(600, "gb200-nvl72", switches=["qm9700"]), catalog)
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 576, "node": "gb200-nvl72"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"nodes_per_rack": 4},
        }
    )
    with pytest.raises(SpecError, match=r"layout\.nodes_per_rack: a gb200-nvl72 rack holds its 18"):
        plan(spec, catalog)


def test_collectives_inside_an_nvlink_domain_stay_off_the_fabric(gb200) -> None:  # type: ignore[no-untyped-def]
    ix = FabricIndex(gb200.design)
    dom = ix.node_domain
    ring, how = ring_pairs(ix)
    assert (dom[ring[:, 0]] != dom[ring[:, 1]]).all() and "NVLink domains" in how
    # tray t of domain d to tray t of domain d+1: 18 rings of 8 domains
    assert len(ring) == 18 * 8
    idx = np.array([n.index for n in gb200.design.nodes])
    assert (idx[ring[:, 0]] % 18 == idx[ring[:, 1]] % 18).all()
    a2a, _ = alltoall_pairs(ix)
    n = len(gb200.design.nodes)
    assert len(a2a) == n * (n - 1) - 8 * 18 * 17  # every ordered pair but those inside a rack
    with pytest.raises(PatternError, match="inside one NVLink domain"):
        alltoall_pairs(ix, [n.id for n in gb200.design.nodes[:18]])


# -- NVIDIA DGX SuperPOD B300, Spectrum-4 Ethernet, Table 3 ---------------------------------

# (SU, nodes, GPUs, leaf, spine, node-leaf cables, leaf-spine cables)
B300_ETHERNET_TABLE_3 = [
    (1, 64, 512, 16, 8, 512, 512),
    (2, 128, 1024, 32, 16, 1024, 1024),
    (4, 256, 2048, 64, 32, 2048, 2048),
    (8, 512, 4096, 128, 64, 4096, 4096),
    (16, 1024, 8192, 256, 128, 8192, 8192),
]


def b300_ethernet(gpus: int) -> dict[str, object]:
    """`railplan plan --gpus N --node hgx-b300-8x2x400g --switch sn5600 --topology roft
    --planes 2 --set fabric.leaf.up_gbps=800 --set fabric.spine_groups=2`"""
    return {
        "cluster": {"gpus": gpus, "node": "hgx-b300-8x2x400g"},
        "fabric": {
            "switches": ["sn5600"],
            "topology": "roft",
            "planes": 2,
            "leaf": {"up_gbps": 800},
            "spine_groups": 2,
        },
    }


@pytest.mark.parametrize(
    ("sus", "nodes", "gpus", "leaf", "spine", "nl", "ls"), B300_ETHERNET_TABLE_3
)
def test_b300_ethernet_superpod_table_3(
    catalog: Catalog, sus: int, nodes: int, gpus: int, leaf: int, spine: int, nl: int, ls: int
) -> None:
    d = plan(spec_from_dict(b300_ethernet(gpus)), catalog)
    assert (d.sizing.sus, len(d.nodes), d.gpus) == (sus, nodes, gpus)
    assert d.sizing.tiers == 2
    assert d.switch_counts() == {"leaf": leaf, "spine": spine, "core": 0, "total": leaf + spine}
    links = d.link_counts()
    # a ConnectX-8 cage carries its two 400G ports, one per plane: one node cable per cage
    assert links["node_leaf"] // d.shape.ports_per_cage == nl
    assert links["leaf_spine"] == ls  # one 800G link per leaf-spine cable
    assert {lk.rate_gbps for lk in d.links if lk.kind == "leaf-spine"} == {800}
    assert check(d, catalog) == []


def test_b300_16_su_spines_are_grouped_by_rail(catalog: Catalog) -> None:
    d = plan(spec_from_dict(b300_ethernet(8192)), catalog)
    sw = d.switch_by_id()
    reach: dict[str, set[str]] = {}
    for lk in d.links:
        if lk.kind == "leaf-spine":
            reach.setdefault(lk.a_device, set()).add(sw[lk.b_device].group)
    for leaf, groups in reach.items():  # rails 0-3 on group 1, rails 4-7 on group 2
        assert groups == {f"spine-group-{sw[leaf].rail // 4 + 1}"}
    # without groups the two tiers cannot hold it, and the refusal names the leaf as sized
    flat = b300_ethernet(8192)
    flat["fabric"] = {**flat["fabric"], "spine_groups": 1, "tiers": 2}  # type: ignore[dict-item]
    with pytest.raises(InfeasibleError) as err:
        plan(spec_from_dict(flat), catalog)
    assert "96x400G" not in str(err.value)
    assert "sn5600 leaves (64x400G down, 32x800G up)" in str(err.value)
    assert "fabric.spine_groups" in str(err.value)


def test_spine_groups_must_split_the_rails(catalog: Catalog) -> None:
    spec = b300_ethernet(8192)
    spec["fabric"]["spine_groups"] = 3  # type: ignore[index]
    with pytest.raises(SpecError, match="3 groups cannot split the 8 rails"):
        plan(spec_from_dict(spec), catalog)
    with pytest.raises(SpecError, match="spine_groups"):
        spec_from_dict(
            {"cluster": {"gpus": 64}, "fabric": {"topology": "matrix", "spine_groups": 2}}
        )


def test_b300_ethernet_1su_bills_800g_links_on_800g_parts(catalog: Catalog) -> None:
    built = build(spec_from_dict(b300_ethernet(512)), catalog)
    assert check(built.design, catalog) == []
    assert_no_part_slower_than_its_link(built.design, catalog)
    kind = {lk.id: lk.kind for lk in built.design.links}
    media = Counter(c.media for c in built.design.cables if kind[c.link_id] == "leaf-spine")
    assert media and "aec-osfp-800g-twin" not in media


# -- NVIDIA DGX SuperPOD B300, Quantum-X800 XDR InfiniBand, Table 3 --------------------------

# NVIDIA, "NVIDIA SuperPOD with DGX B300 Systems, NVIDIA Quantum-X800 InfiniBand switching and
# AC Power Reference Architecture" (RA-11339-001), "DGX SuperPOD Architecture", Table 3
# "Example Compute Fabric Components for DGX SuperPOD Counts", every row it prints:
# (SU, nodes, GPUs, leaf, spine, node-leaf cables, leaf-spine cables). At 18 SU the table prints
# 9,216 GPUs beside 1,296 nodes and 10,368 node-leaf cables; 1,296 DGX B300 of 8 GPUs are
# 10,368 GPUs (9,216 is 1,152 nodes), so the row is checked at 10,368 and the printed figure
# kept beside it.
B300_XDR_TABLE_3 = [
    (1, 72, 576, 8, 4, 576, 576),
    (2, 144, 1152, 16, 8, 1152, 1152),
    (4, 288, 2304, 32, 18, 2304, 2304),
    (8, 576, 4608, 64, 36, 4608, 4608),
    (18, 1296, 10368, 144, 72, 10368, 10368),  # GPUs printed as 9216
]


@pytest.mark.parametrize(("sus", "nodes", "gpus", "leaf", "spine", "nl", "ls"), B300_XDR_TABLE_3)
def test_b300_xdr_superpod_table_3(
    catalog: Catalog, sus: int, nodes: int, gpus: int, leaf: int, spine: int, nl: int, ls: int
) -> None:
    """`railplan plan --gpus N --node dgx-b300 --switch q3400 --topology roft`: a Q3400 leaf
    is 72 x 800G down and 72 up, so an SU is 72 nodes (one leaf per rail); the spines are the
    fewest dividing a leaf's 72 uplinks whose 144 ports hold every leaf: 18 at 4 SU (16 would
    not spread 72 uplinks evenly), 36 at 8 SU, as NVIDIA prints them."""
    d = plan(make_spec(gpus, "dgx-b300", switches=["q3400"]), catalog)
    assert (d.sizing.su_nodes, d.sizing.sus, len(d.nodes), d.gpus) == (72, sus, nodes, gpus)
    assert d.sizing.tiers == 2
    assert d.switch_counts() == {"leaf": leaf, "spine": spine, "core": 0, "total": leaf + spine}
    links = d.link_counts()
    assert (links["node_leaf"], links["leaf_spine"]) == (nl, ls)
    assert {lk.rate_gbps for lk in d.links} == {800}
    assert check(d, catalog) == []


# -- no billed part slower than its link ----------------------------------------------------


def assert_no_part_slower_than_its_link(d: Design, catalog: Catalog) -> None:
    rate = {lk.id: lk.rate_gbps for lk in d.links}
    for cab in d.cables:
        part = catalog.cables.get(cab.media)
        if part is not None and not part.optical:
            assert part.speed_gbps >= rate[cab.link_id], (cab.id, part.id, rate[cab.link_id])
        for name in (cab.transceiver_a, cab.transceiver_b):
            if name:
                assert catalog.transceivers[name].port_speed_gbps >= rate[cab.link_id]


EXAMPLE_FILES = sorted(EXAMPLES.glob("*.yaml"))
#: examples above this many GPUs are billed with RAILPLAN_SLOW=1 (tens of thousands of links)
FAST_GPUS = 2048


def _example_id(path: object) -> str:
    return getattr(path, "stem", str(path))


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=_example_id)
def test_no_example_bills_a_part_slower_than_its_link(catalog: Catalog, path) -> None:  # type: ignore[no-untyped-def]
    spec = load_spec(path)
    if spec.cluster.gpus > FAST_GPUS and not SLOW:
        pytest.skip(f"{spec.cluster.gpus} GPUs: RAILPLAN_SLOW=1 bills it")
    built = build(spec, catalog, time_limit_s=None if SLOW else 1.0)
    assert_no_part_slower_than_its_link(built.design, catalog)


@pytest.mark.parametrize("case", SAMPLED, ids=lambda c: "-".join(str(x) for x in c[:4]))
def test_no_sweep_case_bills_a_part_slower_than_its_link(catalog: Catalog, case: tuple) -> None:  # type: ignore[type-arg]
    family, switch, gpus, node, _plant = case
    spec = make_spec(gpus, node, topology=family, switches=[switch])
    built = build(spec, catalog, time_limit_s=None if SLOW else 1.0)
    assert_no_part_slower_than_its_link(built.design, catalog)


# -- the acceptance commands, as a user types them ------------------------------------------


@pytest.mark.parametrize(
    ("node", "switch", "topology", "leaf", "spine"),
    [("gb200-nvl72", "qm9700", (), 20, 16), ("gb300-nvl72", "q3400", ("--topology", "roft"), 8, 4)],
)
def test_plan_command_for_nvl72(
    cli, node: str, switch: str, topology: tuple[str, ...], leaf: int, spine: int
) -> None:  # type: ignore[no-untyped-def]
    res = cli("plan", "--gpus", "576", "--node", node, "--switch", switch, *topology)
    assert res.code == 0, res.err
    assert f"{leaf} leaf, {spine} spine" in res.out
    assert "NVLink domains" in res.out and "8 of 18 nodes" in res.out and "bill" in res.out


def test_plan_without_topology_on_gb300_q3400_is_the_cheaper_rail_only(cli) -> None:  # type: ignore[no-untyped-def]
    """576 GB300 GPUs are 144 trays: one 144-port Q3400 per NIC rail holds every tray, so the
    advisor's answer is a rail-only fabric of 4 switches (cross-rail traffic crosses the NVL72's
    NVLink); NVIDIA's two-tier ROFT (8 leaves, 4 spines: above) is `--topology roft`, and
    `recommend` states what it costs more."""
    res = cli("plan", "--gpus", "576", "--node", "gb300-nvl72", "--switch", "q3400")
    assert res.code == 0, res.err
    assert "rail-only fabric" in res.out and "4 leaf, 0 spine" in res.out
    assert "--topology roft plans a ROFT" in res.err
    rec = cli("recommend", "--gpus", "576", "--node", "gb300-nvl72", "--switch", "q3400")
    assert rec.code == 0, rec.err
    assert "recommended: rail-only q3400" in rec.out
    assert re.search(r"the ROFT reference \(roft q3400 1:1\) costs \$[\d,]+ more", rec.out)


def test_plan_command_for_b300_ethernet_16_su(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli(
        "plan", "--gpus", "8192", "--node", "hgx-b300-8x2x400g", "--switch", "sn5600",
        "--topology", "roft", "--planes", "2", "--set", "fabric.leaf.up_gbps=800", "--set", "fabric.spine_groups=2",
        "--no-layout", "--json",
    )  # fmt: skip
    assert res.code == 0, res.err
    out = json.loads(res.out)
    assert out["tiers"] == 2 and out["spine_groups"] == 2
    assert out["switches"] == {"leaf": 256, "spine": 128, "core": 0, "total": 384}
    assert out["links"]["leaf_spine"] == 8192


# -- Ethernet reference fabrics with published counts ---------------------------------------


# Asterfusion, "Middle-to-Large Scale AI Compute Backend Fabric Configuration Guide" (a 400G
# GPU backend): 64 compute nodes of 4 GPUs, "6 CX864E-N: 2 Spine nodes and 4 Leaf nodes", NIC N
# to leaf N; and "Compute Backend Fabric Configuration Guide" (small scale, rail-only): 32
# nodes of 4 GPUs on 4 CX732Q-N leaves.
@pytest.mark.parametrize(
    ("gpus", "switch", "topology", "leaf", "spine"),
    [(256, "cx864e-n", "roft", 4, 2), (128, "cx732q-n", "rail-only", 4, 0)],
)
def test_asterfusion_backend_guides(
    catalog: Catalog, gpus: int, switch: str, topology: str, leaf: int, spine: int
) -> None:
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "gpus_per_node": 4, "nic": "cx7-400g", "nics_per_node": 4},
            "fabric": {"switches": [switch], "topology": topology},
        }
    )
    d = plan(spec, catalog)
    assert d.switch_counts() == {"leaf": leaf, "spine": spine, "core": 0, "total": leaf + spine}
    assert check(d, catalog) == []


# Juniper, "AI Data Center Network with Juniper Apstra, NVIDIA GPUs, and WEKA Storage" JVD:
# "Calculating the number of leaf and spine nodes, Servers, and GPUs in a rail optimized
# architecture" (a stripe has one leaf per GPU of a server, 8; a 1:1 leaf takes half its ports
# down, so a stripe holds ports / 2 servers) and "Scaling", Table 18 "Fabric Scaling - Devices
# and Positioning": Medium, 2048-8192 GPUs, QFX5240-64CD/QFX5241-64CD (51.2T, 64 x 800GbE)
# as leaf and spine, "a 3-stage, rail-based fabric design [that] provides physical
# connectivity to 16 Stripes from 64 Spines ... maintaining a 1:1 subscription"; Small, "a
# minimum of 4 Spines should be deployed, even in a single-stripe fabric". The catalog's
# QFX5241-64OD is the OSFP model of the same 64 x 800G port table. The table's "1024 leaf
# nodes" is not what 16 stripes of 8 leaves make (128); 1,024 is the server count of 8,192
# GPUs, so the test holds the stripes and spines, which agree with the JVD's own arithmetic.
JUNIPER_JVD_8192 = {
    "name": "juniper-jvd-medium-8192",
    "cluster": {"gpus": 8192, "node": "mi300x-8x400g"},
    "fabric": {
        "topology": "roft",
        "switches": ["qfx5241-64od"],
        "oversubscription": "1:1",
        "su_nodes": 64,
        "min_spines": 4,
    },
}


@pytest.mark.parametrize("node", ["mi300x-8x400g", "hgx-h100-8x400g"])
@pytest.mark.parametrize(("gpus", "stripes", "spines"), [(512, 1, 4), (8192, 16, 64)])
def test_juniper_ai_jvd_scaling_on_tomahawk5(
    catalog: Catalog, node: str, gpus: int, stripes: int, spines: int
) -> None:
    spec = json.loads(json.dumps(JUNIPER_JVD_8192))
    spec["cluster"] = {"gpus": gpus, "node": node}
    d = plan(spec_from_dict(spec), catalog)
    # a stripe: 8 leaves (one per rail), 64 servers (128 x 400G ports / 2)
    assert (d.sizing.su_nodes, d.sizing.sus) == (64, stripes)
    assert d.switch_counts() == {
        "leaf": 8 * stripes,
        "spine": spines,
        "core": 0,
        "total": 8 * stripes + spines,
    }
    assert d.sizing.tiers == 2 and d.sizing.oversubscription == "1:1"
    links = d.link_counts()
    assert links["node_leaf"] == links["leaf_spine"] == gpus  # 400G each way, 1:1
    assert {lk.rate_gbps for lk in d.links} == {400}
    assert check(d, catalog) == []


def test_a_grouped_spine_reached_across_groups_is_caught(catalog: Catalog) -> None:
    """check() re-derives the rail groups: a leaf wired to the other group's spine fails."""
    import dataclasses

    d = plan(spec_from_dict(b300_ethernet(8192)), catalog)
    sw = d.switch_by_id()
    other = next(s.id for s in d.switches if s.role == "spine" and s.group == "spine-group-2")
    links = list(d.links)
    i = next(
        k for k, lk in enumerate(links)
        if lk.kind == "leaf-spine" and sw[lk.a_device].rail == 0 and sw[lk.b_device].plane == 0
    )  # fmt: skip
    links[i] = dataclasses.replace(links[i], b_device=other)
    broken = dataclasses.replace(d, links=tuple(links))
    assert any("rail group" in p or "uneven" in p for p in check(broken, catalog))


# -- radix 40: Quantum QM8700 HDR ----------------------------------------------------------


@pytest.mark.parametrize(
    ("planes", "counts"),
    [
        (1, {"leaf": 640, "spine": 800, "core": 320, "total": 1760}),
        (2, {"leaf": 640, "spine": 640, "core": 400, "total": 1680}),
    ],
)
def test_radix40_roft_at_12800_gpus_near_its_bound(
    catalog: Catalog, planes: int, counts: dict[str, int]
) -> None:
    """1,600 DGX A100 (8 x HDR 200G) on 40-port QM8700: a 1:1 leaf has 20 down and 20 up
    ports, so 12,800 NIC ports take 640 leaves, and a 3-tier fabric needs at least 640
    spines and 320 cores (1,600). One plane: a 20-down-port spine holds 2 SUs of 8 leaves
    (16 of 20 ports), 40 pods of 20 spines. Two planes of 4 rails: a pod holds 5 SUs (20
    leaves, every spine port), 16 pods a plane; each spine position's 320 core links take
    10 cores of 32 ports. Both within 10% of the bound.
    """
    d = plan(make_spec(12800, "dgx-a100", switches=["qm8700"], planes=planes), catalog)
    assert d.switch_counts() == counts and d.sizing.tiers == 3
    assert d.sizing.lower_bound_switches == 1600
    assert counts["total"] <= 1.1 * d.sizing.lower_bound_switches
    links = d.link_counts()
    assert links["node_leaf"] == links["leaf_spine"] == links["spine_core"] == 12800
    assert check(d, catalog) == []


def test_qm8700_is_a_40_port_hdr_switch(catalog: Catalog) -> None:
    """NVIDIA QM87xx user manual: 40 QSFP56 ports of HDR 200 Gb/s (80 HDR100 with splitters)."""
    sw = catalog.switch("qm8700")
    assert sw.protocol == "infiniband" and sw.form_factor == "qsfp56"
    assert sw.radix(200) == 40 and sw.radix(100) == 80 and sw.radix(400) == 0
    assert sw.price_usd.source.kind == "reseller" and sw.price_usd.low < sw.price_usd.high
    node = catalog.node("dgx-a100")
    assert node.gpus == 8 and node.nics == 8 and catalog.nic(node.nic).port_speed_gbps == 200


@pytest.mark.skipif(not SLOW, reason="a 12,800-GPU recommend search: set RAILPLAN_SLOW=1")
def test_radix40_recommendation_within_10pct_of_its_bound(catalog: Catalog) -> None:
    """recommend at 12,800 GPUs of DGX A100 on QM8700 takes the two-plane ROFT (1,680
    switches against the 1,600 bound). pairs_full 0.8: under the ECMP routing railplan models
    for ROFT, no 3-tier candidate has every pair test at full rate."""
    from railplan.advise import recommend

    spec = make_spec(12800, "dgx-a100", switches=["qm8700"], topology="auto")
    rec = recommend(spec, catalog, {"pairs_full": 0.8}, workers=2)
    best = rec.recommended
    assert best is not None and best.meets
    assert best.summary["switches"]["total"] == 1680
    assert best.summary["switches"]["total"] <= 1.1 * best.summary["lower_bound_switches"]


def test_readme_catalog_table_names_every_switch_node_and_nic(catalog: Catalog) -> None:
    """The README's "Bundled catalog" table stays in step with the bundled catalog."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Bundled catalog", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`([a-z0-9][a-z0-9.-]*)`", table))
    for kind, ids in (("switch", catalog.switches), ("node", catalog.nodes), ("nic", catalog.nics)):
        missing = sorted(set(ids) - named)
        assert not missing, f"README catalog table lacks {kind}s {missing}"
    counts = re.search(r"(\d+) transceivers .* and (\d+) cables", table)
    assert counts and (int(counts[1]), int(counts[2])) == (
        len(catalog.transceivers),
        len(catalog.cables),
    )


def test_gb200_example_plans_one_rack_per_nvl72(catalog: Catalog) -> None:
    """examples/gb200-nvl72-576.yaml: the acceptance's GB200 example, listed in the examples page."""
    path = EXAMPLES / "gb200-nvl72-576.yaml"
    built = build(load_spec(path), catalog)
    d = built.design
    assert check(d, catalog) == [] and built.bom is not None
    assert built.bom.totals.links == len(d.links) == 576 + 20 * 32
    assert d.switch_counts() == {"leaf": 20, "spine": 16, "core": 0, "total": 36}
    place = {p.device: p.rack for p in d.placements}
    per_rack = Counter(place[n.id] for n in d.nodes)
    assert len(per_rack) == 8 and set(per_rack.values()) == {18}
    assert_no_part_slower_than_its_link(d, catalog)
    page = (ROOT / "docs" / "reference" / "examples.md").read_text(encoding="utf-8")
    assert "`examples/gb200-nvl72-576.yaml`" in page


def test_recommend_keeps_the_nvl72_rack_facts_the_spec_leaves_out(catalog: Catalog) -> None:
    """A candidate is the user's spec with its fabric changed, not every default written in:
    the GB200 example (nodes_per_rack left out) gets a recommendation, one rack per NVL72."""
    from railplan.advise import recommend
    from railplan.topology.shape import rack_scale_spec

    spec = load_spec(EXAMPLES / "gb200-nvl72-576.yaml")
    rec = recommend(spec, catalog, workers=1)
    assert rec.recommended is not None
    assert not any("nodes_per_rack" in str(r) for r in rec.rejected)
    chosen = rack_scale_spec(rec.spec(spec), catalog)
    assert chosen.layout.nodes_per_rack == 18
    assert check(plan(chosen, catalog), catalog) == []
