"""PCIe links of every NIC and GPU at their nominal width (NICs: and speed), from lspci -vvv.

A NIC trained at x8 in a x16 slot is the kernel's "limited by ... x8 link" case (the message
pcie_print_link_status() logs for mlx5 and bnxt_en): its RDMA rate is capped below line rate.
GPUs lower their link speed when idle, so a GPU at 2.5GT/s passes and only its width counts.
"""

from __future__ import annotations

import json
import shutil

from railplan.field.parse_node import parse_lspci_links
from tests.conftest import EXAMPLES
from tests.test_grade import lspci

FIELD = EXAMPLES / "field"


def test_parser_judges_nic_speed_and_width_and_gpu_width_only():
    links = parse_lspci_links(lspci(False, nics=2, narrow_nic=1), "lspci.txt")
    assert [(x.kind, x.below) for x in links] == [
        ("nic", False),
        ("gpu", False),  # idle at 2.5GT/s, width x16: nominal
        ("nic", True),  # x8 of x16
        ("gpu", False),
    ]
    text = "0000:98:00.0 3D controller: NVIDIA\n\tLnkCap:\tPort #0, Speed 32GT/s, Width x16\n"
    text += "\tLnkSta:\tSpeed 32GT/s, Width x8 (downgraded)\n"
    (gpu,) = parse_lspci_links(text, "x")
    assert gpu.below and gpu.text() == "0000:98:00.0 (gpu) 32GT/s x8 of 32GT/s x16"
    # bridges, LnkCap2/LnkSta2 and devices without a status are not links to judge
    assert parse_lspci_links("00:01.0 PCI bridge: x\n\tLnkCap:\tSpeed 8GT/s, Width x4\n", "x") == ()


def test_grade_names_the_narrow_nic_and_passes_the_healthy_node(cli, tmp_path):
    results = tmp_path / "results"
    shutil.copytree(FIELD / "results", results)
    path = results / "NODE-node0001" / "lspci.txt"
    text = path.read_text()
    nic = "0000:1b:00.0 Infiniband controller"
    head, tail = text.split(nic, 1)
    # the NIC's LnkSta (the second line after its header) trained at x8
    path.write_text(
        head + nic + tail.replace("Speed 32GT/s, Width x16\n", "Speed 32GT/s, Width x8\n", 1)
    )
    r = cli("grade", str(FIELD / "design.json"), "--results", str(results), "--json")
    assert r.code == 1
    out = json.loads(r.out)
    pcie = {x["test_id"]: x for x in out["results"] if x["metric"] == "pcie_below_nominal"}
    assert pcie["NODE-node0001"]["status"] == "fail" and pcie["NODE-node0001"]["measured"] == 1
    assert "0000:1b:00.0 (nic) 32GT/s x8 of 32GT/s x16" in pcie["NODE-node0001"]["detail"]
    assert pcie["NODE-node0002"]["status"] == "pass" and pcie["NODE-node0002"]["measured"] == 0
    assert pcie["NODE-node0002"]["detail"].startswith("0 of 16 links below nominal (8 NIC, 8 GPU)")
    healthy = cli("grade", str(FIELD / "design.json"), "--results", str(FIELD / "results"))
    assert healthy.code == 0
