"""Parse perftest output: ``ib_write_bw`` (and the other ``*_bw``) and ``ib_write_lat`` (``*_lat``).

Bandwidth tables are in MB/sec by default (perftest's MB is 2^20 bytes) or Gb/sec with
``--report_gbits``; both are returned in Gb/s. Latency tables are in usec. Lines between the
header and the rows (``Conflicting CPU frequency values detected ...``) and prefixes added by
launchers (``(worker1, rank=1) ...``) are tolerated; a row cut short is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from railplan.field.common import ParseError, finite, no_huge_numbers, read_text

#: Gb/s per unit of each perftest bandwidth column
_BW_UNIT = {"gb/sec": 1.0, "mb/sec": 8 * 2**20 / 1e9, "mib/sec": 8 * 2**20 / 1e9}

_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[([^\]]+)\]\s+BW average\[([^\]]+)\]")
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
_ROW = re.compile(r"(?:^|\s)(\d+)\s+(\d+)((?:\s+[-+\w.]+)+)\s*$")
_DEVICE = re.compile(r"\bDevice\s*:\s*(\S+)")
_LINK = re.compile(r"\bLink type\s*:\s*(\S+)")
_TITLE = re.compile(r"^\s*(\S+ (?:BW|Latency) Test)\s*$")
_FAILURE = re.compile(
    r"(Couldn't|Unable to|Failed to|failed to|Error:|error:|Connection refused|timed out)"
)
_LAT_COLUMNS = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p999")


@dataclass(frozen=True, slots=True)
class BwRow:
    size: int
    iterations: int
    peak_gbps: float
    avg_gbps: float
    msg_rate_mpps: float | None


@dataclass(frozen=True, slots=True)
class LatRow:
    size: int
    iterations: int
    t_min: float
    t_max: float
    t_typical: float
    t_avg: float | None
    t_stdev: float | None
    p99: float | None
    p999: float | None


@dataclass(frozen=True)
class PerftestResult:
    """One perftest run; ``kind`` is ``bw`` or ``lat``."""

    source: str
    kind: str
    title: str
    device: str
    link_type: str
    bw_rows: tuple[BwRow, ...] = ()
    lat_rows: tuple[LatRow, ...] = ()
    errors: tuple[str, ...] = ()

    def metric(self, name: str) -> float | None:
        """Figures of the largest message size: ``bw_avg_gbps``, ``bw_peak_gbps``, ``lat_*_us``."""
        if name in ("bw_avg_gbps", "bw_peak_gbps"):
            if not self.bw_rows:
                return None
            row = max(self.bw_rows, key=lambda r: (r.size, r.avg_gbps))
            value = row.avg_gbps if name == "bw_avg_gbps" else row.peak_gbps
            if name == "bw_peak_gbps" and value == 0:  # --run_infinitely/-D print no peak
                value = row.avg_gbps
            return value
        if name.startswith("lat_") and name.endswith("_us"):
            if not self.lat_rows:
                return None
            lat = min(self.lat_rows, key=lambda r: r.size)  # the smallest message
            field = {"lat_p99_us": "p99", "lat_p999_us": "p999"}.get(name, "t_" + name[4:-3])
            figure = getattr(lat, field, None)
            return float(figure) if figure is not None else None
        raise KeyError(name)


def parse_perftest_file(path: str | Path) -> PerftestResult:
    return parse_perftest(read_text(path), str(path))


def parse_perftest(text: str, source: str) -> PerftestResult:
    """Parse the output of one perftest run (client or server side, or both concatenated)."""
    no_huge_numbers(text, source)
    kind = ""
    unit = 1.0
    title = device = link = ""
    bw: list[BwRow] = []
    lat: list[LatRow] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or set(line.strip()) <= {"-"}:
            continue
        if m := _TITLE.match(line):
            title = title or m.group(1)
            continue
        if m := _BW_HEADER.search(line):
            peak_unit = m.group(1).lower()
            if peak_unit not in _BW_UNIT:
                raise ParseError(source, number, f"unknown bandwidth unit [{m.group(1)}]", line)
            kind, unit = "bw", _BW_UNIT[peak_unit]
            continue
        if _LAT_HEADER.search(line):
            kind = "lat"
            continue
        if not device and (m := _DEVICE.search(line)):
            device = m.group(1)
        if not link and (m := _LINK.search(line)):
            link = m.group(1)
        if _FAILURE.search(line) and not _ROW.search(line):
            errors.append(f"line {number}: {line.strip()[:160]}")
            continue
        if not kind:
            continue
        m = _ROW.search(line)
        if not m or "[" in line or ":" in m.group(3):
            continue
        values = m.group(3).split()
        if kind == "bw":
            bw.append(_bw_row(m, values, unit, source, number, line))
        else:
            lat.append(_lat_row(m, values, source, number, line))
    if not bw and not lat:
        if errors:
            return PerftestResult(source, kind or "?", title, device, link, errors=tuple(errors))
        raise ParseError(
            source,
            None,
            "has no perftest result rows (#bytes #iterations ...); the run did not finish or "
            "this is not ib_write_bw/ib_write_lat output",
        )
    return PerftestResult(
        source, kind, title, device, link, tuple(bw), tuple(lat), errors=tuple(errors)
    )


def _bw_row(
    m: re.Match[str], values: list[str], unit: float, source: str, number: int, line: str
) -> BwRow:
    if len(values) < 2:
        raise ParseError(source, number, "a bandwidth row needs BW peak and BW average", line)
    peak = finite(values[0], source, number, "BW peak") * unit
    avg = finite(values[1], source, number, "BW average") * unit
    rate = finite(values[2], source, number, "MsgRate") if len(values) > 2 else None
    if peak < 0 or avg < 0:
        raise ParseError(source, number, "bandwidth cannot be negative", line)
    return BwRow(int(m.group(1)), int(m.group(2)), peak, avg, rate)


def _lat_row(m: re.Match[str], values: list[str], source: str, number: int, line: str) -> LatRow:
    if len(values) < 3:
        raise ParseError(source, number, "a latency row needs at least t_min t_max t_typical", line)
    nums = [finite(v, source, number, _LAT_COLUMNS[i]) for i, v in enumerate(values[:7])]
    if any(v < 0 for v in nums):
        raise ParseError(source, number, "latency cannot be negative", line)
    opt: list[float | None] = [*nums[3:], None, None, None, None]
    return LatRow(
        int(m.group(1)), int(m.group(2)), nums[0], nums[1], nums[2], opt[0], opt[1], opt[2], opt[3]
    )


__all__ = ["BwRow", "LatRow", "PerftestResult", "parse_perftest", "parse_perftest_file"]
