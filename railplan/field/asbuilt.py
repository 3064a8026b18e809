"""Compare the as-built cabling (LLDP, InfiniBand discovery) with the design, link by link.

Every design link gets one status:

- ``ok``: the planned two ports see each other (at the planned rate, when a rate was seen);
- ``wrong_speed``: the right ports, but the link came up at another rate;
- ``swapped``: this cable and one other are exchanged at one end (reported once, as a pair);
- ``miswired``: at least one of its ports sees something else;
- ``missing``: neither planned port sees anything although a file covers one of the devices;
- ``unverified``: no input covers either device (e.g. only host LLDP, for a leaf-spine link).

Links seen but not planned, and touching no planned port, are ``unexpected``. Cables are
named by the design's cable labels; a design without a cable schedule falls back to link ids.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from railplan.design import Design
from railplan.field.asbuilt_judge import Seen, judge
from railplan.field.asbuilt_report import (
    FINDING_KINDS,
    RATE_TOLERANCE,
    STATUSES,
    AsBuiltReport,
    End,
    Finding,
    LinkCheck,
    Unexpected,
)
from railplan.field.common import FieldInputError, Neighbors, Sighting
from railplan.field.names import Endpoint, NameMap
from railplan.field.parse_ib import parse_iblinkinfo_file, parse_ibnetdiscover_file
from railplan.field.parse_lldp import parse_lldp_file

# -- inputs -------------------------------------------------------------------------------------


def lldp_files(paths: Iterable[str | Path]) -> list[Path]:
    """Every LLDP file named: files as given, folders expanded to their visible files."""
    out: list[Path] = []
    for item in paths:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
            if not found:
                raise FieldInputError(f"LLDP folder {path} holds no files")
            out.extend(found)
        elif path.exists():
            out.append(path)
        else:
            raise FieldInputError(f"LLDP input {path} does not exist")
    return out


def check_asbuilt(
    design: Design,
    lldp: Sequence[str | Path] | None = None,
    ibnetdiscover: str | Path | None = None,
    iblinkinfo: str | Path | None = None,
    names: str | Path | NameMap | None = None,
) -> AsBuiltReport:
    """Parse the as-built inputs and compare them with ``design``."""
    names_map = names if isinstance(names, NameMap) else NameMap.load(design, names)
    parsed, inputs = read_inputs(lldp, ibnetdiscover, iblinkinfo)
    return compare(design, parsed, names_map, inputs)


def read_inputs(
    lldp: Sequence[str | Path] | None = None,
    ibnetdiscover: str | Path | None = None,
    iblinkinfo: str | Path | None = None,
) -> tuple[list[Neighbors], list[str]]:
    """Every as-built input parsed, and the files read (at least one is required)."""
    parsed: list[Neighbors] = []
    inputs: list[str] = []
    for file in lldp_files(lldp or []):
        parsed.append(parse_lldp_file(file))
        inputs.append(str(file))
    if ibnetdiscover is not None:
        parsed.append(parse_ibnetdiscover_file(ibnetdiscover))
        inputs.append(str(ibnetdiscover))
    if iblinkinfo is not None:
        parsed.append(parse_iblinkinfo_file(iblinkinfo))
        inputs.append(str(iblinkinfo))
    if not parsed:
        raise FieldInputError(
            "give at least one as-built input: LLDP files, ibnetdiscover or iblinkinfo"
        )
    return parsed, inputs


# -- comparison ---------------------------------------------------------------------------------


def _end(names: NameMap, device_names: Sequence[str], ports: Sequence[str]) -> End | None:
    device = None
    for name in device_names:
        device = names.device(name)
        if device:
            break
    if device is None:
        if not device_names:
            return None
        return f"{device_names[0]} {ports[0] if ports else '?'}".strip()
    for raw in ports:
        port = names.port(device, raw, device_names[0])
        if port is not None:
            return Endpoint(device, port)
    return f"{device} {ports[0] if ports else '?'} (port not in the design)"


def compare(
    design: Design,
    parsed: Sequence[Neighbors],
    names: NameMap,
    inputs: Sequence[str] = (),
) -> AsBuiltReport:
    """Compare parsed cabling inputs with ``design`` (``check_asbuilt`` without the files)."""
    seen = observe(design, parsed, names)
    return judge(design, names, seen.edges, seen.covered, seen.warnings, seen.ignored, inputs)


@dataclass
class Observed:
    """What the inputs show: the edges between ports, the devices they cover, what was skipped."""

    edges: dict[frozenset[End], Seen]
    covered: set[str]
    warnings: list[str]
    ignored: int


def observe(design: Design, parsed: Sequence[Neighbors], names: NameMap) -> Observed:
    """The edges the parsed inputs report, in the design's names, and the devices they cover."""
    warnings: list[str] = []
    covered: set[str] = set()
    skipped: set[str] = set()
    for item in parsed:
        if item.full_fabric:
            covered.update(n.id for n in design.nodes)
            covered.update(s.id for s in design.switches)
        for reporter in item.reporters:
            device = next((d for n in reporter if (d := names.device(n))), None)
            if device is None:
                skipped.add(reporter[0])
                warnings.append(
                    f"{reporter[0]} is not a device of design {design.name}; its LLDP file was "
                    "skipped (map it under 'devices' in a name map)"
                )
            else:
                covered.add(device)
    edges: dict[frozenset[End], Seen] = defaultdict(Seen)
    ignored = 0
    for item in parsed:
        for s in item.sightings:
            edge = None if s.local_names[:1] and s.local_names[0] in skipped else _edge(names, s)
            if edge is None:
                ignored += 1
                continue
            seen = edges[edge]
            if s.rate_gbps is not None:
                seen.rates.append(s.rate_gbps)
            seen.sources.append(s.source)
    return Observed(edges, covered, warnings, ignored)


def _edge(names: NameMap, s: Sighting) -> frozenset[End] | None:
    """The undirected edge a sighting reports, or None when no end of it is a design port."""
    local = _end(names, s.local_names, s.local_ports)
    remote = _end(names, s.remote_names, s.remote_ports)
    if local is None or remote is None or local == remote:
        return None
    if not isinstance(local, Endpoint) and not isinstance(remote, Endpoint):
        return None  # management network and the like
    return frozenset((local, remote))


__all__ = [
    "FINDING_KINDS",
    "RATE_TOLERANCE",
    "STATUSES",
    "AsBuiltReport",
    "Finding",
    "LinkCheck",
    "Observed",
    "Unexpected",
    "check_asbuilt",
    "compare",
    "lldp_files",
    "observe",
    "read_inputs",
]
