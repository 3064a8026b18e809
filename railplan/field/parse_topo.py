"""Parse ``nvidia-smi topo -m`` and judge each back-end NIC's PCIe distance to its rail's GPU.

The matrix has one row per GPU and NIC; each cell is the path between the two devices, in the
words of nvidia-smi's own legend: ``PIX`` (at most a single PCIe bridge), ``PXB`` (multiple
PCIe bridges, without the host bridge), ``PHB`` (through a PCIe host bridge, the CPU), ``NODE``
(between host bridges within a NUMA node), ``SYS`` (across the SMP interconnect between NUMA
nodes, QPI/UPI), ``NV#`` (NVLinks). Newer drivers name NIC columns ``NIC0..`` and print a ``NIC
Legend`` (``NIC0: mlx5_0``); older ones put the RDMA device name in the header (captures: NVIDIA/
nccl issue #1264 and NVIDIA/nccl-tests issue #78).

A rail-optimized design gives every GPU its own NIC: GPU ``g`` sends over the NIC of node port
``g x ports / gpus``. The NVIDIA GPUDirect RDMA User Manual (System Requirements and
Recommendations) asks for the HCA and the GPU under the same PCIe root complex, so the pair must
be ``PIX`` or ``PXB``: ``PHB``/``NODE`` go through the CPU, ``SYS`` means the NIC sits on the
other socket.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from railplan.field.common import ParseError, read_text
from railplan.testplan.node_checks import rail_gpu

#: a GPU and its rail NIC share a PCIe switch: GPUDirect RDMA without the CPU
NEAR = ("PIX", "PXB")
_WHAT = {
    "PHB": "through the PCIe host bridge (the CPU)",
    "NODE": "across PCIe host bridges of one socket",
    "SYS": "on the other socket (across QPI/UPI)",
}
_LEGEND = re.compile(r"^\s*(NIC\d+)\s*:\s*(\S+)\s*$")


@dataclass(frozen=True)
class TopoMatrix:
    """The devices of an ``nvidia-smi topo -m`` matrix and the path between each pair."""

    columns: tuple[str, ...]
    #: row device -> column device -> path (``PIX``, ``SYS``, ``NV18``, ``X``)
    cells: dict[str, dict[str, str]]

    @property
    def gpus(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if re.fullmatch(r"GPU\d+", c))

    @property
    def nics(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.gpus)

    def path(self, gpu: str, nic: str) -> str | None:
        return self.cells.get(gpu, {}).get(nic) or self.cells.get(nic, {}).get(gpu)


def parse_topo(text: str, source: str = "topo") -> TopoMatrix:
    """The matrix of ``text``; NIC columns renamed by the NIC Legend when it is printed."""
    lines = text.splitlines()
    # the header starts with GPU0 like the first row does, but its next word is not "X"
    head = next((i for i, ln in enumerate(lines) if ln.split()[:1] == ["GPU0"]
                 and ln.split()[1:2] != ["X"]), None)  # fmt: skip
    if head is None:
        raise ParseError(source, None, "no 'GPU0 GPU1 ...' header: not nvidia-smi topo -m output")
    words = lines[head].split()
    columns = words[: words.index("CPU")] if "CPU" in words else words
    cells: dict[str, dict[str, str]] = {}
    for number, line in enumerate(lines[head + 1 :], start=head + 2):
        parts = line.split()
        if not parts or parts[0] not in columns:
            continue
        values = parts[1 : 1 + len(columns)]
        if len(values) < len(columns):
            raise ParseError(
                source, number, f"{parts[0]}: {len(values)} of {len(columns)} cells", line
            )
        cells[parts[0]] = dict(zip(columns, values, strict=True))
    if not any(re.fullmatch(r"GPU\d+", r) for r in cells):
        raise ParseError(source, head + 1, "a header but no GPU rows")
    legend = {m.group(1): m.group(2) for ln in lines if (m := _LEGEND.match(ln))}
    if legend:
        columns = [legend.get(c, c) for c in columns]
        cells = {
            legend.get(r, r): {legend.get(c, c): v for c, v in row.items()}
            for r, row in cells.items()
        }
    return TopoMatrix(tuple(columns), cells)


def parse_topo_file(path: str | Path) -> TopoMatrix:
    return parse_topo(read_text(path), Path(path).name)


def nic_faults(matrix: TopoMatrix, devices: tuple[str, ...], gpus: int) -> list[str]:
    """One sentence per back-end device not at PIX/PXB from its rail's GPU (empty: all near)."""
    faults = []
    for i, dev in enumerate(devices):
        gpu = f"GPU{rail_gpu(i, len(devices), gpus)}"
        if dev not in matrix.columns:
            faults.append(f"{dev} is not in the matrix (NIC missing or unnamed)")
            continue
        path = matrix.path(gpu, dev)
        if path is None:
            faults.append(f"{gpu} is not in the matrix (GPU missing), so {dev} cannot be judged")
        elif path not in NEAR:
            near = [n for n in matrix.nics if matrix.path(gpu, n) in NEAR]
            where = _WHAT.get(path, "not on the GPU's PCIe switch")
            hint = f"; {gpu}'s near NIC is {', '.join(near)}" if near else ""
            faults.append(f"{dev} is {path} from {gpu}: {where}{hint}")
    return faults


# -- AMD nodes: the probe's NIC / rail-GPU PCIe path comparison (``topo_pci.txt``) -------------

PCI_AFFINITY_HEAD = "# railplan: NIC and rail GPU PCIe paths"
_AFFINITY = re.compile(r"^(\S+)\s+(GPU\d+)\s+(\S+)\s+(near|far|absent)\s*$")


def parse_pci_affinity(text: str, source: str = "topo_pci") -> dict[str, tuple[str, str, str]]:
    """RDMA device -> (rail GPU, its PCI address, near|far|absent) from the AMD node probe's
    ``topo_pci.txt`` (near: NIC and GPU below one PCIe root port, as sysfs shows them)."""
    out: dict[str, tuple[str, str, str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = _AFFINITY.match(line)
        if not m:
            raise ParseError(source, number, "not a 'DEVICE GPUk BDF near|far|absent' line", line)
        out[m.group(1)] = (m.group(2), m.group(3), m.group(4))
    return out


def affinity_faults(rows: dict[str, tuple[str, str, str]], devices: tuple[str, ...]) -> list[str]:
    """One sentence per device not under its rail GPU's PCIe root port (or not listed)."""
    faults = []
    for dev in devices:
        if dev not in rows:
            faults.append(f"{dev}: not in the probe's PCIe path list")
            continue
        gpu, bdf, state = rows[dev]
        if state == "far":
            faults.append(f"{dev} is not under {gpu}'s ({bdf}) PCIe root port: through the CPU")
        elif state == "absent":
            faults.append(f"{dev} or {gpu} has no PCI device in sysfs (GPU address {bdf})")
    return faults


def parse_pci_affinity_file(path: str | Path) -> dict[str, tuple[str, str, str]]:
    return parse_pci_affinity(read_text(path), str(path))
