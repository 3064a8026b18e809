"""The node probe's RoCE QoS reads by NIC vendor: the tools each vendor documents for PFC and ECN.

Port state, rate and MTU are read with rdma-core's ``ibstat`` and ``ibv_devinfo`` and the GID
type from the kernel's RDMA sysfs, which every RoCE driver (mlx5, bnxt_re, ionic) provides. PFC
and ECN have no vendor-neutral read of the RoCE NIC's own state, so each vendor's tool is used:

- NVIDIA ConnectX (mlx5): ``mlnx_qos -i NETDEV`` ("enabled" row of the PFC table) and the mlx5
  sysfs ``/sys/class/net/NETDEV/ecn/roce_np/enable/PRIO`` (NVIDIA MLNX_OFED documentation);
- Broadcom Thor 2 (bnxt_re): ``niccli -dev <PCI address> get_qos`` ("IEEE 8021QAZ PFC TLV:
  PFC enabled: 3") as AMD's multi-node networking guide for MI300X clusters shows it on a
  BCM957608 (after Broadcom's *BCM957608 Ethernet Networking Guide for AMD Instinct MI300X GPU
  Clusters*), and ECN from the bnxt_re congestion-control configfs entry
  ``/sys/kernel/config/bnxt_re/DEV/ports/1/cc/ecn_enable`` that Broadcom's bnxt_setupcc.sh
  writes (Juniper's AI data center JVD for AMD: "Broadcom BCM57608 Thor2 DCQCN configuration
  for RDMA traffic" sets DCQCN with niccli and bnxt_setupcc.sh);
- any other vendor (AMD Pollara ``ionic``): PFC from the kernel's DCB netlink interface with
  iproute2 ``dcb pfc show dev NETDEV`` (dcb-pfc(8): ``prio-pfc 3:on``); ECN is not measured
  (``na``): railplan knows no documented read of it.

A value a missing tool could not read is ``na`` in roce.txt: the probe names it "not
measured" (without failing the node) and the grader reports the check missing, never a pass or
a zero count.
"""

from __future__ import annotations

from railplan.render.script_lib import NODE_PROBE_TEMPLATE
from railplan.render.scripts_gpu import gpu_blocks

NVIDIA_TOOL = """if [ "$gid" -ge 0 ] && ! command -v mlnx_qos > /dev/null; then
  unmeasured+=("pfc_lossless (mlnx_qos not installed)")
fi
"""
NVIDIA_READ = """    pfc=na
    if have mlnx_qos; then
      pfc="$(mlnx_qos -i "$netdev" 2>/dev/null | awk -v p="$prio" '$1 == "enabled" { print $(p + 2) }')"
    fi
    ecn="$(cat "$sys/class/net/$netdev/ecn/roce_np/enable/$prio" 2>/dev/null || echo 0)"
"""

BROADCOM_TOOL = """if [ "$gid" -ge 0 ] && ! command -v niccli > /dev/null; then
  unmeasured+=("pfc_lossless (niccli, Broadcom, not installed)")
fi
"""
BROADCOM_READ = """    # Broadcom: niccli -dev <PCI address> get_qos prints "PFC enabled: <priorities>"
    pci="$(readlink -f "$sys/class/infiniband/$dev/device")"
    pci="${pci##*/}"
    pfc=na
    if command -v niccli > /dev/null; then
      pfc="$(niccli -dev "$pci" get_qos 2>/dev/null | awk -v p="$prio" '/PFC enabled:/ {
          sub(/.*PFC enabled:/, ""); k = split($0, e, /[ ,]+/)
          for (i = 1; i <= k; i++) if (e[i] != "" && e[i] + 0 == p) f = 1 }
        END { print f + 0 }')"
    fi
    # ECN: the bnxt_re congestion-control configfs (bnxt_setupcc.sh), made when absent
    cfg="$sys/kernel/config/bnxt_re/$dev"
    [ -d "$cfg" ] || mkdir -p "$cfg" 2> /dev/null
    ecn="$(cat "$cfg/ports/1/cc/ecn_enable" 2> /dev/null || echo na)"
    case "$ecn" in na) ;; 0 | 0x0) ecn=0 ;; *) ecn=1 ;; esac
"""

GENERIC_TOOL = """if [ "$gid" -ge 0 ] && ! command -v dcb > /dev/null; then
  unmeasured+=("pfc_lossless (dcb, iproute2, not installed)")
fi
"""
GENERIC_READ = """    # PFC from the kernel's DCB netlink (iproute2 dcb-pfc(8): "prio-pfc 0:off .. 3:on ..")
    pfc=na
    if command -v dcb > /dev/null; then
      pfc="$(dcb pfc show dev "$netdev" 2>/dev/null | awk -v p="$prio" '{
          for (i = 1; i <= NF; i++) if ($i == p ":on") f = 1 } END { print f + 0 }')"
    fi
    ecn=na  # no documented vendor-neutral read of the NIC's ECN (DCQCN) state
"""
UNMEASURED_CHECK = """  na_ports="$(grep -c '=na' "$dir/roce.txt" || true)"
  [ "$na_ports" = 0 ] || unmeasured+=("PFC or ECN on $na_ports port(s) (na in roce.txt)")
"""

VENDORS = ("nvidia", "broadcom", "other")


def vendor_key(nic_vendor: str) -> str:
    """``nvidia`` (also Mellanox, and an unknown NIC: the mlx5 defaults), ``broadcom``, ``other``."""
    v = nic_vendor.lower()
    if v in ("", "nvidia", "mellanox"):
        return "nvidia"
    return "broadcom" if v == "broadcom" else "other"


def node_probe(nic_vendor: str, gpu_vendor: str = "nvidia") -> str:
    """node_probe.sh with the PFC/ECN reads of the NIC vendor and the GPU reads of the GPU
    vendor (``render.scripts_gpu``)."""
    key = vendor_key(nic_vendor)
    tool, read, check = {
        "nvidia": (NVIDIA_TOOL, NVIDIA_READ, ""),
        "broadcom": (BROADCOM_TOOL, BROADCOM_READ, UNMEASURED_CHECK),
        "other": (GENERIC_TOOL, GENERIC_READ, UNMEASURED_CHECK),
    }[key]
    gpu_probe, gpu_judge, peer_metric = gpu_blocks(gpu_vendor)
    return (
        NODE_PROBE_TEMPLATE.replace("@QOS_TOOL@", tool)
        .replace("@GPU_PROBE@", gpu_probe)
        .replace("@GPU_JUDGE@", gpu_judge)
        .replace("@PEER_METRIC@", peer_metric)
        .replace("@QOS_READ@", read)
        .replace("@QOS_CHECK@", check)
    )


#: the NVIDIA probe, as every design without a vendor-specific one gets it
NODE_PROBE = node_probe("nvidia")

__all__ = ["NODE_PROBE", "VENDORS", "node_probe", "vendor_key"]
