"""Node checks follow the GPU vendor: AMD Instinct nodes get ROCm's tools, never NVIDIA's.

An MI300X or MI355X design's scripts and printed commands carry no NVIDIA GPU tool
(nvidia-smi, nvidia_peermem, DCGM, nccl-tests' build path); its probe reads the amdgpu driver
and its amdkfd peer-memory client the way RCCL does, and each NIC's place against its rail's
GPU from ``amd-smi list`` (or ``rocm-smi --showbus``) and the sysfs PCIe paths. The probe is run
against stand-ins for the AMD tools and a made-up /sys; a tool that is absent makes its check
"not measured" without failing the node, and the grader reads the same files.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from railplan.render.scripts_vendor import node_probe

#: NVIDIA-only GPU tools and paths (a Pollara NIC also rules out the mlx5 NIC tools)
NVIDIA_GPU_ONLY = re.compile(
    r"\bnvidia[-_]smi\b|\bnvidia_peermem\b|\bnv_peer_mem\b|\bdcgmi\b|\bnvidia-peermem\b"
    r"|nccl-tests/build|\bmlnx_qos\b|\bibdev2netdev\b|\bmlx5_\d"
)


def _amd_plan(catalog, node: str):
    import railplan
    from railplan.testplan.assemble import build_testplan

    spec = railplan.spec_from_dict(
        {
            "name": "amd-2node",
            "cluster": {"gpus": 16, "node": node},
            "fabric": {"topology": "rail-only", "whole_su": False},
        }
    )
    design = railplan.plan(spec, catalog)
    return design, build_testplan(design, catalog)


@pytest.mark.parametrize("node", ["mi300x-8x400g", "mi355x-8x400g"])
def test_amd_gpu_design_has_no_nvidia_gpu_tool(catalog, node):
    from railplan.render.scripts import render_scripts
    from railplan.render.testplan_data import plan_to_text

    design, plan = _amd_plan(catalog, node)
    assert plan.gpu_vendor == "amd"
    files = render_scripts(plan, design)
    found = {
        (name, m.group(0)) for name, text in files.items() for m in NVIDIA_GPU_ONLY.finditer(text)
    }
    assert found == set()
    commands = [ln for ln in plan_to_text(plan).splitlines() if "$ " in ln]
    assert commands and not [ln for ln in commands if NVIDIA_GPU_ONLY.search(ln)]
    # ROCm's own tools and RCCL's tests instead
    probe = files["node_probe.sh"]
    assert "amd-smi list" in probe and "rocm-smi --showbus" in probe
    assert "memory_peers/amdkfd/version" in probe and "ib_register_peer_memory_client" in probe
    assert 'NCCL_TESTS="${NCCL_TESTS:-/opt/rccl-tests/build}"' in files["lib.sh"]
    metrics = {c.metric for t in plan.section("node").tests for c in t.checks}
    assert "rocm_peer_memory" in metrics and "nvidia_peermem" not in metrics
    nccl = plan.section("nccl")
    assert "RCCL" in nccl.intro and "rccl-tests" in nccl.intro
    split = next(t for t in nccl.tests if t.id == "NCCL-AR-RAILS")
    assert ("NCCL_TESTS_SPLIT_MASK", "0x7") in split.env  # rccl-tests: rank & mask
    assert not [k for k, _ in split.env if k == "NCCL_TESTS_SPLIT"]


def test_nvidia_design_keeps_nvidia_gpu_checks(catalog):
    import railplan
    from railplan.testplan.assemble import build_testplan

    spec = railplan.spec_from_dict(
        {"name": "h100", "cluster": {"gpus": 16, "node": "dgx-h100"},
         "fabric": {"topology": "rail-only", "whole_su": False}}
    )  # fmt: skip
    plan = build_testplan(railplan.plan(spec, catalog), catalog)
    assert plan.gpu_vendor == "nvidia"
    metrics = {c.metric for t in plan.section("node").tests for c in t.checks}
    assert "nvidia_peermem" in metrics and "rocm_peer_memory" not in metrics
    assert "nvidia-smi topo -m" in node_probe("NVIDIA", "nvidia")


# -- the AMD probe against stand-in tools and a made-up /sys -----------------------------------


def _amd_smi(bdfs: list[str]) -> str:
    """``amd-smi list`` as the AMD SMI CLI documentation shows it: GPU index, then BDF."""
    body = "".join(f"GPU: {k}\n    BDF: {b}\n    UUID: 00000000-0000-0000-0000-00000000000{k}\n"
                   for k, b in enumerate(bdfs))  # fmt: skip
    return f"#!/bin/sh\n[ \"$1\" = list ] || exit 1\ncat <<'EOF'\n{body}EOF\n"


def _rocm_smi(bdfs: list[str]) -> str:
    """``rocm-smi --showbus``: "GPU[0]  : PCI Bus: 0000:05:00.0" (upper-case hex, as printed)."""
    body = "".join(f"GPU[{k}]\t\t: PCI Bus: {b.upper()}\n" for k, b in enumerate(bdfs))
    return f"#!/bin/sh\n[ \"$1\" = --showbus ] || exit 1\ncat <<'EOF'\n{body}EOF\n"


GPUS = 2


def _sysfs(root: Path, far_rail: int | None = None, peer: bool = True) -> list[str]:
    """Two ionic NICs, each under a PCIe switch with its rail's GPU (or, for ``far_rail``, the
    GPU under another root port); returns the GPUs' PCI addresses."""
    bdfs = []
    for k in range(GPUS):
        rp = root / "devices" / "pci0000:00" / f"0000:00:0{k}.0" / f"0000:1{k}:00.0"
        nic = rp / f"0000:2{k}:00.0"
        gpu_bdf = f"0000:2{k}:01.0"
        gpu = rp / gpu_bdf
        if k == far_rail:
            gpu_bdf = f"0000:9{k}:00.0"
            gpu = root / "devices" / "pci0000:80" / f"0000:80:0{k}.0" / gpu_bdf
        (nic / "net" / f"ens{k}np0").mkdir(parents=True)
        gpu.mkdir(parents=True)
        ib = root / "class" / "infiniband" / f"ionic_{k}"
        (ib / "ports" / "1" / "gid_attrs" / "types").mkdir(parents=True)
        (ib / "ports" / "1" / "gid_attrs" / "types" / "3").write_text("RoCE v2\n")
        (ib / "device").symlink_to(nic)
        (root / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
        (root / "bus" / "pci" / "devices" / gpu_bdf).symlink_to(gpu)
        bdfs.append(gpu_bdf)
    if peer:
        (root / "kernel" / "mm" / "memory_peers" / "amdkfd").mkdir(parents=True)
        (root / "kernel" / "mm" / "memory_peers" / "amdkfd" / "version").write_text("1\n")
    return bdfs


LSPCI = (
    "#!/bin/sh\nprintf '00:01.0 PCI bridge: x\\n\\t\\tACSCtl:\\tSrcValid- TransBlk-\\n'\n"
    "printf '20:00.0 Ethernet controller [0200]: AMD Pensando\\n\\t\\tLnkCap:\\tPort #0, Speed 32GT/s, Width x16\\n'\n"
    "printf '\\t\\tLnkSta:\\tSpeed 32GT/s, Width x16\\n'\n"
    "printf '20:01.0 Processing accelerators [1200]: AMD [Instinct MI300X]\\n\\t\\tLnkCap:\\tPort #0, Speed 32GT/s, Width x16\\n'\n"
    "printf '\\t\\tLnkSta:\\tSpeed 2.5GT/s, Width @W@\\n'\n"
)
TOOLS = {
    "lspci": LSPCI.replace("@W@", "x16"),
    "sudo": '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n',
    "lsmod": "#!/bin/sh\nprintf 'Module Size Used by\\namdgpu 16384 0\\n'\n",
    "ibstat": '#!/bin/sh\nprintf "CA \'%s\'\\n\\tPort 1:\\n\\t\\tState: Active\\n\\t\\tRate: 400\\n" "$1"\n',
    "ibv_devinfo": '#!/bin/sh\nprintf "hca_id:\\t%s\\n\\tport:\\t1\\n\\t\\t\\tactive_mtu:\\t\\t4096 (5)\\n" "$2"\n',
    "dcb": "#!/bin/sh\necho 'pfc-cap 8 macsec-bypass off delay 4096 prio-pfc 0:off 1:off 2:off 3:on 4:off'\n",
}


def _run(tmp_path: Path, tools: dict[str, str], sysfs: Path) -> tuple[str, Path]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, text in tools.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "readlink", "id", "tail", "sort"):
        if (found := shutil.which(tool)) is not None:
            (bin_dir / tool).symlink_to(found)
    probe = tmp_path / "node_probe.sh"
    probe.write_text(node_probe("AMD", "amd"))
    out = tmp_path / "NODE-node0001"
    proc = tmp_path / "proc"
    proc.mkdir()
    (proc / "kallsyms").write_text("ffffffff81000000 T _stext\n")
    env = {"PATH": str(bin_dir), "SYSFS": str(sysfs), "PROCFS": str(proc), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", str(probe), str(out), "3", "3", "400", "4096", "ionic_0", "ionic_1"],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1], out


def test_amd_probe_passes_a_healthy_node(tmp_path):
    sysfs = tmp_path / "sys"
    tools = {**TOOLS, "amd-smi": _amd_smi(_sysfs(sysfs))}
    verdict, out = _run(tmp_path, tools, sysfs)
    assert verdict.startswith("VERDICT OK"), verdict
    assert "nics_near_gpu=2/2" in verdict and "rocm_peer_memory=1" in verdict
    # the MI300X ("Processing accelerators") is judged on width only: idle at 2.5 GT/s is fine
    assert "pcie_below_nominal=0/2" in verdict
    assert (out / "topo_pci.txt").read_text().splitlines()[1:] == [
        "ionic_0 GPU0 0000:20:01.0 near",
        "ionic_1 GPU1 0000:21:01.0 near",
    ]
    # ECN has no vendor-neutral read on a Pollara NIC: not measured, not failed
    assert "not measured: PFC or ECN on 2 port(s)" in verdict


def test_amd_probe_names_a_nic_far_from_its_gpu(tmp_path):
    sysfs = tmp_path / "sys"
    tools = {**TOOLS, "rocm-smi": _rocm_smi(_sysfs(sysfs, far_rail=1))}  # no amd-smi: rocm-smi
    verdict, _out = _run(tmp_path, tools, sysfs)
    assert verdict.startswith("VERDICT FAIL") and "nics_near_gpu=1/2" in verdict
    assert "ionic_1=far@GPU1" in verdict


def test_amd_probe_fails_without_the_peer_memory_client(tmp_path):
    sysfs = tmp_path / "sys"
    tools = {**TOOLS, "amd-smi": _amd_smi(_sysfs(sysfs, peer=False))}
    verdict, out = _run(tmp_path, tools, sysfs)
    assert verdict.startswith("VERDICT FAIL") and "rocm_peer_memory=0" in verdict
    assert (out / "peer_memory.txt").read_text() == "amdgpu=1\npeer_client=none\n"


def test_amd_probe_without_rocm_tools_says_not_measured(tmp_path):
    sysfs = tmp_path / "sys"
    _sysfs(sysfs)
    tools = {k: v for k, v in TOOLS.items() if k != "dcb"}
    verdict, out = _run(tmp_path, tools, sysfs)
    assert verdict.startswith("VERDICT OK"), verdict
    assert "nics_near_gpu=nm" in verdict
    assert "nics_near_gpu (amd-smi or rocm-smi not installed)" in verdict
    assert "pfc_lossless (dcb, iproute2, not installed)" in verdict
    assert (out / "topo_pci.txt").read_text().startswith("railplan: not measured:")


def test_amd_probe_fails_a_gpu_trained_narrow(tmp_path):
    sysfs = tmp_path / "sys"
    tools = {**TOOLS, "amd-smi": _amd_smi(_sysfs(sysfs)), "lspci": LSPCI.replace("@W@", "x8")}
    verdict, _ = _run(tmp_path, tools, sysfs)
    assert verdict.startswith("VERDICT FAIL") and "pcie_below_nominal=1/2" in verdict


def test_grader_reads_the_amd_probe(tmp_path, catalog):
    """The grader judges the AMD files: peer memory and NIC placement pass on a healthy node,
    the far NIC fails with its name, and a tool's absence is missing (not measured)."""
    from railplan.field.measure import Measure
    from railplan.field.names import NameMap
    from railplan.testplan.expectation import expectations

    design, plan = _amd_plan(catalog, "mi300x-8x400g")
    exps = {e.metric: e for e in expectations(plan) if e.test_id == "NODE-node0001"}
    measure = Measure(design, NameMap(design))
    devs = [f"ionic_{k}" for k in range(8)]
    topo = tmp_path / "topo_pci.txt"
    rows = [f"{d} GPU{k} 0000:{k}1:00.0 near" for k, d in enumerate(devs)]
    topo.write_text("# railplan: NIC and rail GPU PCIe paths (x)\n" + "\n".join(rows) + "\n")
    assert measure(exps["nics_near_gpu"], [topo])[0] == 8.0
    rows[3] = rows[3].replace("near", "far")
    far = tmp_path / "far" / "topo_pci.txt"
    far.parent.mkdir()
    far.write_text("# railplan: NIC and rail GPU PCIe paths (x)\n" + "\n".join(rows) + "\n")
    value, detail, _ = measure(exps["nics_near_gpu"], [far])
    assert value == 7.0 and "ionic_3 is not under GPU3's" in detail
    peer = tmp_path / "peer_memory.txt"
    peer.write_text("amdgpu=1\npeer_client=/sys/kernel/mm/memory_peers/amdkfd/version\n")
    assert measure(exps["rocm_peer_memory"], [peer])[0] == 1.0
    (tmp_path / "none").mkdir()
    absent = tmp_path / "none" / "topo_pci.txt"
    absent.write_text("railplan: not measured: amd-smi or rocm-smi not installed\n")
    value, detail, status = measure(exps["nics_near_gpu"], [absent])
    assert value is None and status == "missing" and "not measured" in detail
