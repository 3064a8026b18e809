"""Parse InfiniBand discovery: ``ibnetdiscover`` topology files and ``iblinkinfo`` output.

Both list every cabled port of the subnet (each link once from each end), with the neighbour's
GUID, node description and the active width and speed, from which the link rate follows
(``4xNDR`` = 4 lanes x 100G = 400G).
"""

from __future__ import annotations

import re
from pathlib import Path

from railplan.field.common import (
    Neighbors,
    ParseError,
    Sighting,
    finite,
    no_huge_numbers,
    read_text,
)
from railplan.field.names import split_ib_description

#: data rate per lane of each InfiniBand speed, Gb/s
LANE_GBPS = {
    "SDR": 2.5,
    "DDR": 5.0,
    "QDR": 10.0,
    "FDR10": 10.0,
    "FDR": 14.0,
    "EDR": 25.0,
    "HDR": 50.0,
    "NDR": 100.0,
    "XDR": 200.0,
}
#: iblinkinfo prints the signalling rate per lane; these are the data rates they carry
_SIGNAL_GBPS = {
    2.5: 2.5,
    5.0: 5.0,
    10.0: 10.0,
    14.0625: 14.0,
    25.78125: 25.0,
    53.125: 50.0,
    106.25: 100.0,
    212.5: 200.0,
}

_NODE = re.compile(
    r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR]-[0-9A-Fa-f]+)"\s*(?:#\s*"((?:[^"\\]|\\.)*)")?.*$'
)
_PORT = re.compile(
    r"^\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9A-Fa-f]+)\))?\s+"
    r'"([SHR]-[0-9A-Fa-f]+)"\[(\d+)\](?:\[ext \d+\])?\s*(?:\(([0-9A-Fa-f]+)\))?\s*'
    r"(?:#(.*))?$"
)
_WIDTH_SPEED = re.compile(r"\b(1|2|4|8|12)x(SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR|\?\?\?)\b")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_IGNORED = re.compile(
    r"^(vendid|devid|sysimgguid|switchguid|caguid|rtguid|Chassis|Hostname:|Topology file)"
)


def ib_rate_gbps(width: str, speed: str) -> float | None:
    """``4`` x ``NDR`` -> 400.0; None when the speed is unknown (``???``)."""
    lane = LANE_GBPS.get(speed.upper())
    if lane is None:
        return None
    return int(width.rstrip("xX")) * lane


def _ports_of(desc: str, port: int, port_guid: str | None) -> tuple[str, ...]:
    """Port name candidates of a CA port: ``mlx5_0:1``, ``mlx5_0`` (port 1), then the GUID."""
    _host, hca = split_ib_description(desc)
    names = []
    if hca:
        names.append(f"{hca}:{port}")
        if port == 1:
            names.append(hca)
    if port_guid:
        names.append(f"0x{port_guid.lower()}")
    names.append(str(port))
    return tuple(names)


def parse_ibnetdiscover_file(path: str | Path) -> Neighbors:
    return parse_ibnetdiscover(read_text(path), str(path))


def parse_ibnetdiscover(text: str, source: str) -> Neighbors:
    """Sightings of every cabled port in an ``ibnetdiscover`` topology file."""
    no_huge_numbers(text, source)
    out: list[Sighting] = []
    node: tuple[str, str, str] | None = None  # (kind, guid name, description)
    seen_node = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or _IGNORED.match(line):
            continue
        m = _NODE.match(line)
        if m:
            kind, guid, desc = m.group(1), m.group(3), (m.group(4) or "").replace('\\"', '"')
            node = (kind, guid, desc)
            seen_node = True
            continue
        m = _PORT.match(line)
        if m:
            if node is None:
                raise ParseError(source, number, "a port line before any Switch/Ca line", raw)
            out.append(_ibnd_port(m, node, source, number, raw))
            continue
        raise ParseError(
            source,
            number,
            "not an ibnetdiscover line (expected Switch/Ca, [port] or key=value)",
            raw,
        )
    if not seen_node:
        raise ParseError(source, None, "holds no Switch or Ca entries; is it ibnetdiscover output?")
    return Neighbors(tuple(out), full_fabric=True)


def _ibnd_port(
    m: re.Match[str], node: tuple[str, str, str], source: str, number: int, raw: str
) -> Sighting:
    kind, guid, desc = node
    port, local_guid = int(m.group(1)), m.group(2)
    remote_guid, remote_port, remote_port_guid = m.group(3), int(m.group(4)), m.group(5)
    comment = m.group(6) or ""
    if port < 1 or remote_port < 1:
        raise ParseError(source, number, "port numbers start at 1", raw)
    quoted = _QUOTED.findall(comment)
    remote_desc = quoted[0].replace('\\"', '"') if quoted else ""
    ws = _WIDTH_SPEED.findall(comment)
    rate = ib_rate_gbps(*ws[-1]) if ws else None
    if kind == "Switch":
        local_ports: tuple[str, ...] = (str(port),)
    else:
        local_ports = _ports_of(desc, port, local_guid)
    if remote_guid.startswith("S-"):
        remote_ports: tuple[str, ...] = (str(remote_port),)
    else:
        remote_ports = _ports_of(remote_desc, remote_port, remote_port_guid)
    return Sighting(
        local_names=tuple(n for n in (desc, guid) if n),
        local_ports=local_ports,
        remote_names=tuple(n for n in (remote_desc, remote_guid) if n),
        remote_ports=remote_ports,
        rate_gbps=rate,
        source=f"{source} line {number}",
    )


# -- iblinkinfo ---------------------------------------------------------------------------------

_LI_SWITCH = re.compile(r"^Switch:\s+0x([0-9A-Fa-f]+)\s+(.*):\s*$")
_LI_CA = re.compile(r"^(CA|Router):\s+(.*):\s*$")
_LI_PORT = re.compile(
    r"^\s*(?:0x([0-9A-Fa-f]+)\s+)?(?:\"([^\"]*)\"\s+)?(\d+)\s+(\d+)\[\s*\d*\s*\]\s*"
    r"==\(([^)]*)\)(?:\s*\(HOQ:\d+ VL_Stall:\d+\))?==>\s*(.*)$"
)
_LI_REMOTE = re.compile(
    r"^(?:0x([0-9A-Fa-f]+)\s+)?(\d+)\s+(\d+)\[\s*\d*\s*\]\s+\"((?:[^\"\\]|\\.)*)\"\s*(?:\(.*\))?\s*$"
)
_LI_LINK = re.compile(r"^\s*(\d+)X\s+([\d.]+)\s*Gbps(?:\s*\((FDR10)\))?\s+(\w+)\s*/\s*(\w+)\s*$")
_LI_DOWN = re.compile(r"^\s*(\w+)\s*/\s*(\w+)\s*$")


def parse_iblinkinfo_file(path: str | Path) -> Neighbors:
    return parse_iblinkinfo(read_text(path), str(path))


def parse_iblinkinfo(text: str, source: str) -> Neighbors:
    """Sightings of every linked port in ``iblinkinfo`` output (default or ``-l`` line mode)."""
    no_huge_numbers(text, source)
    out: list[Sighting] = []
    node: tuple[str, str, str] | None = None  # (kind, guid, description)
    any_port = False
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        m = _LI_SWITCH.match(raw.strip())
        if m:
            node = ("Switch", m.group(1), m.group(2).strip())
            continue
        m = _LI_CA.match(raw.strip())
        if m and "==(" not in raw:
            node = ("CA", "", m.group(2).strip())
            continue
        m = _LI_PORT.match(raw)
        if not m:
            raise ParseError(
                source, number, "not an iblinkinfo line (expected Switch:/CA: or a port)", raw
            )
        any_port = True
        sighting = _li_port(m, node, source, number, raw)
        if sighting is not None:
            out.append(sighting)
    if not any_port:
        raise ParseError(source, None, "holds no port lines; is it iblinkinfo output?")
    return Neighbors(tuple(out), full_fabric=True)


def _li_port(
    m: re.Match[str], node: tuple[str, str, str] | None, source: str, number: int, raw: str
) -> Sighting | None:
    port_guid, line_desc, _lid, port_s, link, remote = m.groups()
    if line_desc is not None:  # -l line mode names the node on every line
        kind = "Switch" if not _looks_like_ca(line_desc) else "CA"
        node = (kind, "", line_desc.strip())
    if node is None:
        raise ParseError(source, number, "a port line before any Switch:/CA: header", raw)
    kind, guid, desc = node
    port = int(port_s)
    state = _LI_LINK.match(link)
    if state is None:
        if not _LI_DOWN.match(link):
            raise ParseError(source, number, "cannot read the link state between ==( )==>", raw)
        return None  # port down: no cable seen
    width, signal, fdr10 = state.group(1), float(state.group(2)), state.group(3)
    lane = 10.0 if fdr10 else _SIGNAL_GBPS.get(signal, round(signal))
    rate = int(width) * lane
    r = _LI_REMOTE.match(remote.strip())
    if r is None:
        if "Port not available" in remote or not remote.strip() or remote.strip().startswith("["):
            return None
        raise ParseError(source, number, "cannot read the remote end after ==>", raw)
    r_guid, _rlid, r_port_s, r_desc = r.groups()
    r_desc = r_desc.replace('\\"', '"')
    r_port = int(r_port_s)
    if kind == "Switch":
        local_ports: tuple[str, ...] = (str(port),)
    else:
        local_ports = _ports_of(desc, port, port_guid)
    remote_ports = _ports_of(r_desc, r_port, None) if _looks_like_ca(r_desc) else (str(r_port),)
    return Sighting(
        local_names=tuple(n for n in (desc, f"0x{guid}" if guid else "") if n),
        local_ports=local_ports,
        remote_names=tuple(n for n in (r_desc, f"0x{r_guid}" if r_guid else "") if n),
        remote_ports=remote_ports,
        rate_gbps=float(finite(str(rate), source, number, "the link rate")),
        source=f"{source} line {number}",
    )


def _looks_like_ca(desc: str) -> bool:
    return split_ib_description(desc)[1] is not None


__all__ = [
    "LANE_GBPS",
    "ib_rate_gbps",
    "parse_iblinkinfo",
    "parse_iblinkinfo_file",
    "parse_ibnetdiscover",
    "parse_ibnetdiscover_file",
]
