"""Parse nccl-tests results (the text table and the ``-J`` JSON file) and NCCL_DEBUG=INFO logs.

Text rows are ``size count type redop [root] time algbw busbw #wrong time algbw busbw #wrong``
(out-of-place, then in-place; GB/s). Lines that are not rows (NCCL INFO logs, launcher noise)
are skipped; a line that starts like a row but is cut or garbled is an error.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from railplan.field.common import ParseError, finite, line_of, load_json, no_huge_numbers, read_text

DTYPES = frozenset(
    [
        "int8",
        "uint8",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "half",
        "float",
        "double",
        "bfloat16",
        "fp8_e4m3",
        "fp8_e5m2",
        "f8e4m3",
        "f8e5m2",
        "char",
        "int",
        "uint",
    ]
)


@dataclass(frozen=True, slots=True)
class NcclRow:
    """One message size: out-of-place and in-place figures (GB/s, us); None where not run."""

    size: int
    count: int
    dtype: str
    redop: str
    oop_time_us: float | None
    oop_algbw: float | None
    oop_busbw: float | None
    oop_wrong: float | None
    ip_time_us: float | None
    ip_algbw: float | None
    ip_busbw: float | None
    ip_wrong: float | None
    line: int | None = None

    @property
    def busbw(self) -> float | None:
        values = [v for v in (self.oop_busbw, self.ip_busbw) if v is not None and not math.isnan(v)]
        return max(values) if values else None

    @property
    def algbw(self) -> float | None:
        values = [v for v in (self.oop_algbw, self.ip_algbw) if v is not None and not math.isnan(v)]
        return max(values) if values else None

    @property
    def wrong(self) -> float:
        return sum(v for v in (self.oop_wrong, self.ip_wrong) if v and not math.isnan(v))


@dataclass(frozen=True)
class NcclResult:
    """A whole nccl-tests run."""

    source: str
    collective: str
    rows: tuple[NcclRow, ...]
    avg_busbw: float | None = None
    out_of_bounds: int | None = None
    hosts: tuple[str, ...] = ()
    ranks: int = 0
    env: dict[str, str] = field(default_factory=dict)
    errors: tuple[str, ...] = ()

    @property
    def wrong(self) -> float:
        return sum(r.wrong for r in self.rows)

    def metric(self, name: str) -> float | None:
        """``busbw_gbs`` (at the largest size), ``peak_busbw_gbs``, ``avg_busbw_gbs``, ``algbw_gbs``."""
        sized = [r for r in self.rows if r.busbw is not None]
        if name == "avg_busbw_gbs":
            if self.avg_busbw is not None:
                return self.avg_busbw
            return sum(r.busbw or 0.0 for r in sized) / len(sized) if sized else None
        if not sized:
            return None
        largest = max(sized, key=lambda r: r.size)
        if name == "busbw_gbs":
            return largest.busbw
        if name == "peak_busbw_gbs":
            return max(r.busbw or 0.0 for r in sized)
        if name == "algbw_gbs":
            return largest.algbw
        raise KeyError(name)


_RANK = re.compile(r"^#\s+Rank\s+\d+\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(\S+)\s+device")
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_OOB = re.compile(r"^#\s*Out of bounds values\s*:\s*(\d+)")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(\S+)")
_FAIL = re.compile(r"(Test NCCL failure|Test failure|Test CUDA failure|NCCL WARN|NCCL error)", re.I)
_ROW_START = re.compile(r"^\s*(\d+)\s+(\d+)\s+([A-Za-z][\w]*)\s")


def parse_nccl_file(path: str | Path) -> NcclResult:
    """Parse an nccl-tests output file, text or ``-J`` JSON (recognised from the content)."""
    text = read_text(path)
    if text.lstrip().startswith("{"):
        return parse_nccl_json(text, str(path))
    return parse_nccl_text(text, str(path))


def parse_nccl_text(text: str, source: str) -> NcclResult:
    """Parse the text table nccl-tests prints on stdout."""
    no_huge_numbers(text, source)
    rows: list[NcclRow] = []
    hosts: list[str] = []
    errors: list[str] = []
    collective = ""
    avg = None
    oob = None
    counts_wrong = True
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            if re.search(r"\bsize\b.*\bcount\b.*\b(algbw|busbw)\b", stripped):
                counts_wrong = "#wrong" in stripped  # older versions print a max error instead
            if m := _RANK.match(stripped):
                hosts.append(m.group(1))
            elif m := _STARTING.match(stripped):
                collective = m.group(1)
            elif m := _OOB.match(stripped):
                oob = int(m.group(1))
            elif m := _AVG.match(stripped):
                avg = finite(m.group(1), source, number, "the average bus bandwidth")
            continue
        if _FAIL.search(stripped):
            errors.append(f"line {number}: {stripped[:160]}")
            continue
        m = _ROW_START.match(line)
        if m and m.group(3).lower() in DTYPES:
            row = _text_row(line, source, number)
            if not counts_wrong:
                row = dataclasses.replace(row, oop_wrong=None, ip_wrong=None)
            rows.append(row)
    if not collective:
        collective = _guess_collective(text)
    if not rows and not errors:
        raise ParseError(
            source,
            None,
            "has no nccl-tests result rows; the run did not finish or is not nccl-tests",
        )
    return NcclResult(
        source=source,
        collective=collective,
        rows=tuple(rows),
        avg_busbw=avg,
        out_of_bounds=oob,
        hosts=tuple(dict.fromkeys(hosts)),
        ranks=len(hosts),
        errors=tuple(errors),
    )


def _num(token: str, source: str, number: int, what: str) -> float | None:
    if token.upper() in ("N/A", "NA", "-"):
        return None
    try:
        value = float(token)
    except ValueError:
        raise ParseError(source, number, f"{what} is not a number", token) from None
    if math.isinf(value):
        raise ParseError(source, number, f"{what} is infinite", token)
    return value


def _text_row(line: str, source: str, number: int) -> NcclRow:
    tokens = line.split()
    if len(tokens) < 8:
        raise ParseError(source, number, "a result row is cut short", line)
    size, count, dtype, redop = int(tokens[0]), int(tokens[1]), tokens[2], tokens[3]
    rest = tokens[4:]
    if len(rest) % 2:  # a root column (-1 when unused) follows redop since nccl-tests 2.x
        rest = rest[1:]
    if len(rest) in (6, 10, 18):  # a trailing "YYYY-MM-DD HH:MM:SS" timestamp (-T)
        rest = rest[:-2]
    if len(rest) == 16:  # per-iteration columns (i_min i_max i_p99 i_cv) after each half
        rest = rest[0:4] + rest[8:12]
    names = ("time", "algbw", "busbw", "#wrong")
    values: list[float | None]
    if len(rest) == 8:
        values = [_num(t, source, number, f"column {names[i % 4]}") for i, t in enumerate(rest)]
    elif len(rest) == 4:  # in-place only (trace replay)
        values = [None] * 4
        values += [_num(t, source, number, f"column {names[i]}") for i, t in enumerate(rest)]
    else:
        raise ParseError(
            source, number, "a result row needs time, algbw, busbw and #wrong (twice)", line
        )
    for i, v in enumerate(values):
        if v is not None and v < 0:
            raise ParseError(source, number, f"column {names[i % 4]} is negative", line)
    return _make_row(size, count, dtype, redop, values, number)


def _guess_collective(text: str) -> str:
    m = re.search(r"\b(\w+_perf)\b", text)
    return m.group(1) if m else ""


# -- JSON (-J / --output_file) --------------------------------------------------------------------


def parse_nccl_json(text: str, source: str) -> NcclResult:
    """Parse the JSON file nccl-tests writes with ``-J FILE`` (format version 2)."""
    no_huge_numbers(text, source)
    doc = load_json(text, source)
    if not isinstance(doc, dict) or "results" not in doc:
        raise ParseError(
            source, line_of(doc, 1), "JSON without 'results'; not an nccl-tests -J file"
        )
    results = doc["results"]
    if not isinstance(results, list):
        raise ParseError(source, line_of(doc), "'results' is not a list")
    rows = [_json_row(item, source) for item in results]
    args = doc.get("args") if isinstance(doc.get("args"), list) else []
    collective = Path(str(args[0])).name if args else ""
    env: dict[str, str] = {}
    raw_env = doc.get("env")
    for item in raw_env if isinstance(raw_env, list) else []:
        if isinstance(item, str) and "=" in item:
            key, _, value = item.partition("=")
            if key.startswith(("NCCL_", "UCX_", "CUDA_")):
                env[key] = value
    devices = []
    config = doc.get("config")
    if isinstance(config, dict) and isinstance(config.get("devices"), list):
        devices = [d for d in config["devices"] if isinstance(d, dict)]
    hosts = tuple(dict.fromkeys(str(d.get("hostname", "")) for d in devices if d.get("hostname")))
    avg = None
    block = doc.get("average_bus_bandwidth")
    if isinstance(block, dict) and isinstance(block.get("bandwidth"), (int, float)):
        avg = float(block["bandwidth"])
    oob = None
    block = doc.get("out_of_bounds")
    if isinstance(block, dict) and isinstance(block.get("count"), int):
        oob = block["count"]
    raw_errors = doc.get("errors")
    errors: list[Any] = raw_errors if isinstance(raw_errors, list) else []
    if not rows and not errors:
        raise ParseError(
            source, line_of(doc), "has an empty 'results' list; the run did not finish"
        )
    return NcclResult(
        source=source,
        collective=collective,
        rows=tuple(rows),
        avg_busbw=avg,
        out_of_bounds=oob,
        hosts=hosts,
        ranks=len(devices),
        env=env,
        errors=tuple(str(e) for e in errors),
    )


def _json_num(value: Any, source: str, line: int | None, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, str) and value.lower() == "nan":
        return math.nan
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ParseError(source, line, f"{what} is not a number", repr(value))
    if math.isinf(value) or value < 0:
        raise ParseError(source, line, f"{what} must be a finite number >= 0", repr(value))
    return float(value)


def _json_row(item: Any, source: str) -> NcclRow:
    if not isinstance(item, dict):
        raise ParseError(source, None, "an entry of 'results' is not an object")
    line = line_of(item)
    size = item.get("size")
    count = item.get("count", 0)
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ParseError(source, line, "a result has no integer 'size'", repr(size))
    if isinstance(count, bool) or not isinstance(count, int):
        raise ParseError(source, line, "a result's 'count' is not an integer", repr(count))
    figures: list[float | None] = []
    for key in ("out_of_place", "in_place"):
        block = item.get(key)
        if block is None:
            figures += [None] * 4
            continue
        if not isinstance(block, dict):
            raise ParseError(source, line, f"'{key}' is not an object")
        where = line_of(block, line)
        time_key = "cpu_time" if "cpu_time" in block else "time"
        figures += [
            _json_num(block.get(time_key), source, where, f"{key}.{time_key}"),
            _json_num(block.get("alg_bw"), source, where, f"{key}.alg_bw"),
            _json_num(block.get("bus_bw"), source, where, f"{key}.bus_bw"),
            _json_num(block.get("nwrong"), source, where, f"{key}.nwrong"),
        ]
    if figures[2] is None and figures[6] is None:
        raise ParseError(source, line, "a result has neither out_of_place nor in_place bus_bw")
    return _make_row(
        size, count, str(item.get("type", "")), str(item.get("redop", "")), figures, line
    )


def _make_row(
    size: int, count: int, dtype: str, redop: str, v: list[float | None], line: int | None
) -> NcclRow:
    return NcclRow(size, count, dtype, redop, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], line)


# -- NCCL_DEBUG=INFO logs -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NetChannel:
    """An inter-node channel from an NCCL INFO ``Channel ... via NET/...`` line."""

    host: str
    transport: str
    gdrdma: bool
    line: int


@dataclass(frozen=True)
class NcclLog:
    source: str
    channels: tuple[NetChannel, ...]
    gdr_disabled: tuple[str, ...] = ()  # "GPU Direct RDMA Disabled for HCA ..." lines

    @property
    def without_gdrdma(self) -> tuple[NetChannel, ...]:
        return tuple(c for c in self.channels if not c.gdrdma)


_CHANNEL = re.compile(
    r"^(?:(?P<host>[^\s:]+):\d+:\d+\s+)?.*?NCCL INFO\s+Channel\s+\d+(?:/\d+)?\s*:.*?"
    r"\bvia\s+(?P<via>NET/\S+)"
)
_GDR_OFF = re.compile(r"GPU Direct RDMA Disabled for HCA[^\n]*", re.I)


def parse_nccl_log(text: str, source: str) -> NcclLog:
    """Inter-node channels of an NCCL_DEBUG=INFO log and whether each uses GPUDirect RDMA."""
    no_huge_numbers(text, source)
    channels = []
    disabled = []
    for number, line in enumerate(text.splitlines(), 1):
        if "NCCL INFO" not in line:
            continue
        m = _CHANNEL.match(line.strip())
        if m:
            via = m.group("via")
            channels.append(NetChannel(m.group("host") or "", via, "/GDRDMA" in via, number))
        elif g := _GDR_OFF.search(line):
            disabled.append(f"line {number}: {g.group(0).strip()}")
    return NcclLog(source, tuple(channels), tuple(disabled))


def parse_nccl_log_file(path: str | Path) -> NcclLog:
    return parse_nccl_log(read_text(path), str(path))


__all__ = [
    "NcclLog",
    "NcclResult",
    "NcclRow",
    "NetChannel",
    "parse_nccl_file",
    "parse_nccl_json",
    "parse_nccl_log",
    "parse_nccl_log_file",
    "parse_nccl_text",
]
