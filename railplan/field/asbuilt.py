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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from railplan.design import Cable, Design, Link
from railplan.field.common import FieldInputError, Neighbors, Sighting
from railplan.field.names import Endpoint, NameMap
from railplan.field.parse_ib import parse_iblinkinfo_file, parse_ibnetdiscover_file
from railplan.field.parse_lldp import parse_lldp_file

#: relative tolerance when comparing a seen rate with the planned one
RATE_TOLERANCE = 0.02

STATUSES = ("ok", "wrong_speed", "swapped", "miswired", "missing", "unverified")
FINDING_KINDS = ("swap", "miswired", "missing", "wrong_speed", "unexpected")

End = Endpoint | str  # a design port, or the site's name of something outside the design


@dataclass(frozen=True, slots=True)
class LinkCheck:
    """The verdict on one design link."""

    link_id: str
    kind: str
    a: str
    b: str
    label: str
    label_a: str
    label_b: str
    rate_gbps: int
    status: str
    seen_rate_gbps: float | None = None
    found_a: tuple[str, ...] = ()
    found_b: tuple[str, ...] = ()
    partner: str = ""
    detail: str = ""
    sources: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Unexpected:
    """A cable seen that the design does not have, between ports the design leaves free."""

    a: str
    b: str
    seen_rate_gbps: float | None
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the technician must fix, named by cable label(s)."""

    kind: str
    links: tuple[str, ...]
    labels: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class AsBuiltReport:
    """Result of ``check_asbuilt``: per-link verdicts, findings, and what could not be used."""

    design: str
    inputs: tuple[str, ...]
    links: tuple[LinkCheck, ...]
    unexpected: tuple[Unexpected, ...]
    findings: tuple[Finding, ...]
    warnings: tuple[str, ...] = ()
    ignored: int = 0

    @property
    def ok(self) -> bool:
        """True when nothing needs fixing (unverified links are not failures)."""
        return not self.findings

    def counts(self) -> dict[str, int]:
        """Links per status, plus ``unexpected``."""
        out = dict.fromkeys(STATUSES, 0)
        for check in self.links:
            out[check.status] += 1
        out["unexpected"] = len(self.unexpected)
        return out

    def to_json(self) -> dict[str, Any]:
        """The whole report as a JSON-ready dict."""
        return {
            "design": self.design,
            "inputs": list(self.inputs),
            "ok": self.ok,
            "counts": self.counts(),
            "findings": [_row(f) for f in self.findings],
            "links": [_row(c) for c in self.links],
            "unexpected": [_row(u) for u in self.unexpected],
            "warnings": list(self.warnings),
            "ignored_sightings": self.ignored,
        }

    #: column names of ``summary_rows``
    summary_header = ("finding", "cable(s)", "what to do")

    def summary_rows(self) -> list[tuple[str, str, str]]:
        """One printable row per finding: (kind, cable label(s), what to do)."""
        return [(f.kind, ", ".join(f.labels), f.message) for f in self.findings]

    def summary_line(self) -> str:
        c = self.counts()
        return (
            f"{len(self.links)} planned links: {c['ok']} ok, {c['swapped']} swapped, "
            f"{c['miswired']} miswired, {c['missing']} missing, {c['wrong_speed']} wrong speed, "
            f"{c['unverified']} unverified; {c['unexpected']} unexpected"
        )


def _row(obj: Any) -> dict[str, Any]:
    out = {}
    for name in obj.__slots__:
        value = getattr(obj, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out


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
    return compare(design, parsed, names_map, inputs)


# -- comparison ---------------------------------------------------------------------------------


@dataclass
class _Seen:
    rates: list[float] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


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
    edges: dict[frozenset[End], _Seen] = defaultdict(_Seen)
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
    return _judge(design, names, edges, covered, warnings, ignored, inputs)


def _edge(names: NameMap, s: Sighting) -> frozenset[End] | None:
    """The undirected edge a sighting reports, or None when no end of it is a design port."""
    local = _end(names, s.local_names, s.local_ports)
    remote = _end(names, s.remote_names, s.remote_ports)
    if local is None or remote is None or local == remote:
        return None
    if not isinstance(local, Endpoint) and not isinstance(remote, Endpoint):
        return None  # management network and the like
    return frozenset((local, remote))


def _labels(design: Design) -> dict[str, Cable]:
    return {c.link_id: c for c in design.cables}


def _judge(
    design: Design,
    names: NameMap,
    edges: dict[frozenset[End], _Seen],
    covered: set[str],
    warnings: list[str],
    ignored: int,
    inputs: Sequence[str],
) -> AsBuiltReport:
    cables = _labels(design)
    planned: dict[Endpoint, Link] = {}
    for link in design.links:
        planned[Endpoint(link.a_device, link.a_port)] = link
        planned[Endpoint(link.b_device, link.b_port)] = link
    peers: dict[End, set[End]] = defaultdict(set)
    for edge in edges:
        x, y = tuple(edge)
        peers[x].add(y)
        peers[y].add(x)

    shown: dict[End, str] = {}

    def show(end: End) -> str:
        if end not in shown:
            shown[end] = names.display(end) if isinstance(end, Endpoint) else end
        return shown[end]

    def ends(link: Link) -> tuple[Endpoint, Endpoint]:
        return Endpoint(link.a_device, link.a_port), Endpoint(link.b_device, link.b_port)

    status: dict[str, str] = {}
    for link in design.links:
        a, b = ends(link)
        if frozenset((a, b)) in edges:
            seen = edges[frozenset((a, b))]
            rate = min(seen.rates) if seen.rates else None
            off = rate is not None and abs(rate - link.rate_gbps) > RATE_TOLERANCE * link.rate_gbps
            status[link.id] = "wrong_speed" if off else "ok"
        elif peers.get(a) or peers.get(b):
            status[link.id] = "miswired"
        elif a.device in covered or b.device in covered:
            status[link.id] = "missing"
        else:
            status[link.id] = "unverified"

    swaps = _find_swaps(design, planned, peers, status)
    explained: set[frozenset[End]] = set()
    checks: list[LinkCheck] = []
    findings: list[Finding] = []
    for link in design.links:
        a, b = ends(link)
        cable = cables.get(link.id)
        label = cable.id if cable else link.id
        st = status[link.id]
        if st in ("ok", "wrong_speed"):
            explained.add(frozenset((a, b)))
        if st in ("miswired", "swapped"):
            explained.update(frozenset((x, y)) for x in (a, b) for y in peers.get(x, ()))
        match = edges.get(frozenset((a, b)))
        rate = min(match.rates) if match and match.rates else None
        found_a: tuple[str, ...] = ()
        found_b: tuple[str, ...] = ()
        sources: tuple[str, ...] = ()
        if st != "ok":  # what each end sees, and where it was read, only where it matters
            found_a = tuple(sorted(show(p) for p in peers.get(a, ())))
            found_b = tuple(sorted(show(p) for p in peers.get(b, ())))
            sources = tuple(
                sorted(
                    {
                        src
                        for x in (a, b)
                        for y in peers.get(x, ())
                        for src in edges[frozenset((x, y))].sources
                    }
                )
            )
        detail = _detail(st, link, show(a), show(b), label, rate, found_a, found_b)
        partner = ""
        if link.id in swaps:
            other, detail = swaps[link.id]
            partner = other
        checks.append(
            LinkCheck(
                link_id=link.id,
                kind=link.kind,
                a=show(a),
                b=show(b),
                label=label,
                label_a=cable.label_a if cable else "",
                label_b=cable.label_b if cable else "",
                rate_gbps=link.rate_gbps,
                status=st,
                seen_rate_gbps=rate,
                found_a=found_a,
                found_b=found_b,
                partner=partner,
                detail=detail,
                sources=sources,
            )
        )
    by_id = {c.link_id: c for c in checks}
    done: set[str] = set()
    for check in checks:
        if check.status == "ok" or check.status == "unverified" or check.link_id in done:
            continue
        if check.status == "swapped":
            twin = by_id[check.partner]
            done.update((check.link_id, twin.link_id))
            findings.append(
                Finding(
                    "swap", (check.link_id, twin.link_id), (check.label, twin.label), check.detail
                )
            )
        else:
            findings.append(Finding(check.status, (check.link_id,), (check.label,), check.detail))
    unexpected = []
    for edge, seen in edges.items():
        if edge in explained:
            continue
        x, y = sorted(show(e) for e in edge)
        rate = min(seen.rates) if seen.rates else None
        unexpected.append(Unexpected(x, y, rate, tuple(sorted(set(seen.sources)))))
    unexpected.sort(key=lambda u: (u.a, u.b))
    for u in unexpected:
        findings.append(
            Finding(
                "unexpected",
                (),
                (),
                f"a cable between {u.a} and {u.b} is not in the plan; remove it "
                f"(seen in {u.sources[0]})",
            )
        )
    order = {k: i for i, k in enumerate(FINDING_KINDS)}
    findings.sort(key=lambda f: (order[f.kind], f.links, f.message))
    return AsBuiltReport(
        design=design.name,
        inputs=tuple(inputs),
        links=tuple(checks),
        unexpected=tuple(unexpected),
        findings=tuple(findings),
        warnings=tuple(warnings),
        ignored=ignored,
    )


def _find_swaps(
    design: Design,
    planned: dict[Endpoint, Link],
    peers: dict[End, set[End]],
    status: dict[str, str],
) -> dict[str, tuple[str, str]]:
    """Pairs of miswired links whose cables are exchanged at one end: link id -> (partner, text)."""
    out: dict[str, tuple[str, str]] = {}
    for l1 in design.links:
        if status[l1.id] != "miswired" or l1.id in out:
            continue
        a1, b1 = Endpoint(l1.a_device, l1.a_port), Endpoint(l1.b_device, l1.b_port)
        for start, far in ((a1, b1), (b1, a1)):
            if len(peers.get(start, ())) != 1 or len(peers.get(far, ())) != 1:
                continue
            x = next(iter(peers[start]))
            if not isinstance(x, Endpoint) or x not in planned:
                continue
            l2 = planned[x]
            if l2.id == l1.id or status[l2.id] != "miswired" or l2.id in out:
                continue
            a2, b2 = Endpoint(l2.a_device, l2.a_port), Endpoint(l2.b_device, l2.b_port)
            y = a2 if x == b2 else b2
            if peers.get(far) == {y} and peers.get(x) == {start} and peers.get(y) == {far}:
                text = _swap_text(l1, l2, start, far, x, y, design)
                out[l1.id] = (l2.id, text)
                out[l2.id] = (l1.id, text)
                status[l1.id] = status[l2.id] = "swapped"
                break
    return out


def _swap_text(
    l1: Link, l2: Link, start: Endpoint, far: Endpoint, x: Endpoint, y: Endpoint, design: Design
) -> str:
    names = NameMap(design)
    cables = _labels(design)
    c1 = cables[l1.id].id if l1.id in cables else l1.id
    c2 = cables[l2.id].id if l2.id in cables else l2.id
    # the two ports whose cables were exchanged: far<->x (seen from l1's start) or start<->y
    options = []
    if far.device == x.device:
        options.append((far, x))
    if start.device == y.device:
        options.append((start, y))
    if not options:
        options.append((far, x))
    where = " or ".join(
        f"{p.device} ports {names.port_name(p)} and {names.port_name(q)}" for p, q in options
    )
    return (
        f"cables {c1} and {c2} are swapped at {where}: {names.display(start)} reaches "
        f"{names.display(x)} instead of {names.display(far)}; exchange the two plugs"
    )


def _detail(
    st: str,
    link: Link,
    a: str,
    b: str,
    label: str,
    rate: float | None,
    found_a: tuple[str, ...],
    found_b: tuple[str, ...],
) -> str:
    if st == "ok" or st == "unverified":
        return "" if st == "ok" else "no input covers either end"
    if st == "missing":
        return (
            f"cable {label} ({a} - {b}) is not seen from either end; check it is plugged in "
            "at both ends and the ports are up"
        )
    if st == "wrong_speed":
        return (
            f"cable {label} ({a} - {b}) runs at {rate:g}G, planned {link.rate_gbps}G; check the "
            "cable/optic part and the port speed setting"
        )
    parts = []
    for here, there, found in ((a, b, found_a), (b, a, found_b)):
        if found:
            parts.append(f"{here} reaches {' and '.join(found)} instead of {there}")
    if not found_a:
        parts.append(f"{a} sees nothing")
    if not found_b:
        parts.append(f"{b} sees nothing")
    return f"cable {label} should join {a} and {b}: " + "; ".join(parts)


__all__ = [
    "AsBuiltReport",
    "Finding",
    "LinkCheck",
    "Unexpected",
    "check_asbuilt",
    "compare",
    "lldp_files",
]
