"""Node checks follow the NIC vendor: seed003-matrix (Broadcom bnxt_re) uses Broadcom's tools.

Every script ``railplan testplan`` writes for examples/seed003-matrix.yaml is scanned for the
NVIDIA-only NIC and fabric tools; the node probe is then run against stand-ins that answer as
Broadcom's tools do (``niccli -dev <PCI address> get_qos`` as AMD's MI300X networking guide
prints it for a BCM957608, the bnxt_re congestion-control configfs), and without niccli, where
PFC is "not measured" (``na``) and the grader reports the check missing, never a pass.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from railplan.render.scripts_vendor import node_probe, vendor_key
from tests.conftest import EXAMPLES

#: NVIDIA-only NIC/fabric tools and mlx5-only paths (the GPU's nvidia-smi is the GPU vendor's)
NVIDIA_ONLY = re.compile(
    r"\b(mlnx_qos|ibdev2netdev|mlxlink|mlxconfig|mlxreg|mlxfwmanager|mlxprivhost|mget_temp|"
    r"flint|mstflint|ibdiagnet|ibqueryerrors|ofed_info|show_gids|cma_roce_mode|mlnx_tune)\b"
    r"|\bmst (start|status)\b|/ecn/roce_np/|\bmlx5_\d"
)


@pytest.fixture(scope="module")
def matrix_plan(tmp_path_factory):
    """``railplan testplan examples/seed003-matrix.yaml -o DIR``, run once for the module."""
    from railplan.cli.app import main

    out = tmp_path_factory.mktemp("matrix")
    try:
        main(["testplan", str(EXAMPLES / "seed003-matrix.yaml"), "-o", str(out)])
    except SystemExit as exc:
        assert not exc.code
    return out


def test_no_nvidia_only_tool_in_any_seed003_matrix_script(matrix_plan):
    scripts = sorted(p for p in (matrix_plan / "scripts").rglob("*") if p.is_file())
    assert len(scripts) > 15
    found = {
        (p.relative_to(matrix_plan).as_posix(), m.group(0))
        for p in scripts
        for m in NVIDIA_ONLY.finditer(p.read_text(encoding="utf-8"))
    }
    assert found == set()
    # the commands the plan prints for a technician, too
    commands = [ln for ln in (matrix_plan / "testplan.txt").read_text().splitlines() if "$ " in ln]
    assert commands and not [ln for ln in commands if NVIDIA_ONLY.search(ln)]


def test_seed003_matrix_node_checks_use_broadcom_tools(matrix_plan):
    probe = (matrix_plan / "scripts" / "node_probe.sh").read_text()
    assert 'niccli -dev "$pci" get_qos' in probe and "PFC enabled:" in probe
    assert "/kernel/config/bnxt_re/$dev" in probe and "cc/ecn_enable" in probe
    lib = (matrix_plan / "scripts" / "lib.sh").read_text()
    assert "DEVICES=(bnxt_re_bond0 bnxt_re_bond1 bnxt_re_bond2 bnxt_re_bond3)" in lib
    text = (matrix_plan / "testplan.txt").read_text()
    assert "niccli -dev" in text and "get_qos" in text and "rdma link show" in text
    # an Ethernet fabric has no ibdiagnet step, and no mlx5 counter probe for bnxt_re
    assert not (matrix_plan / "scripts" / "linkq_probe.sh").exists()


def test_nvidia_designs_keep_the_mlx5_probe():
    assert vendor_key("NVIDIA") == vendor_key("") == "nvidia"
    assert vendor_key("Broadcom") == "broadcom" and vendor_key("AMD") == "other"
    assert "mlnx_qos -i" in node_probe("NVIDIA") and "niccli" not in node_probe("NVIDIA")
    amd = node_probe("AMD")
    assert "dcb pfc show dev" in amd and not NVIDIA_ONLY.search(amd) and "niccli" not in amd


# -- the Broadcom probe against stand-in tools ------------------------------------------------------

#: ``niccli -dev 1 get_qos`` on a BCM957608 (AMD Instinct multi-node networking guide)
GET_QOS = """IEEE 8021QAZ ETS Configuration TLV:
         PRIO_MAP: 0:0 1:0 2:0 3:1 4:0 5:0 6:0 7:2
         TC Bandwidth: 50% 50% 0%
         TSA_MAP: 0:ets 1:ets 2:strict
IEEE 8021QAZ PFC TLV:
         PFC enabled: 3
IEEE 8021QAZ APP TLV:
         APP#0:
         Priority: 7
         Sel: 5
         DSCP: 48
"""

FAKES = {
    "lspci": "#!/bin/sh\nprintf '00:01.0 PCI bridge: x\\n\\t\\tACSCtl:\\tSrcValid- TransBlk-\\n'\n"
    "printf '18:00.0 Ethernet controller: x\\n\\t\\tLnkCap:\\tPort #0, Speed 32GT/s, Width x16\\n'\n"
    "printf '\\t\\tLnkSta:\\tSpeed 32GT/s, Width x16\\n'\n",
    "sudo": '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n',
    "lsmod": "#!/bin/sh\nprintf 'Module Size Used by\\nnvidia_peermem 16384 0\\n'\n",
    "ibstat": '#!/bin/sh\nprintf "CA \'%s\'\\n\\tPort 1:\\n\\t\\tState: Active\\n\\t\\tRate: 400\\n" "$1"\n',
    "ibv_devinfo": '#!/bin/sh\nprintf "hca_id:\\t%s\\n\\tport:\\t1\\n\\t\\t\\tactive_mtu:\\t\\t4096 (5)\\n" "$2"\n',
    "nvidia-smi": """#!/bin/sh
printf '\\tGPU0\\tGPU1\\tNIC0\\tNIC1\\tCPU Affinity\\n'
printf 'GPU0\\t X \\tNV18\\tPIX\\tSYS\\t0-55\\nGPU1\\tNV18\\t X \\tSYS\\tPIX\\t0-55\\n'
printf '\\nNIC Legend:\\n\\n  NIC0: bnxt_re0\\n  NIC1: bnxt_re1\\n'
""",
    # answers only for the PCI address of a bnxt_re device, as niccli -dev does
    "niccli": '#!/bin/sh\n[ "$1" = -dev ] && [ "$3" = get_qos ] || exit 1\n'
    'case "$2" in 0000:4*) ;; *) exit 1;; esac\ncat <<EOF\n' + GET_QOS + "EOF\n",
}


def _probe(tmp_path: Path, tools: dict[str, str]) -> tuple[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, text in tools.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "readlink", "id", "tail", "printf"):
        if (found := shutil.which(tool)) is not None:
            (bin_dir / tool).symlink_to(found)
    sysfs = tmp_path / "sys"
    for k in range(2):
        dev = f"bnxt_re{k}"
        pci = sysfs / "devices" / "pci0000:40" / f"0000:4{k}:00.0"
        (pci / "net" / f"ens{k}f0np0").mkdir(parents=True)
        ib = sysfs / "class" / "infiniband" / dev
        (ib / "ports" / "1" / "gid_attrs" / "types").mkdir(parents=True)
        (ib / "ports" / "1" / "gid_attrs" / "types" / "3").write_text("RoCE v2\n")
        (ib / "device").symlink_to(pci)
        cc = sysfs / "kernel" / "config" / "bnxt_re" / dev / "ports" / "1" / "cc"
        cc.mkdir(parents=True)
        (cc / "ecn_enable").write_text("0x1\n")
    probe = tmp_path / "node_probe.sh"
    probe.write_text(node_probe("Broadcom"))
    out = tmp_path / "NODE-node0001"
    env = {"PATH": str(bin_dir), "SYSFS": str(sysfs), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(probe), str(out), "3", "3", "400", "4096", "bnxt_re0", "bnxt_re1"],
        env=env,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip().splitlines()[-1], (out / "roce.txt").read_text()


def test_broadcom_probe_reads_pfc_with_niccli_and_ecn_from_configfs(tmp_path):
    verdict, roce = _probe(tmp_path, FAKES)
    assert roce.splitlines() == [
        "bnxt_re0 netdev=ens0f0np0 gid3=RoCE v2 pfc=1 ecn=1",
        "bnxt_re1 netdev=ens1f0np0 gid3=RoCE v2 pfc=1 ecn=1",
    ]
    assert verdict.startswith("VERDICT OK") and "roce_ok=2/2" in verdict


def test_broadcom_probe_without_niccli_says_not_measured(tmp_path):
    tools = {k: v for k, v in FAKES.items() if k != "niccli"}
    verdict, roce = _probe(tmp_path, tools)
    assert all("pfc=na ecn=1" in ln for ln in roce.splitlines())
    # a missing tool leaves PFC not measured: it does not fail the node
    assert verdict.startswith("VERDICT OK") and "roce_ok=2/2" in verdict
    assert "not measured: pfc_lossless (niccli, Broadcom, not installed)" in verdict


def test_grader_reads_na_as_not_measured(tmp_path):
    """roce.txt with pfc=na: pfc_lossless is missing (not measured), ecn_enabled still judged."""
    from railplan.design import design_from_json
    from railplan.field.measure import Measure
    from railplan.field.names import NameMap
    from railplan.testplan.expectation import Expectation

    design = design_from_json((EXAMPLES / "field" / "design.json").read_text(encoding="utf-8"))
    path = tmp_path / "roce.txt"
    path.write_text("".join(f"mlx5_{k} netdev=e{k} gid3=RoCE v2 pfc=na ecn=1\n" for k in range(8)))
    measure = Measure(design, NameMap(design))
    pfc = Expectation("NODE-node0001", "node", ("node0001",), "pfc_lossless", 8, 8, "ports")
    ecn = Expectation("NODE-node0001", "node", ("node0001",), "ecn_enabled", 8, 8, "ports")
    value, detail, status = measure(pfc, [path])
    assert value is None and status == "missing" and "not measured" in detail
    assert measure(ecn, [path])[0] == 8.0


def test_probe_fails_a_nic_trained_at_x8(tmp_path):
    """The probe's own PCIe verdict: a NIC at x8 of x16 fails the node, as the grader does."""
    narrow = dict(FAKES, lspci=FAKES["lspci"].rsplit("Width x16", 1)[0] + "Width x8\\n'\n")
    assert narrow["lspci"] != FAKES["lspci"]
    (tmp_path / "bad").mkdir()
    verdict, _ = _probe(tmp_path / "bad", narrow)
    assert "pcie_below_nominal=1/1" in verdict and "below LnkCap" in verdict
    (tmp_path / "ok").mkdir()
    ok, _ = _probe(tmp_path / "ok", FAKES)
    assert "pcie_below_nominal=0/1" in ok


def test_amd_pollara_design_names_ionic_devices_and_reads_pfc_with_dcb(catalog):
    """An MI300X node with Pollara 400 NICs: ionic_<k> RDMA devices, PFC through iproute2 dcb,
    no NVIDIA NIC tool in its scripts."""
    import railplan
    from railplan.render.scripts import render_scripts
    from railplan.testplan.assemble import build_testplan

    spec = railplan.spec_from_dict(
        {
            "name": "amd-2node",
            "cluster": {"gpus": 16, "node": "mi300x-8x400g"},
            "fabric": {"topology": "rail-only", "whole_su": False},
        }
    )
    design = railplan.plan(spec, catalog)
    plan = build_testplan(design, catalog)
    assert plan.devices == tuple(f"ionic_{k}" for k in range(8)) and plan.nic_vendor == "AMD"
    files = render_scripts(plan, design)
    assert "dcb pfc show dev" in files["node_probe.sh"]
    assert not [n for n, text in files.items() if NVIDIA_ONLY.search(text)]
