"""Shared pieces of the loop parsers: the error class, file reading and number helpers."""

from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
import re
from bisect import bisect_right
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from railplan.errors import FieldInputError
from railplan.safe_load import load_json as load_untrusted_json
from railplan.safe_load import load_yaml, read_file

#: how much of a bad line an error message quotes
_QUOTE = 60


class ParseError(FieldInputError):
    """A tool output cannot be parsed; the message names the file and the line."""

    def __init__(self, source: str, line: int | None, problem: str, text: str | None = None):
        self.source = source
        self.line = line
        self.problem = problem
        where = f"{source} line {line}" if line else source
        quoted = ""
        if text is not None:
            shown = text.strip()
            if len(shown) > _QUOTE:
                shown = shown[:_QUOTE] + "..."
            quoted = f" (got {shown!r})"
        super().__init__(f"{where}: {problem}{quoted}")


#: the most one tool output may hold when no design bounds it (``bounded_captures``)
MAX_CAPTURE_BYTES = 256 * 1024 * 1024
#: bytes a capture may spend per port of the design it describes: ``ibnetdiscover`` writes
#: one line of about 150 bytes per port, LLDP neighbour detail a few hundred per interface
CAPTURE_BYTES_PER_PORT = 4096
_CAPTURE_FLOOR = 4 * 1024 * 1024
_capture_limit: ContextVar[int] = ContextVar("capture_limit", default=MAX_CAPTURE_BYTES)


def capture_limit(ports: int) -> int:
    """The byte limit of one capture of a design with ``ports`` link ends."""
    return min(MAX_CAPTURE_BYTES, _CAPTURE_FLOOR + CAPTURE_BYTES_PER_PORT * ports)


@contextmanager
def bounded_captures(ports: int) -> Iterator[None]:
    """Read every capture inside the block with ``capture_limit(ports)``."""
    token = _capture_limit.set(capture_limit(ports))
    try:
        yield
    finally:
        _capture_limit.reset(token)


def read_text(path: str | Path) -> str:
    """Read a tool output file as text with a byte limit; raise ParseError (not OSError).

    A FIFO, a device or a symlink to one is refused (``safe_load.read_file``); a file larger
    than the design it describes can explain is refused before it is parsed.
    """
    file = Path(path)
    limit = _capture_limit.get()
    try:
        data = read_file(file, "tool output", FieldInputError, limit)
    except FieldInputError as exc:
        problem = str(exc).removeprefix(f"tool output {file}").lstrip(": ").strip()
        raise ParseError(str(file), None, problem) from None
    if b"\x00" in data[:4096]:
        raise ParseError(str(file), None, "is a binary file, expected the tool's text output")
    return data.decode("utf-8", errors="replace")


def read_data(path: str | Path) -> Any:
    """A YAML or JSON field input (expectations, manifest, name map) read with railplan's safe
    reader: bounded size, depth and aliases, no tags, no duplicate keys; errors name the file."""
    file = Path(path)
    text = read_text(file)
    if not text.strip():
        return None
    if file.suffix.lower() == ".json":
        return load_untrusted_json(text, file.name, FieldInputError)
    return load_yaml(text, file.name, FieldInputError)


#: most digits in a row a tool output may hold (a 64-bit counter has 20, a GUID 16 hex digits)
MAX_DIGITS = 64
_HUGE = re.compile(rf"\d{{{MAX_DIGITS + 1},}}")


def no_huge_numbers(text: str, source: str) -> None:
    """Refuse a text with a run of more than MAX_DIGITS digits before any int() sees it (Python
    refuses to convert more than 4,300 digits, and no tool prints such a number)."""
    m = _HUGE.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        raise ParseError(source, line, f"holds a number of more than {MAX_DIGITS} digits")


def finite(value: str, source: str, line: int, what: str) -> float:
    """Parse a float that must be finite (no nan/inf), else ParseError naming ``what``."""
    try:
        number = float(value)
    except ValueError:
        raise ParseError(source, line, f"{what} is not a number", value) from None
    if not math.isfinite(number):
        raise ParseError(source, line, f"{what} is not a finite number", value)
    return number


_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def is_number(text: str) -> bool:
    return bool(_NUMBER.match(text))


def device_from_filename(path: str | Path) -> str:
    """The device a per-device file is about: its name without tool suffixes.

    ``node0001.json`` -> ``node0001``; ``leaf-1.lldp.txt`` -> ``leaf-1``.
    """
    name = Path(path).name
    for suffix in (".json", ".txt", ".log", ".out"):
        name = name.removesuffix(suffix)
    for suffix in (".lldp", ".lldpcli", ".neighbors", ".neighbours", ".sonic"):
        name = name.removesuffix(suffix)
    return name


# -- what the cabling parsers return ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sighting:
    """One cable end seen by a tool: a local port and the neighbour it reports.

    Names are the site's, best candidate first (a node description, then a GUID; a port id,
    then a port description); ``NameMap`` resolves them against the design.
    """

    local_names: tuple[str, ...]
    local_ports: tuple[str, ...]
    remote_names: tuple[str, ...]
    remote_ports: tuple[str, ...]
    rate_gbps: float | None
    source: str


@dataclass(frozen=True, slots=True)
class Neighbors:
    """What one cabling file says: its sightings and whose view of the fabric it is.

    ``reporters`` are the devices whose every cabled port the file lists (an LLDP file's own
    host or switch); ``full_fabric`` is true for a subnet-wide InfiniBand discovery.
    """

    sightings: tuple[Sighting, ...]
    reporters: tuple[tuple[str, ...], ...] = ()
    full_fabric: bool = False
    #: (kind, sentence) for entries kept out of the comparison: ``stale`` (an LLDP neighbour
    #: older than its TTL), ``two_neighbours`` (a port listing several)
    notes: tuple[tuple[str, str], ...] = ()


# -- JSON with line numbers -------------------------------------------------------------------


class LineDict(dict[str, Any]):
    """A JSON object that remembers the line it started on."""

    line: int = 0


def load_json(text: str, source: str) -> Any:
    """Parse JSON text; every object is a LineDict; errors are ParseErrors with a line."""
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    decoder = json.JSONDecoder()

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[LineDict, int]:
        obj, end = json.decoder.JSONObject(s_and_end, *args)  # type: ignore[attr-defined]
        out = LineDict(obj)
        out.line = bisect_right(starts, s_and_end[1] - 1)
        return out, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as exc:
        body = text.rstrip()
        if exc.pos >= len(body):
            last = body.count("\n") + 1
            raise ParseError(source, last, "not valid JSON: it ends early (cut off?)") from None
        raise ParseError(source, exc.lineno, f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise ParseError(source, None, "JSON nested too deeply to be tool output") from None


def line_of(obj: Any, default: int | None = None) -> int | None:
    return obj.line if isinstance(obj, LineDict) else default
