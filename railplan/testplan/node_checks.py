"""Node checks: ACS, PCIe, GPU RDMA (NVIDIA or ROCm), port state, rate, MTU and RoCE of every node."""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import same_check
from railplan.testplan.model import Check, PlanTest, Section


def node_section(ctx: PlanContext) -> Section:
    """One test per node: the same commands and checks on every node."""
    shape, opts = ctx.design.shape, ctx.options
    # one RDMA device per port, or per bonded NIC (RoCE LAG: one device over its ports)
    n = len(dict.fromkeys(ctx.devices))
    rate = ctx.rates.port_gbps
    prio = opts.lossless_priority
    amd = ctx.rates.gpu_vendor == "amd"
    checks = [
        same_check("acs_srcvalid_on", 0, "devices", "lower",
              "PCIe ACS must be off (ACSCtl SrcValid-) or GPU-NIC traffic detours via the CPU"),
        same_check("pcie_below_nominal", 0, "devices", "lower",
              "every NIC and GPU PCIe link at the width (NICs: and speed) it can train to "
              "(lspci LnkSta = LnkCap; a NIC at x8 is the kernel's 'limited by' case and caps "
              "its RDMA rate; GPUs lower their link speed when idle, so only their width counts)"),
        _peer_check(amd),
        same_check("ports_active", n, "ports", "equal",
              f"all {n} back-end ports of the design are cabled, so all must be Active"),
        same_check("ports_mtu", n, "ports", "equal",
              f"active MTU {opts.mtu} on every port (the RDMA MTU the plan assumes)",
              target=opts.mtu),
    ]  # fmt: skip
    gpus = shape.gpus
    # nvidia-smi topo -m: the rails pair GPU g with the NIC of port g x ports / gpus; the NVIDIA
    # GPUDirect RDMA User Manual asks for HCA and GPU under one PCIe root complex (PIX or PXB)
    if amd:  # ROCm has no NIC column in its topology: the PCIe paths in sysfs tell the same
        checks.append(same_check("nics_near_gpu", n, "NICs", "equal",
            f"amd-smi list gives each GPU's PCI address: each of the {n} back-end NICs under "
            "the same PCIe root port (through a PCIe switch: PIX/PXB) as its rail's "
            "GPU in /sys/bus/pci/devices (another root port or socket: through the CPU)"))  # fmt: skip
    else:
        checks.append(same_check("nics_near_gpu", n, "NICs", "equal",
            f"nvidia-smi topo -m: each of the {n} back-end NICs at PIX or PXB from its rail's GPU "
            "(PHB/NODE: through the CPU; SYS: the NIC is on the other socket)"))  # fmt: skip
    if not ctx.bonded:  # a LAG device's ibstat rate is not one port's: check members by hand
        checks.insert(4, same_check("ports_at_rate", n, "ports", "equal",
                                 f"the design runs every port at {rate} Gb/s", target=rate))  # fmt: skip
    if ctx.roce:
        checks += [
            same_check("gid_roce_v2", n, "ports", "equal",
                  f"GID index {opts.gid_index} must be RoCE v2 with an address on every port"),
            same_check("pfc_lossless", n, "ports", "equal",
                  f"PFC on priority {prio}, the lossless RoCE class"),
            same_check("ecn_enabled", n, "ports", "equal",
                  f"ECN (DCQCN) enabled on priority {prio}"),
        ]  # fmt: skip
    dev0 = ctx.devices[0]
    command = [
        "sudo lspci -vvv | grep 'ACSCtl:'   # every line SrcValid-; no line or <access denied>"
        " means not measured (run as root), never a pass",
        "sudo lspci -vvv | grep -E '^[0-9a-f]|LnkCap:|LnkSta:'   # each NIC/GPU: LnkSta width"
        " (NIC: and speed) = LnkCap",
        *_peer_commands(amd),
        f"ibstat {dev0}   # State: Active, Rate: {rate}; repeat for each device",
        f"ibv_devinfo -d {dev0} | grep active_mtu   # {opts.mtu}",
        _affinity_command(amd, ctx.devices, gpus),
    ]
    if ctx.roce:
        command += [
            f"cat /sys/class/infiniband/{dev0}/ports/1/gid_attrs/types/{opts.gid_index}",
            *_qos_commands(ctx.rates.nic_vendor, dev0, prio),
        ]
    tests = tuple(
        PlanTest(
            id=f"NODE-{node.id}",
            kind="node",
            title=f"{node.id}: ACS, {'ROCm' if amd else 'GPUDirect'} RDMA, {n} ports at "
            f"{rate}G/MTU {opts.mtu}",
            nodes=(node.id,),
            command=tuple(command),
            checks=tuple(checks),
            refs=tuple(ctx.node_ref(node.id, p) for p in range(n)),
            devices=ctx.devices,
        )
        for node in ctx.design.nodes
    )
    intro = (
        "Run on every node before any fabric test. A node failing here explains any slow "
        "result it takes part in (ACS on halves bandwidth). Devices "
        f"{', '.join(ctx.devices)} are node ports 0..{shape.ports - 1}; confirm with "
        + ("ibdev2netdev." if _nvidia(ctx.rates.nic_vendor) else "rdma link show (iproute2).")
    )
    if ctx.bonded:
        intro += (
            f" Bonded NICs: each of the {n} RDMA devices is a RoCE LAG over "
            f"{shape.ports_per_nic} ports; check each member port's speed ({rate} Gb/s) with "
            "ethtool on its netdev (the LAG device's ibstat rate is not a member port's)."
        )
    return Section("node", "Node checks", intro, tests)


def _peer_check(amd: bool) -> Check:
    """GPU memory the NIC can reach: nvidia_peermem (NVIDIA), amdgpu's peer-memory client (AMD)."""
    if amd:
        return same_check("rocm_peer_memory", 1, "loaded", "higher",
            "ROCm RDMA needs the amdgpu driver with its amdkfd peer-memory client: RCCL looks "
            "for /sys/kernel/mm/memory_peers/amdkfd/version (or /sys/kernel/memory_peers/..., "
            "/sys/memory_peers/...) and else the ib_register_peer_memory_client symbol "
            "(ROCm/rccl src/transport/net_ib.cc), else RCCL loses /GDRDMA")  # fmt: skip
    return same_check("nvidia_peermem", 1, "loaded", "higher",
        "GPUDirect RDMA needs the nvidia_peermem module, else NCCL loses /GDRDMA")  # fmt: skip


def _peer_commands(amd: bool) -> list[str]:
    if amd:
        return [
            "lsmod | grep -c '^amdgpu '   # 1: the AMD GPU driver",
            "ls /sys/kernel/mm/memory_peers/amdkfd/version || grep -c "
            "ib_register_peer_memory_client /proc/kallsyms   # RCCL's peer-memory test",
        ]
    return ["lsmod | grep -c '^nvidia_peermem'"]


def _affinity_command(amd: bool, devices: tuple[str, ...], gpus: int) -> str:
    pairing = _pairing(devices, gpus)
    if amd:
        return (
            f"amd-smi list   # {pairing}: the GPU's BDF and the NIC's "
            "(readlink -f /sys/class/infiniband/DEV/device) under one PCIe root port"
        )
    return f"nvidia-smi topo -m   # {pairing}: PIX or PXB, never PHB/NODE/SYS"


def _nvidia(vendor: str) -> bool:
    """NVIDIA ConnectX (mlx5) NICs, and an unknown NIC (the mlx5 device names are the default)."""
    return vendor.lower() in ("", "nvidia", "mellanox")


def _qos_commands(vendor: str, dev: str, prio: int) -> list[str]:
    """The PFC and ECN reads the NIC vendor documents (``render.scripts_vendor``)."""
    if _nvidia(vendor):
        return [f"mlnx_qos -i $(ibdev2netdev | awk '$1==\"{dev}\"{{print $5}}')"]
    netdev = f"$(rdma link show {dev}/1 | awk '{{print $NF}}')"
    if vendor.lower() == "broadcom":
        return [
            f"niccli -dev $(basename $(readlink -f /sys/class/infiniband/{dev}/device)) get_qos"
            f"   # IEEE 8021QAZ PFC TLV: PFC enabled: {prio}",
            f"cat /sys/kernel/config/bnxt_re/{dev}/ports/1/cc/ecn_enable   # 0x1 (bnxt_re "
            f"congestion control, as bnxt_setupcc.sh sets it; mkdir /sys/kernel/config/bnxt_re/"
            f"{dev} first)",
        ]
    return [
        f"dcb pfc show dev {netdev}   # prio-pfc {prio}:on (iproute2, kernel DCB)",
        "# ECN (DCQCN): read it with the NIC vendor's tool; railplan knows no vendor-neutral "
        "read (not measured)",
    ]


def rail_gpu(index: int, devices: int, gpus: int) -> int:
    """The GPU the rails pair with the ``index``-th of ``devices`` back-end RDMA devices."""
    return index * gpus // devices


def _pairing(devices: tuple[str, ...], gpus: int) -> str:
    """``GPU0-mlx5_0 .. GPU7-mlx5_7``: the back-end devices with their rail's GPU."""
    uniq = tuple(dict.fromkeys(devices))
    pairs = [f"GPU{rail_gpu(i, len(uniq), gpus)}-{d}" for i, d in enumerate(uniq)]
    return " ".join(pairs) if len(pairs) <= 2 else f"{pairs[0]} .. {pairs[-1]}"
