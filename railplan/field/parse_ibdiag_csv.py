"""Parse ibdiagnet's ``ibdiagnet2.db_csv`` (nodes, firmware, cable modules) and ``ibdiagnet2.cables``.

``ibdiagnet2.db_csv`` is a set of CSV tables, each between a ``START_<NAME>`` and an
``END_<NAME>`` line with its header row first. The columns railplan reads, and where their
names come from:

- ``NODES``: ``NodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,
  PortGUID,DeviceID,...`` (NodeType 1 = channel adapter, 2 = switch; the header as public
  db_csv readers quote it, e.g. the Rust ``NodeRecord`` and the Go log-parser tests found by
  railplan's source search);
- ``NODES_INFO`` (vendor-specific General Info): ``NodeGUID``, ``HWInfo_DeviceID``,
  ``FWInfo_PSID`` and the firmware version as hex ``FWInfo_Extended_Major/Minor/SubMinor``
  (older ibdiagnet: ``FWInfo_Major/Minor/SubMinor``), as public readers of real captures
  compute it (``int(x, 16)`` joined by dots);
- ``CABLE_INFO`` (``ibdiagnet --get_cable_info``): ``NodeGuid,PortGuid,PortNum`` and the
  fields of ibutils2's own ``CableInfoRecord::CombinedCableInfo`` (NVIDIA ibdiagnet source,
  the record its db_csv reader fills): ``Vendor, PN, SN, Rev, FWVersion, Temperature,
  RX1Power..RX8Power, RXPowerHighThresh, RXPowerLowThresh, AlarmTemperatureHighThresh,
  AlarmTemperatureLowThresh, WarnTemperatureHighThresh, WarnTemperatureLowThresh`` and the
  module's own latched flags ``HighTemperatureAlarm, LowTemperatureAlarm,
  HighRX<n>PowerAlarm, LowRX<n>PowerAlarm`` (SFF-8636/CMIS alarm flags).

Not verified against a capture: the units ibdiagnet writes RX<n>Power and RXPower*Thresh in
(the record stores both as the module's raw 16-bit words), and whether the one RX threshold
pair is the module's alarm or warning pair. The grader therefore compares each lane with the
threshold pair read in the same row (same units either way), names the pair "the module's RX
thresholds", and counts the module's own alarm flags separately. Cells may be ``N/A``.

``ibdiagnet2.cables`` (text, one stanza per port): a dashed rule, ``Port=<n> Lid=<lid>
GUID=<guid> Port Name=<desc>/P<n>``, a dashed rule, then ``Key: value`` lines (``Vendor``,
``PN``, ``SN``, ``Temperature: 45C``, ``FW Version: 46.120.0``, ``RX1 Power: 0.851 mW,
-0.700 dBm``), as ibdiagnet's cable-diagnostics page documents the format. That format shows
no thresholds; a stanza without them is read, not judged.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from railplan.field.common import ParseError, no_huge_numbers, read_text

Sections = dict[str, list[dict[str, str]]]


def parse_db_csv(text: str, source: str = "ibdiagnet2.db_csv") -> Sections:
    """Every ``START_<NAME>`` .. ``END_<NAME>`` table of a db_csv, rows as dicts by header."""
    no_huge_numbers(text, source)
    out: Sections = {}
    name = ""
    header: list[str] = []
    for n, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if len(row) == 1 and row[0].startswith("START_"):
            name, header = row[0][6:], []
            out.setdefault(name, [])
            continue
        if len(row) == 1 and row[0].startswith("END_"):
            name = ""
            continue
        if not name or not row or row == [""]:
            continue
        if not header:
            header = [c.strip() for c in row]
            continue
        if len(row) != len(header):
            raise ParseError(source, n, f"{len(row)} cells, the {name} header has {len(header)}")
        out[name].append({k: v.strip() for k, v in zip(header, row, strict=True)})
    if not out:
        raise ParseError(source, None, "no START_<TABLE> section: is it ibdiagnet2.db_csv?")
    return out


def parse_db_csv_file(path: str | Path) -> Sections:
    return parse_db_csv(read_text(path), str(path))


@dataclass(frozen=True, slots=True)
class IbNodeFirmware:
    """One node of the fabric with the firmware version its General Info reports."""

    guid: str
    desc: str
    switch: bool
    model: str
    version: str
    psid: str


def guid_key(text: str) -> str:
    """``0x0002C903000E0B72`` and ``2c903000e0b72`` -> the same key."""
    t = text.strip().lower()
    t = t[2:] if t.startswith("0x") else t
    return t.lstrip("0") or "0"


def node_firmware(sections: Sections) -> list[IbNodeFirmware]:
    """Every node of ``NODES`` with its firmware from ``NODES_INFO`` ('' when not reported)."""
    info = {
        guid_key(r.get("NodeGUID", r.get("NodeGuid", ""))): r
        for r in sections.get("NODES_INFO", [])
    }
    out = []
    for r in sections.get("NODES", []):
        guid = r.get("NodeGUID", r.get("NodeGuid", ""))
        i = info.get(guid_key(guid), {})
        model = i.get("HWInfo_DeviceID") or r.get("DeviceID", "")
        out.append(
            IbNodeFirmware(
                guid=guid,
                desc=r.get("NodeDesc", "").strip('"'),
                switch=r.get("NodeType", "").strip() == "2",
                model=_number_text(model),
                version=_fw_version(i),
                psid=i.get("FWInfo_PSID", ""),
            )
        )
    return out


def _fw_version(row: dict[str, str]) -> str:
    for prefix in ("FWInfo_Extended_", "FWInfo_"):
        parts = [row.get(prefix + k, "") for k in ("Major", "Minor", "SubMinor")]
        if all(parts) and not any(p.upper() == "N/A" for p in parts):
            try:
                nums = [int(p, 16) if p.lower().startswith("0x") else int(p) for p in parts]
            except ValueError:
                return ".".join(parts)
            if any(nums):
                return ".".join(str(x) for x in nums)
    return ""


def _number_text(cell: str) -> str:
    """A DeviceID cell, hex or decimal, as decimal text (``0xd2f2`` -> ``54002``)."""
    c = cell.strip()
    try:
        return str(int(c, 16)) if c.lower().startswith("0x") else str(int(c))
    except ValueError:
        return c


@dataclass(frozen=True, slots=True)
class IbModule:
    """One cable end's module as ibdiagnet read it, with its own thresholds and alarm flags."""

    node_guid: str
    port: int
    desc: str
    vendor: str
    pn: str
    sn: str
    fw: str
    temperature_c: float | None
    #: (high alarm, low alarm) read from the module, None when not reported
    temp_alarm: tuple[float | None, float | None]
    rx: tuple[float, ...]
    #: (high, low) RX threshold pair of the row, in the row's own units
    rx_limits: tuple[float | None, float | None]
    #: the module's own alarm flags that are set (``HighTemperatureAlarm``, ``LowRX2PowerAlarm``)
    flags: tuple[str, ...]

    @property
    def judged(self) -> bool:
        """Whether anything can be judged: a reading with thresholds, or alarm flags."""
        hi, lo = self.temp_alarm
        rhi, rlo = self.rx_limits
        temp = self.temperature_c is not None and hi is not None and lo is not None and hi > lo
        rx = bool(self.rx) and rhi is not None and rlo is not None and rhi > rlo
        return temp or rx or bool(self.flags)

    def findings(self) -> list[str]:
        """Readings outside the module's thresholds, and the alarm flags the module set."""
        out = []
        t, (hi, lo) = self.temperature_c, self.temp_alarm
        if t is not None and hi is not None and lo is not None and hi > lo and not lo <= t <= hi:
            out.append(f"temperature {t:g} C outside its alarm range {lo:g}..{hi:g} C")
        rhi, rlo = self.rx_limits
        if rhi is not None and rlo is not None and rhi > rlo:
            for lane, p in enumerate(self.rx, 1):
                if not rlo <= p <= rhi:
                    out.append(f"lane {lane} RX {p:g} outside its RX thresholds {rlo:g}..{rhi:g}")
        if self.flags:
            out.append("alarm flags set: " + ", ".join(self.flags))
        return out


_FLAG = re.compile(r"^(High|Low)(Temperature|RX\d+Power)Alarm$")


def cable_modules(sections: Sections) -> list[IbModule]:
    """Every ``CABLE_INFO`` row as an ``IbModule``, named by its node's description."""
    desc = {guid_key(r.get("NodeGUID", "")): r.get("NodeDesc", "").strip('"')
            for r in sections.get("NODES", [])}  # fmt: skip
    out = []
    for r in sections.get("CABLE_INFO", []):
        guid = r.get("NodeGuid", r.get("NodeGUID", ""))
        port = r.get("PortNum", r.get("PortNumber", "0"))
        lanes = []
        for k in range(1, 9):
            v = _num(r.get(f"RX{k}Power", ""))
            if v is not None:
                lanes.append(v)
        flags = tuple(k for k, v in r.items() if _FLAG.match(k) and v not in ("", "0", "N/A"))
        out.append(
            IbModule(
                node_guid=guid,
                port=int(port) if port.isdecimal() else 0,
                desc=desc.get(guid_key(guid), guid),
                vendor=r.get("Vendor", ""),
                pn=r.get("PN", ""),
                sn=r.get("SN", ""),
                fw=_na(r.get("FWVersion", "")),
                temperature_c=_num(r.get("Temperature", "")),
                temp_alarm=(_num(r.get("AlarmTemperatureHighThresh", "")),
                            _num(r.get("AlarmTemperatureLowThresh", ""))),
                rx=tuple(lanes),
                rx_limits=(_num(r.get("RXPowerHighThresh", "")),
                           _num(r.get("RXPowerLowThresh", ""))),
                flags=flags,
            )
        )  # fmt: skip
    return out


_NUMBER = re.compile(r"^\s*(-?\d+(?:\.\d+)?)")


def _num(cell: str) -> float | None:
    """``45C``, ``45``, ``0.851 mW, -0.700 dBm`` -> the first number; ``N/A`` -> None."""
    m = _NUMBER.match(cell)
    return float(m.group(1)) if m else None


def _na(cell: str) -> str:
    return "" if cell.strip().upper() in ("N/A", "NA", "") else cell.strip()


_STANZA = re.compile(r"^Port=(\d+)\s+Lid=(\S+)\s+GUID=(\S+)\s+Port Name=(.*)$")


def parse_cables_text(text: str, source: str = "ibdiagnet2.cables") -> list[IbModule]:
    """The stanzas of an ``ibdiagnet2.cables``: one module per port, thresholds if printed."""
    no_huge_numbers(text, source)
    out: list[IbModule] = []
    head: tuple[str, int, str] | None = None
    fields: dict[str, str] = {}

    def flush() -> None:
        if head is None:
            return
        guid, port, name = head
        lanes = tuple(v for k in range(1, 9)
                      if (v := _num(fields.get(f"RX{k} Power", ""))) is not None)  # fmt: skip
        out.append(
            IbModule(
                node_guid=guid, port=port, desc=re.sub(r"/P\d+$", "", name).strip(),
                vendor=fields.get("Vendor", ""), pn=fields.get("PN", ""), sn=fields.get("SN", ""),
                fw=_na(fields.get("FW Version", "")),
                temperature_c=_num(fields.get("Temperature", "")),
                temp_alarm=(None, None), rx=lanes, rx_limits=(None, None), flags=(),
            )
        )  # fmt: skip

    for raw in text.splitlines():
        line = raw.strip()
        if m := _STANZA.match(line):
            flush()
            head, fields = (m.group(3), int(m.group(1)), m.group(4)), {}
        elif head is not None and ":" in line and not line.startswith("-"):
            key, _, value = line.partition(":")
            fields[key.strip()] = value.strip()
    flush()
    if not out and text.strip():
        raise ParseError(source, None, "no 'Port=<n> Lid=... GUID=... Port Name=...' stanza")
    return out


__all__ = [
    "IbModule",
    "IbNodeFirmware",
    "cable_modules",
    "guid_key",
    "node_firmware",
    "parse_cables_text",
    "parse_db_csv",
    "parse_db_csv_file",
]
