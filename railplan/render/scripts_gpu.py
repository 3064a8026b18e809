"""The node probe's GPU reads by GPU vendor: GPU memory the NIC can reach, and NIC-GPU placement.

- NVIDIA: the ``nvidia_peermem`` module (NVIDIA GPUDirect RDMA User Manual, "nvidia-peermem")
  and ``nvidia-smi topo -m`` (each back-end NIC at PIX or PXB from its rail's GPU).
- AMD Instinct (MI300X, MI355X): the ``amdgpu`` driver with its amdkfd peer-memory client, read
  the way RCCL itself decides GPUDirect RDMA is possible (ROCm/rccl ``src/transport/net_ib.cc``,
  ``ncclIbGdrSupport``: ``/sys/kernel/mm/memory_peers/amdkfd/version``, then
  ``/sys/kernel/memory_peers/amdkfd/version`` and ``/sys/memory_peers/amdkfd/version``, then
  the ``ib_register_peer_memory_client`` symbol in ``/proc/kallsyms``); the GPUs' PCI
  addresses from ``amd-smi list`` ("GPU: 0" then "BDF: 0000:05:00.0", AMD SMI CLI tool
  documentation, ROCm/amdsmi ``docs/how-to/amdsmi-cli-tool.md``) or, without amd-smi, the
  older ``rocm-smi --showbus`` ("GPU[0] : PCI Bus: 0000:05:00.0", ROCm SMI); ROCm's topology
  has no NIC column, so each NIC's and its rail GPU's sysfs PCIe paths are compared: under one
  root port (through a PCIe switch, what nvidia-smi calls PIX/PXB) is near, anything else goes
  through the CPU.

A tool that is not installed leaves its check "not measured" (``absent`` in the probe), never
a failed node.
"""

from __future__ import annotations

NVIDIA_PROBE = """if have nvidia-smi; then
  nvidia-smi topo -m > "$dir/topo.txt" 2>&1
else
  absent topo.txt nvidia-smi nics_near_gpu
fi
"""

NVIDIA_JUDGE = """if measured topo.txt; then
  # nvidia-smi topo -m: the i-th device (of n) must be PIX or PXB from GPU i x gpus / n, the GPU
  # its rail pairs it with; NIC columns are renamed by the "NIC Legend" (NIC0: <RDMA device>)
  read -r near far <<< "$(awk -v devs="$*" '
    BEGIN { n = split(devs, d, " ") }
    $1 ~ /^NIC[0-9]+:$/ { k = $1; sub(/:$/, "", k); legend[k] = $2; next }
    !hdr && $1 == "GPU0" && $2 != "X" { hdr = 1; for (i = 1; i <= NF && $i != "CPU"; i++) col[i] = $i; nc = i - 1; next }
    hdr && $1 ~ /^GPU[0-9]+$/ { g++; for (i = 1; i <= nc; i++) cell[$1, col[i]] = $(i + 1) }
    END {
      for (i = 1; i <= nc; i++) idx[(col[i] in legend) ? legend[col[i]] : col[i]] = col[i]
      for (j = 1; j <= n; j++) {
        gpu = "GPU" int((j - 1) * g / n)
        p = (d[j] in idx) ? cell[gpu, idx[d[j]]] : ""
        if (p == "PIX" || p == "PXB") near++
        else far = far "," d[j] "=" (p == "" ? "absent" : p) "@" gpu
      }
      print near + 0, (far == "" ? "-" : substr(far, 2))
    }' "$dir/topo.txt")"
  summary+=" nics_near_gpu=$near/$n"
  [ "$near" = "$n" ] || problems+=("$near of $n NICs at PIX/PXB from their GPU (nvidia-smi topo -m: $far)")
else
  summary+=" nics_near_gpu=nm"
fi
if measured lsmod.txt; then
  peermem="$(grep -c '^nvidia_peermem' "$dir/lsmod.txt" || true)"
  summary+=" nvidia_peermem=$peermem"
  [ "$peermem" -ge 1 ] || problems+=("nvidia_peermem not loaded")
else
  summary+=" nvidia_peermem=nm"
fi
"""

AMD_PROBE = """# AMD GPUs: amdgpu and its amdkfd peer-memory client, looked for as RCCL looks (net_ib.cc)
if measured lsmod.txt; then
  amdgpu="$(grep -c '^amdgpu ' "$dir/lsmod.txt" || true)"
  peer=none
  for p in "$sys/kernel/mm/memory_peers/amdkfd/version" "$sys/kernel/memory_peers/amdkfd/version" \\
      "$sys/memory_peers/amdkfd/version"; do
    [ -e "$p" ] && peer="/sys${p#"$sys"}" && break
  done
  if [ "$peer" = none ] && grep -q ib_register_peer_memory_client "$proc/kallsyms" 2> /dev/null; then
    peer=kallsyms:ib_register_peer_memory_client
  fi
  printf 'amdgpu=%s\\npeer_client=%s\\n' "$amdgpu" "$peer" > "$dir/peer_memory.txt"
else
  absent peer_memory.txt lsmod rocm_peer_memory
fi
# each GPU's PCI address (amd-smi list, else rocm-smi --showbus), in GPU index order
: > "$dir/gpu_bdf.txt"
if have amd-smi; then
  amd-smi list > "$dir/gpus.txt" 2>&1
  awk '$1 == "GPU:" { g = $2 } $1 == "BDF:" && g != "" { print g, tolower($2) }' \\
    "$dir/gpus.txt" | sort -n > "$dir/gpu_bdf.txt"
elif have rocm-smi; then
  rocm-smi --showbus > "$dir/gpus.txt" 2>&1
  awk 'match($0, /GPU\\[[0-9]+\\]/) && /PCI Bus:/ { print substr($0, RSTART + 4, RLENGTH - 5), tolower($NF) }' \\
    "$dir/gpus.txt" | sort -n > "$dir/gpu_bdf.txt"
fi
if ! have amd-smi && ! have rocm-smi; then
  absent topo_pci.txt "amd-smi or rocm-smi" nics_near_gpu
else
  g="$(awk 'END { print NR }' "$dir/gpu_bdf.txt")"
  j=0
  {
    echo "# railplan: NIC and rail GPU PCIe paths (GPU BDF from amd-smi list or rocm-smi --showbus)"
    for dev in "$@"; do
      gi=$((g > 0 ? j * g / n : 0))
      j=$((j + 1))
      bdf="$(awk -v i="$gi" 'NR == i + 1 { print $2 }' "$dir/gpu_bdf.txt")"
      nic_path="$(readlink -f "$sys/class/infiniband/$dev/device" 2> /dev/null || true)"
      gpu_path=""
      [ -z "$bdf" ] || gpu_path="$(readlink -f "$sys/bus/pci/devices/$bdf" 2> /dev/null || true)"
      # near: both below one PCIe root port (the component after pciDDDD:BB), so through a switch
      state="$(awk -v a="$nic_path" -v b="$gpu_path" 'BEGIN {
        if (a == "" || b == "") { print "absent"; exit }
        na = split(a, x, "/"); nb = split(b, y, "/")
        for (i = 1; i <= na && x[i] !~ /^pci[0-9a-f]+:[0-9a-f]+$/; i++) {}
        print (i + 1 < na && i + 1 < nb && x[i] == y[i] && x[i + 1] == y[i + 1]) ? "near" : "far"
      }')"
      printf '%s GPU%s %s %s\\n' "$dev" "$gi" "${bdf:-none}" "$state"
    done
  } > "$dir/topo_pci.txt"
fi
"""

AMD_JUDGE = """if measured topo_pci.txt; then
  near="$(grep -c ' near$' "$dir/topo_pci.txt" || true)"
  far="$(awk '$NF != "near" && !/^#/ { printf "%s%s=%s@%s", s, $1, $NF, $2; s = "," }' "$dir/topo_pci.txt")"
  summary+=" nics_near_gpu=$near/$n"
  [ "$near" = "$n" ] || problems+=("$near of $n NICs under their GPU's PCIe root port (sysfs: $far)")
else
  summary+=" nics_near_gpu=nm"
fi
if measured peer_memory.txt; then
  peer_ok="$(awk -F= '$1 == "amdgpu" { a = ($2 + 0 >= 1) } $1 == "peer_client" { p = ($2 != "none") }
    END { print (a && p) ? 1 : 0 }' "$dir/peer_memory.txt")"
  summary+=" rocm_peer_memory=$peer_ok"
  [ "$peer_ok" = 1 ] || problems+=("amdgpu or its amdkfd peer-memory client missing (peer_memory.txt)")
else
  summary+=" rocm_peer_memory=nm"
fi
"""

GPU_VENDORS = ("nvidia", "amd")


def gpu_blocks(gpu_vendor: str) -> tuple[str, str, str]:
    """(probe lines, judge lines, the peer-memory metric) of the GPU vendor's node probe."""
    if gpu_vendor == "amd":
        return AMD_PROBE, AMD_JUDGE, "rocm_peer_memory"
    return NVIDIA_PROBE, NVIDIA_JUDGE, "nvidia_peermem"


__all__ = ["GPU_VENDORS", "gpu_blocks"]
