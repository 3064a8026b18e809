"""Compare the as-built cabling (LLDP, InfiniBand discovery) with the design, link by link.

Every design link gets one status:

- ``ok``: the planned two ports see each other (at the planned rate, when a rate was seen);
- ``wrong_speed``: the right ports, but the link came up at another rate;
- ``swapped``: this cable and one other are exchanged at one end (reported once, as a pair);
- ``miswired``: at least one of its ports sees something else;
- ``missing``: neither planned port sees anything although a file covers one of the devices;
- ``unverified``: no input covers either device (e.g. only host LLDP, for a leaf-spine link).

A device's LLDP file covers it; a subnet-wide InfiniBand discovery covers every device it names.
Sightings that name nothing of the design are dropped and counted with the reason and the
nearest design names (``AsBuiltReport.dropped``); ``AsBuiltReport.coverage_failure`` is the
sentence ``railplan asbuilt`` exits 1 with when fewer planned links than required were covered.

Links seen but not planned, and touching no planned port, are ``unexpected``. Cables are
named by the design's cable labels; a design without a cable schedule falls back to link ids.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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
    return judge(
        design,
        names,
        seen.edges,
        seen.covered,
        seen.warnings,
        seen.ignored,
        inputs,
        dropped=seen.dropped_note(design),
        notes=tuple(seen.notes),
    )


@dataclass
class Observed:
    """What the inputs show: the edges between ports, the devices they cover, what was skipped."""

    edges: dict[frozenset[End], Seen]
    covered: set[str]
    warnings: list[str]
    ignored: int
    #: why sightings were dropped (reason -> count) and the site names that matched nothing
    reasons: Counter[str] = field(default_factory=Counter)
    unmatched: Counter[str] = field(default_factory=Counter)
    #: (kind, sentence) of LLDP entries kept out as stale or sharing a port
    notes: list[tuple[str, str]] = field(default_factory=list)

    def dropped_note(self, design: Design) -> str:
        """One sentence: how many sightings were dropped and why, with the nearest design names."""
        if not self.ignored:
            return ""
        why = "; ".join(f"{n} {reason}" for reason, n in sorted(self.reasons.items()))
        text = f"{self.ignored} sighting{'s' if self.ignored != 1 else ''} dropped ({why})"
        if self.unmatched:
            text += ": " + nearest_names(design, self.unmatched)
        return text


#: how many unmatched site names a note quotes
_QUOTED = 3
#: difflib similarity from which a design name is offered as the nearest one
_CLOSE = 0.6


_IB_SWITCH = re.compile(r"^MF0;([^:]+):")


def site_device_name(text: str) -> str:
    """The device part of a site name: ``MF0;sw-1:MQM9700/U1`` -> ``sw-1``, ``gpu-1 mlx5_0``
    -> ``gpu-1`` (the forms an InfiniBand node description takes)."""
    m = _IB_SWITCH.match(text.strip())
    if m:
        return m.group(1)
    parts = text.split()
    return parts[0] if parts else text


def nearest_names(design: Design, unmatched: Counter[str]) -> str:
    """The most frequent unmatched site names, each with its nearest design device id."""
    ids = [n.id for n in design.nodes] + [s.id for s in design.switches]
    ids += [d.id for d in design.devices]
    short: Counter[str] = Counter()
    for name, n in unmatched.items():
        short[site_device_name(name)] += n
    shown = []
    for name, _ in sorted(short.items(), key=lambda kv: (-kv[1], kv[0]))[:_QUOTED]:
        close = difflib.get_close_matches(name.split(".")[0], ids, n=1, cutoff=_CLOSE)
        shown.append(f"{name!r} (nearest design name {close[0]})" if close else repr(name))
    more = len(short) - len(shown)
    tail = f" and {more} more" if more > 0 else ""
    looks = ""
    if not any("nearest" in s for s in shown):
        firsts = [x[0].id for x in (design.nodes, design.switches) if x]
        examples = firsts + [d.id for d in design.devices[:1]]
        looks = f" (the design's names look like {', '.join(examples)})"
    return (
        f"no device of design {design.name} is named {', '.join(shown)}{tail}; map the site "
        f"names under 'devices' in a name map (--names){looks}"
    )


def observe(design: Design, parsed: Sequence[Neighbors], names: NameMap) -> Observed:
    """The edges the parsed inputs report, in the design's names, and the devices they cover."""
    warnings: list[str] = []
    covered: set[str] = set()
    skipped: set[str] = set()
    reasons: Counter[str] = Counter()
    unmatched: Counter[str] = Counter()
    notes: list[tuple[str, str]] = []
    for item in parsed:
        notes.extend(item.notes)
        for reporter in item.reporters:
            device = next((d for n in reporter if (d := names.device(n))), None)
            if device is None:
                skipped.add(reporter[0])
                ids = [n.id for n in design.nodes] + [x.id for x in design.switches]
                close = difflib.get_close_matches(
                    reporter[0].split(".")[0], ids, n=1, cutoff=_CLOSE
                )
                hint = f"; the nearest design name is {close[0]}" if close else ""
                warnings.append(
                    f"{reporter[0]} is not a device of design {design.name}; its LLDP file was "
                    f"skipped (map it under 'devices' in a name map{hint})"
                )
            else:
                covered.add(device)
    edges: dict[frozenset[End], Seen] = defaultdict(Seen)
    ignored = 0
    for item in parsed:
        for s in item.sightings:
            if s.local_names[:1] and s.local_names[0] in skipped:
                ignored += 1
                reasons["from the file of a device not in the design"] += 1
                unmatched[s.local_names[0]] += 1
                continue
            edge = _edge(names, s)
            if edge is None:
                ignored += 1
                _why_dropped(names, s, reasons, unmatched)
                continue
            if item.full_fabric:  # a subnet-wide discovery covers every device it names
                covered.update(e.device for e in edge if isinstance(e, Endpoint))
            seen = edges[edge]
            if s.rate_gbps is not None:
                seen.rates.append(s.rate_gbps)
            seen.sources.append(s.source)
    return Observed(edges, covered, warnings, ignored, reasons, unmatched, notes)


def _why_dropped(
    names: NameMap, s: Sighting, reasons: Counter[str], unmatched: Counter[str]
) -> None:
    """Count why a sighting gave no edge, and the site device names that matched nothing."""
    missing = [
        ns[0]
        for ns in (s.local_names, s.remote_names)
        if ns and not any(names.device(n) for n in ns)
    ]
    if missing:
        reasons["naming devices not in the design"] += 1
        unmatched.update(missing)
    elif not s.local_names or not s.remote_names:
        reasons["without a device name"] += 1
    else:
        local = _end(names, s.local_names, s.local_ports)
        if local is not None and local == _end(names, s.remote_names, s.remote_ports):
            reasons["of a port seeing itself"] += 1
        else:
            reasons["on ports not in the design"] += 1


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
