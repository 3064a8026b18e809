"""Parse node-check outputs: ``lspci -vvv`` ACS lines, ``ibstat``, ``ibv_devinfo`` and ``lsmod``.

``lspci -vvv`` may be whole or filtered (``lspci -vvv | grep -i acsctl``); with the device lines
present each ACSCtl line is attributed to its device. ``SrcValid+`` means ACS is on for that
bridge, which sends GPU-NIC peer traffic through the root complex and roughly halves
GPUDirect RDMA bandwidth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from railplan.field.common import ParseError, finite, no_huge_numbers, read_text

_DEVICE = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.*)$")
_ACSCTL = re.compile(r"ACSCtl:\s*(.*)$")
_FLAG = re.compile(r"^([A-Za-z]+)([+-])$")


@dataclass(frozen=True, slots=True)
class AcsControl:
    """The ACSCtl flags of one PCI device (``device`` is its address when known)."""

    device: str
    flags: tuple[tuple[str, bool], ...]
    line: int

    @property
    def enabled(self) -> bool:
        return dict(self.flags).get("SrcValid", False)


@dataclass(frozen=True)
class AcsReport:
    source: str
    controls: tuple[AcsControl, ...]
    access_denied: int = 0

    @property
    def enabled(self) -> tuple[AcsControl, ...]:
        return tuple(c for c in self.controls if c.enabled)


def parse_lspci_acs(text: str, source: str) -> AcsReport:
    """Every ACSCtl line of ``lspci -vvv`` output (whole or grepped)."""
    no_huge_numbers(text, source)
    device = ""
    controls = []
    denied = 0
    for number, line in enumerate(text.splitlines(), 1):
        if m := _DEVICE.match(line):
            device = m.group(1)
            continue
        if "<access denied>" in line:
            denied += 1
            continue
        m = _ACSCTL.search(line)
        if not m:
            continue
        flags = []
        for token in m.group(1).split():
            f = _FLAG.match(token)
            if not f:
                raise ParseError(source, number, f"cannot read ACSCtl flag {token!r}", line)
            flags.append((f.group(1), f.group(2) == "+"))
        if not any(name == "SrcValid" for name, _ in flags):
            raise ParseError(source, number, "an ACSCtl line without the SrcValid flag", line)
        controls.append(AcsControl(device, tuple(flags), number))
    return AcsReport(source, tuple(controls), denied)


def parse_lspci_acs_file(path: str | Path) -> AcsReport:
    return parse_lspci_acs(read_text(path), str(path))


# -- PCIe links (lspci -vvv LnkCap / LnkSta) --------------------------------------------------------

_LNK = re.compile(
    r"\bLnk(Cap|Sta):\s*(?:Port #\d+,\s*)?Speed\s+([\d.]+)GT/s[^,]*,\s*Width\s+x(\d+)"
)
#: lspci device classes judged: RDMA NICs, and GPUs (NVIDIA's are "3D controller", AMD
#: Instinct MI300X's "Processing accelerators", as ROCm's MI300X system documentation lists them)
NIC_CLASSES = ("Infiniband controller", "Ethernet controller")
GPU_CLASSES = (
    "3D controller",
    "VGA compatible controller",
    "Display controller",
    "Processing accelerators",
)
_CLASS_CODE = re.compile(r"\s*\[[0-9a-fA-F]{4}\]$")


@dataclass(frozen=True, slots=True)
class PcieLink:
    """One NIC's or GPU's PCIe link: what it can train to (LnkCap) and what it did (LnkSta)."""

    device: str
    kind: str  # "nic" or "gpu"
    cap_gts: float
    cap_width: int
    sta_gts: float
    sta_width: int
    line: int

    @property
    def below(self) -> bool:
        """Narrower than it can be, or (a NIC) slower: the kernel's "limited by ... x8 link"
        case. A GPU trains its link speed down when idle (power management), so only its
        width is judged; a width never changes with load."""
        if self.sta_width < self.cap_width:
            return True
        return self.kind == "nic" and self.sta_gts < self.cap_gts - 1e-9

    def text(self) -> str:
        return (
            f"{self.device} ({self.kind}) {self.sta_gts:g}GT/s x{self.sta_width} of "
            f"{self.cap_gts:g}GT/s x{self.cap_width}"
        )


def parse_lspci_links(text: str, source: str) -> tuple[PcieLink, ...]:
    """The LnkCap/LnkSta pair of every NIC and GPU in ``lspci -vvv`` output."""
    no_huge_numbers(text, source)
    out: list[PcieLink] = []
    device, kind = "", ""
    cap: tuple[float, int] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if m := _DEVICE.match(line):
            device, cap = m.group(1), None
            cls = _CLASS_CODE.sub("", m.group(2).split(":", 1)[0].strip())
            kind = "nic" if cls in NIC_CLASSES else "gpu" if cls in GPU_CLASSES else ""
            continue
        if not kind or not (m := _LNK.search(line)):
            continue
        speed, width = float(m.group(2)), int(m.group(3))
        if m.group(1) == "Cap":
            cap = (speed, width)
        elif cap is not None:
            out.append(PcieLink(device, kind, cap[0], cap[1], speed, width, number))
            cap = None
    return tuple(out)


def parse_lspci_links_file(path: str | Path) -> tuple[PcieLink, ...]:
    return parse_lspci_links(read_text(path), str(path))


# -- ibstat -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IbPort:
    ca: str
    port: int
    state: str
    physical_state: str
    rate_gbps: float | None
    link_layer: str
    line: int

    @property
    def active(self) -> bool:
        return self.state.lower() == "active"


_CA = re.compile(r"^CA\s+'([^']+)'\s*$")
_PORT = re.compile(r"^Port\s+(\d+):\s*$")
_KEY = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(.*)$")


def parse_ibstat(text: str, source: str) -> tuple[IbPort, ...]:
    """Every port of every CA in ``ibstat`` output (other tools' output around it is skipped)."""
    no_huge_numbers(text, source)
    ports: list[IbPort] = []
    ca = ""
    current: dict[str, str] | None = None
    port_line = 0
    inside = False

    def close() -> None:
        if current is None:
            return
        rate = None
        if current.get("Rate"):
            rate = finite(current["Rate"].split()[0], source, port_line, "Rate")
        if "State" not in current:
            raise ParseError(source, port_line, f"{ca} port {current['port']} has no State line")
        ports.append(
            IbPort(
                ca,
                int(current["port"]),
                current.get("State", ""),
                current.get("Physical state", ""),
                rate,
                current.get("Link layer", ""),
                port_line,
            )
        )

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if m := _CA.match(line):
            close()
            current, ca, inside = None, m.group(1), True
            continue
        if not inside:
            continue
        if m := _PORT.match(line):
            close()
            current, port_line = {"port": m.group(1)}, number
            continue
        m = _KEY.match(line)
        if not m:
            if raw[:1] not in (" ", "\t"):  # unindented: another tool's output follows
                close()
                current, inside = None, False
                continue
            raise ParseError(source, number, "not an ibstat line (expected 'Key: value')", raw)
        if current is not None:
            current[m.group(1)] = m.group(2).strip()
            if m.group(1) == "Rate":
                finite((m.group(2).split() or [""])[0], source, number, "Rate")
    close()
    if not ports:
        raise ParseError(source, None, "lists no CA ports; is it ibstat output?")
    return tuple(ports)


def parse_ibstat_file(path: str | Path) -> tuple[IbPort, ...]:
    return parse_ibstat(read_text(path), str(path))


# -- ibv_devinfo ------------------------------------------------------------------------------

_HCA_ID = re.compile(r"^hca_id:\s*(\S+)")
_DEV_PORT = re.compile(r"^port:\s*(\d+)")
_ACTIVE_MTU = re.compile(r"^active_mtu:\s*(\d+)")


def parse_ibv_devinfo(text: str, source: str) -> tuple[tuple[str, int, int], ...]:
    """(device, port, active MTU) of every port in ``ibv_devinfo`` output."""
    no_huge_numbers(text, source)
    out = []
    hca, port = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if m := _HCA_ID.match(line):
            hca, port = m.group(1), 0
        elif m := _DEV_PORT.match(line):
            port = int(m.group(1))
        elif line.startswith("active_mtu:"):
            m = _ACTIVE_MTU.match(line)
            if not m or not hca or not port:
                raise ParseError(source, number, "an active_mtu line outside a device port", raw)
            out.append((hca, port, int(m.group(1))))
    if not out:
        raise ParseError(source, None, "has no active_mtu lines; is it ibv_devinfo output?")
    return tuple(out)


def parse_ibv_devinfo_file(path: str | Path) -> tuple[tuple[str, int, int], ...]:
    return parse_ibv_devinfo(read_text(path), str(path))


# -- lsmod ---------------------------------------------------------------------------------------


def modules_loaded(text: str) -> frozenset[str]:
    """Module names in ``lsmod`` or ``/proc/modules`` output (empty text: none loaded)."""
    names = set()
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] != "Module" and re.fullmatch(r"[A-Za-z0-9_]+", parts[0]):
            names.add(parts[0])
    return frozenset(names)


__all__ = [
    "AcsControl",
    "AcsReport",
    "IbPort",
    "PcieLink",
    "modules_loaded",
    "parse_ibstat",
    "parse_ibstat_file",
    "parse_ibv_devinfo",
    "parse_ibv_devinfo_file",
    "parse_lspci_acs",
    "parse_lspci_acs_file",
    "parse_lspci_links",
    "parse_lspci_links_file",
]
