"""Published fabrics reproduced: railplan's switch and link counts against the figures the
operators publish (the examples cite their sources; the numbers here are the published ones).
"""

from __future__ import annotations

import os
from collections import Counter
from fractions import Fraction

import pytest

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.pipeline.build import build
from railplan.pipeline.plan import plan
from railplan.solve.switch_choice import nominal_pricer
from railplan.spec import load_spec
from railplan.validate import check
from railplan.validate.wiring import bandwidth
from tests.conftest import EXAMPLES

SLOW = os.environ.get("RAILPLAN_SLOW") == "1"


def example(name: str, *overrides: str) -> Design:
    return plan(load_spec(EXAMPLES / f"{name}.yaml", list(overrides)))


# NVIDIA DGX SuperPOD H100 reference architecture (RA-11333-001 V11), Table 4 "Compute fabric
# component count": SU count, node count, GPU count, leaf and spine switches, "compute + UFM"
# cables and spine-leaf cables. Footnote: "a DGX system must be removed to accommodate for
# UFM connectivity"; the compute + UFM count is every DGX port plus 4 UFM ports.
SUPERPOD_TABLE_4 = [
    (1, 31, 248, 8, 4, 252, 256),
    (2, 63, 504, 16, 8, 508, 512),
    (3, 95, 760, 24, 16, 764, 768),
    (4, 127, 1016, 32, 16, 1020, 1024),
]


@pytest.mark.parametrize(
    ("sus", "nodes", "gpus", "leaf", "spine", "compute", "spine_leaf"), SUPERPOD_TABLE_4
)
def test_superpod_h100_table_4(
    sus: int, nodes: int, gpus: int, leaf: int, spine: int, compute: int, spine_leaf: int
) -> None:
    d = example("superpod-h100-4su", f"cluster.gpus={gpus}")
    links = d.link_counts()
    assert (d.sizing.sus, len(d.nodes), d.gpus) == (sus, nodes, gpus)
    assert d.switch_counts() == {"leaf": leaf, "spine": spine, "core": 0, "total": leaf + spine}
    assert links["node_leaf"] + links["device_leaf"] == compute
    assert links["device_leaf"] == 4 and links["leaf_spine"] == spine_leaf
    (ufm,) = d.devices
    assert ufm.purpose == "ufm" and ufm.su == sus - 1 and ufm.index == nodes  # the freed slot
    assert check(d) == []


def test_superpod_a_128th_dgx_opens_a_fifth_su() -> None:
    d = example("superpod-h100-4su", "cluster.gpus=1024")
    assert d.sizing.sus == 5 and d.switch_counts()["leaf"] == 40
    assert any("plan 1 fewer node(s)" in note for note in d.sizing.notes)


def test_superpod_builds_and_bills_the_ufm_links(catalog: Catalog) -> None:
    built = build(load_spec(EXAMPLES / "superpod-h100-4su.yaml"), catalog)
    assert check(built.design, catalog) == []
    assert built.bom is not None
    parts = {line.part: line.count for line in built.bom.lines if line.kind == "transceiver"}
    # RA Table 8: 508 DGX twin-port transceivers (flat top, MMA4Z00-NS-FLT), 4 single-port
    # 400G UFM transceivers (980-9I51S-00NS00) and 1,536 switch twin-port transceivers (finned,
    # one in each of the 48 x 32 cages); railplan puts copper where racks are close, and a
    # twin-port DAC or ACC takes the place of the modules of the cages it joins
    assert parts["osfp-400g-sr4"] == 4
    assert parts["osfp-rhs-800g-2xsr4"] == 508
    copper_cages = 0
    for line in built.bom.lines:
        part = catalog.cables.get(line.part)
        if part is not None and part.kind in ("dac", "acc"):
            copper_cages += line.count * (2 if part.end_a == part.end_b == "osfp" else 1)
    assert parts["osfp-800g-2xsr4"] + copper_cages == 48 * 32 == 1536
    ufm_cables = [c for c in built.design.cables if c.link_id.startswith("DL")]
    assert len(ufm_cables) == 4 and all("UFM-P" in c.label_a for c in ufm_cables)
    placed = {p.device for p in built.design.placements}
    assert "ufm" in placed


# Alibaba HPN (SIGCOMM 2024): 5.1 "128 active + 8 backup 200Gbps downstream ports and 60
# upstream 400Gbps ports" per ToR; Figure 7: 16 ToRs and 136 hosts (1,024 active + 64 backup
# GPUs) per segment, 15 segments per pod, 60 aggregation switches per plane with 120 x 400G
# down and 8 x 400G up; 6.2: 15:1 at the aggregation-core layer, 15K GPUs per pod.
@pytest.fixture(scope="module")
def hpn() -> Design:
    return example("hpn-pod")


def test_hpn_pod_counts(hpn: Design) -> None:
    assert hpn.gpus == 15_360 and hpn.active_nodes == 15 * 128
    assert len(hpn.nodes) - hpn.active_nodes == 15 * 8  # backup hosts
    assert hpn.sizing.sus == 15
    assert hpn.switch_counts() == {"leaf": 15 * 16, "spine": 2 * 60, "core": 0, "total": 360}
    links = hpn.link_counts()
    assert links["node_leaf"] == 15 * 136 * 16  # every host port, active and backup
    assert links["leaf_spine"] == 15 * 16 * 60
    assert check(hpn) == []


def test_hpn_tiers_as_published(hpn: Design) -> None:
    leaf, spine = hpn.sizing.tier_sizing
    assert (leaf.down_gbps, leaf.up_gbps, leaf.down_ports, leaf.up_ports) == (200, 400, 136, 60)
    assert (spine.down_gbps, spine.down_ports, spine.up_ports) == (400, 120, 8)
    down_bw, up_bw = bandwidth(hpn)
    for sw in hpn.switches:
        if sw.role == "leaf":  # 136 x 200G over 60 x 400G: 17:15 with backups, 16:15 without
            assert Fraction(down_bw[sw.id], up_bw[sw.id]) == Fraction(17, 15)
            active = 128 * 200
            assert Fraction(active, up_bw[sw.id]) == Fraction(16, 15)  # the paper's 1.067:1
        else:
            assert down_bw[sw.id] == 120 * 400 and sw.radix - 120 == 8
    assert Fraction(120, 8) == Fraction(15, 1)


def test_hpn_dual_tor_dual_plane(hpn: Design) -> None:
    switches = hpn.switch_by_id()
    leaf_of = {
        (lk.a_device, lk.a_port): switches[lk.b_device]
        for lk in hpn.links
        if lk.kind == "node-leaf"
    }
    node = hpn.nodes[0].id
    for nic in range(8):
        a, b = leaf_of[(node, 2 * nic)], leaf_of[(node, 2 * nic + 1)]
        assert a.id != b.id and (a.plane, b.plane) == (0, 1)  # port 0 and port 1 apart
        assert (a.su, a.rail) == (b.su, b.rail)  # the same segment and rail: a ToR pair
    assert len({sw.id for sw in leaf_of.values() if sw.su == 0}) == 16


@pytest.mark.skipif(not SLOW, reason="bills 47,040 links (about 20 s); RAILPLAN_SLOW=1 runs it")
def test_hpn_pod_bills(hpn: Design, catalog: Catalog) -> None:
    bill = nominal_pricer(catalog)(hpn)
    assert bill.totals.switches == 360 and bill.totals.cost_usd > 0


# NVIDIA DGX BasePOD (RA-11127-001 V5), Table 4.2: two QM9700 switches at 4 and 8 DGX nodes,
# "NDR DAC for switch ISL" 8 at 4 nodes and 16 at 8 nodes (twin-port 2 x 400G DACs).
@pytest.mark.parametrize(("nodes", "isl_links", "isl_dacs"), [(4, 16, 8), (8, 32, 16)])
def test_basepod_isl(catalog: Catalog, nodes: int, isl_links: int, isl_dacs: int) -> None:
    spec = load_spec(EXAMPLES / "basepod-8node.yaml", [f"cluster.gpus={8 * nodes}"])
    built = build(spec, catalog)
    d = built.design
    assert d.switch_counts() == {"leaf": 2, "spine": 0, "core": 0, "total": 2}
    links = d.link_counts()
    assert links["node_leaf"] == 8 * nodes and links["leaf_leaf"] == isl_links
    assert check(d, catalog) == []
    media = {c.link_id: c.media for c in d.cables}
    isl = Counter(media[lk.id] for lk in d.links if lk.kind == "leaf-leaf")
    assert isl == {"dac-osfp-800g-twin": isl_links}  # one twin DAC carries two links
    assert built.bom is not None
    dacs = sum(ln.count for ln in built.bom.lines if ln.part == "dac-osfp-800g-twin")
    assert dacs == isl_dacs
    # Table 4.2: 2x400G OSFP flat-top multimode transceivers on the DGX (32 at 8 nodes, one per
    # cage) and finned-top ones on the switches (32), two part numbers
    per_side = {ln.part: ln.count for ln in built.bom.lines if ln.kind == "transceiver"}
    assert per_side == {"osfp-rhs-800g-2xsr4": 4 * nodes, "osfp-800g-2xsr4": 4 * nodes}
    numbers = {ln.part_number for ln in built.bom.lines if ln.kind == "transceiver"}
    assert numbers == {"MMA4Z00-NS-FLT", "MMA4Z00-NS"}
