"""Parse link-quality counters: ibdiagnet's BER table, ``ethtool -S`` and SONiC FEC statistics.

- ``ibdiagnet2.net_dump_ext`` (written by ``ibdiagnet --get_phy_info``, NVIDIA ibdiagnet User
  Manual, PHY Diagnostics): one line per port, fields separated by ``:``, under the header
  ``Ty : # : #IB : GUID : LID : Sta : PhysSta : LWA : LSA : Conn LID (#) : FEC mode : RTR :
  Raw BER : Effective BER : Symbol BER : Symbol Err : Effective Err : Node Desc``; the node
  description is last and may itself hold ``:`` (``MF0;leaf01:MQM9700/U1``). Columns are found
  by their header name, so an ibdiagnet that adds or moves one is still read.
- ``ethtool -S <netdev>``: ``NIC statistics:`` then ``     name: value`` lines; the mlx5 names
  are those of Linux Documentation/networking/device_drivers/ethernet/mellanox/mlx5/counters.rst
  (``rx_corrected_bits_phy``, ``rx_pcs_symbol_err_phy``, ``rx_err_lane_<l>_phy``, ...).
- ``ibqueryerrors`` (infiniband-diags): ``Errors for 0x<guid> "<switch>"`` or ``Errors for
  "<CA>"`` (older: ``Errors for 0x<guid> "<node>"``), then per port ``   GUID 0x<guid> port
  <n>: [LinkDownedCounter == 2] [SymbolErrorCounter == 5 (5.000 )]`` (rdma-core
  infiniband-diags/ibqueryerrors.c); ports without errors are not printed.
- SONiC ``show interfaces counters fec-stats``: a table headed ``IFACE STATE FEC_CORR
  FEC_UNCORR FEC_SYMBOL_ERR ...`` over a dashed rule, counts with thousands commas, ``N/A``
  where the platform has no counter (sonic-utilities ``scripts/portstat``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from railplan.field.common import ParseError, finite, no_huge_numbers, read_text


@dataclass(frozen=True, slots=True)
class IbPortBer:
    """One port of ``ibdiagnet2.net_dump_ext``: its node, number and BER figures."""

    desc: str
    port: int
    guid: str
    raw_ber: float | None
    effective_ber: float | None
    symbol_ber: float | None
    symbol_errors: int
    effective_errors: int
    line: int


_IB_COLUMNS = ("Raw BER", "Effective BER", "Symbol BER", "Symbol Err", "Effective Err")


def parse_net_dump_ext_file(path: str | Path) -> list[IbPortBer]:
    return parse_net_dump_ext(read_text(path), str(path))


def parse_net_dump_ext(text: str, source: str) -> list[IbPortBer]:
    """Every port line of an ``ibdiagnet2.net_dump_ext``; ParseError without its header."""
    no_huge_numbers(text, source)
    header: list[str] = []
    ports: list[IbPortBer] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or (line.startswith("#") and header):
            continue
        cells = [c.strip() for c in line.split(":")]
        if not header:
            if "Effective BER" in cells and "Node Desc" in cells:
                header = cells
                missing = [c for c in _IB_COLUMNS if c not in header]
                if missing:
                    raise ParseError(source, n, f"no {', '.join(missing)} column", line)
            continue
        if len(cells) < len(header):
            raise ParseError(source, n, f"{len(cells)} fields, the header has {len(header)}", line)
        last = len(header) - 1
        row = dict(zip(header[:last], cells[:last], strict=True))
        row["Node Desc"] = ":".join(cells[last:]).strip().strip('"')
        port = row.get("#IB", "")  # the InfiniBand port number; "#" may be a label (sw1p1)
        if not port.isdecimal():
            port = row.get("#", "")
        if not port.isdecimal():
            raise ParseError(source, n, "no port number in '#' or '#IB'", line)
        ports.append(
            IbPortBer(
                desc=row["Node Desc"],
                port=int(port),
                guid=row.get("GUID", ""),
                raw_ber=_ber(row["Raw BER"], source, n),
                effective_ber=_ber(row["Effective BER"], source, n),
                symbol_ber=_ber(row["Symbol BER"], source, n),
                symbol_errors=_count(row["Symbol Err"], source, n),
                effective_errors=_count(row["Effective Err"], source, n),
                line=n,
            )
        )
    if not header:
        raise ParseError(source, None, "no 'Ty : # : ... : Effective BER : ... : Node Desc' header")
    return ports


def _ber(cell: str, source: str, line: int) -> float | None:
    if cell.upper() in ("N/A", "NA", "-", ""):
        return None
    return finite(cell, source, line, "a BER")


def _count(cell: str, source: str, line: int) -> int:
    if cell.upper() in ("N/A", "NA", "-", ""):
        return 0
    if not re.fullmatch(r"\d+", cell.replace(",", "")):
        raise ParseError(source, line, "an error count is not a whole number", cell)
    return int(cell.replace(",", ""))


_QE_NODE = re.compile(r'^Errors for (?:0x[0-9a-fA-F]+\s+)?"(.*)"\s*$')
_QE_PORT = re.compile(r"^\s+GUID\s+0x[0-9a-fA-F]+\s+port\s+(\d+|ALL):(.*)$")
_QE_COUNTER = re.compile(r"\[(\w+)\s*==\s*(\d+)(?:\s*\([^)]*\))?\]")


@dataclass(frozen=True, slots=True)
class IbPortErrors:
    """One port of ``ibqueryerrors``: its node description, port and error counters."""

    desc: str
    port: int
    counters: dict[str, int]
    line: int


def parse_ibqueryerrors_file(path: str | Path) -> list[IbPortErrors]:
    return parse_ibqueryerrors(read_text(path), str(path))


def parse_ibqueryerrors(text: str, source: str) -> list[IbPortErrors]:
    """Every port ``ibqueryerrors`` printed (the ports with a counter above its threshold)."""
    no_huge_numbers(text, source)
    out: list[IbPortErrors] = []
    desc: str | None = None
    for n, raw in enumerate(text.splitlines(), start=1):
        if m := _QE_NODE.match(raw):
            desc = m.group(1)
            continue
        m = _QE_PORT.match(raw)
        if not m or m.group(1) == "ALL":
            continue
        if desc is None:
            raise ParseError(source, n, "a port line before any 'Errors for' line", raw)
        counters = {k: int(v) for k, v in _QE_COUNTER.findall(m.group(2))}
        out.append(IbPortErrors(desc, int(m.group(1)), counters, n))
    return out


_STAT = re.compile(r"^\s*([A-Za-z0-9_.\[\]-]+):\s*(-?\d+)\s*$")


def parse_ethtool_stats_file(path: str | Path) -> dict[str, int]:
    return parse_ethtool_stats(read_text(path), str(path))


def parse_ethtool_stats(text: str, source: str) -> dict[str, int]:
    """``ethtool -S`` counters by name; ParseError when the output holds none (the netdev was
    missing, or ethtool failed)."""
    no_huge_numbers(text, source)
    stats: dict[str, int] = {}
    for line in text.splitlines():
        m = _STAT.match(line)
        if m:
            stats[m.group(1)] = int(m.group(2))
    if not stats:
        first = text.strip().splitlines()[0] if text.strip() else "nothing"
        raise ParseError(source, 1, "no 'name: value' counters from ethtool -S", first)
    return stats


@dataclass(frozen=True, slots=True)
class FecRow:
    """One interface of SONiC ``show interfaces counters fec-stats``."""

    iface: str
    state: str
    corrected: int | None
    uncorrectable: int | None
    symbol_errors: int | None


def parse_fec_stats_file(path: str | Path) -> dict[str, FecRow]:
    return parse_fec_stats(read_text(path), str(path))


def parse_fec_stats(text: str, source: str) -> dict[str, FecRow]:
    """Rows of ``show interfaces counters fec-stats`` by interface name."""
    no_huge_numbers(text, source)
    header: list[str] = []
    rows: dict[str, FecRow] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        cells = line.split()
        if not cells or set(line.strip()) <= {"-", " "}:
            continue
        if not header:
            if cells[0] == "IFACE" and "FEC_UNCORR" in cells:
                header = cells
            continue
        if len(cells) < 5:
            continue  # a trailer ("Reminder: ...")
        col = {name: i for i, name in enumerate(header)}
        counts = [_fec_count(cells, col, k, source, n) for k in _FEC_COLUMNS]
        rows[cells[0]] = FecRow(cells[0], cells[1], *counts)
    if not header:
        raise ParseError(source, None, "no 'IFACE STATE FEC_CORR FEC_UNCORR ...' header")
    return rows


_FEC_COLUMNS = ("FEC_CORR", "FEC_UNCORR", "FEC_SYMBOL_ERR")


def _fec_count(
    cells: list[str], col: dict[str, int], name: str, source: str, line: int
) -> int | None:
    """A count cell of the fec-stats table: ``130,402`` -> 130402, ``N/A`` -> None."""
    i = col.get(name)
    cell = cells[i] if i is not None and i < len(cells) else "N/A"
    if cell == "N/A":
        return None
    if not re.fullmatch(r"[\d,]+", cell):
        raise ParseError(source, line, f"{name} is not a count", cell)
    return int(cell.replace(",", ""))
