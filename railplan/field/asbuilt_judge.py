"""Judging every design link against the edges the as-built inputs show: status, swaps, findings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from railplan.design import Cable, Design, Link
from railplan.field.asbuilt_report import (
    FINDING_KINDS,
    RATE_TOLERANCE,
    AsBuiltReport,
    End,
    Finding,
    LinkCheck,
    Unexpected,
)
from railplan.field.names import Endpoint, NameMap


@dataclass
class Seen:
    """What the inputs say of one edge: the rates it came up at and the files that show it."""

    rates: list[float] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


class _View:
    """The design's planned ports and the seen edges, indexed for judging."""

    def __init__(self, design: Design, names: NameMap, edges: dict[frozenset[End], Seen]) -> None:
        self.names = names
        self.edges = edges
        self.cables: dict[str, Cable] = {c.link_id: c for c in design.cables}
        self.planned: dict[Endpoint, Link] = {}
        for link in design.links:
            a, b = ends(link)
            self.planned[a] = link
            self.planned[b] = link
        self.peers: dict[End, set[End]] = defaultdict(set)
        for edge in edges:
            x, y = tuple(edge)
            self.peers[x].add(y)
            self.peers[y].add(x)
        self._shown: dict[End, str] = {}

    def show(self, end: End) -> str:
        if end not in self._shown:
            self._shown[end] = self.names.display(end) if isinstance(end, Endpoint) else end
        return self._shown[end]

    def sources_near(self, a: Endpoint, b: Endpoint) -> tuple[str, ...]:
        """Every file that shows an edge at either end of a link."""
        return tuple(
            sorted(
                {
                    src
                    for x in (a, b)
                    for y in self.peers.get(x, ())
                    for src in self.edges[frozenset((x, y))].sources
                }
            )
        )


def ends(link: Link) -> tuple[Endpoint, Endpoint]:
    return Endpoint(link.a_device, link.a_port), Endpoint(link.b_device, link.b_port)


def judge(
    design: Design,
    names: NameMap,
    edges: dict[frozenset[End], Seen],
    covered: set[str],
    warnings: list[str],
    ignored: int,
    inputs: Sequence[str],
    dropped: str = "",
    notes: Sequence[tuple[str, str]] = (),
) -> AsBuiltReport:
    """The report: a status per link, swaps paired, unexplained edges as unexpected.

    ``dropped`` says how many sightings named nothing of the design and why; ``notes`` are the
    (kind, sentence) findings of entries kept out of the comparison (stale, shared port).
    """
    view = _View(design, names, edges)
    status = _statuses(design, view, covered)
    swaps = _find_swaps(design, view.planned, view.peers, status)
    checks, explained = _link_checks(design, view, status, swaps)
    unexpected = _unexpected(view, explained)
    return AsBuiltReport(
        design=design.name,
        inputs=tuple(inputs),
        links=tuple(checks),
        unexpected=tuple(unexpected),
        findings=tuple(_findings(checks, unexpected, notes)),
        warnings=tuple(warnings),
        ignored=ignored,
        dropped=dropped,
    )


def _statuses(design: Design, view: _View, covered: set[str]) -> dict[str, str]:
    """ok / wrong_speed / miswired / missing / unverified per link (swaps come later)."""
    status: dict[str, str] = {}
    for link in design.links:
        a, b = ends(link)
        if frozenset((a, b)) in view.edges:
            seen = view.edges[frozenset((a, b))]
            rate = min(seen.rates) if seen.rates else None
            off = rate is not None and abs(rate - link.rate_gbps) > RATE_TOLERANCE * link.rate_gbps
            status[link.id] = "wrong_speed" if off else "ok"
        elif view.peers.get(a) or view.peers.get(b):
            status[link.id] = "miswired"
        elif a.device in covered or b.device in covered:
            status[link.id] = "missing"
        else:
            status[link.id] = "unverified"
    return status


def _link_checks(
    design: Design, view: _View, status: dict[str, str], swaps: dict[str, tuple[str, str]]
) -> tuple[list[LinkCheck], set[frozenset[End]]]:
    """One LinkCheck per link, and the seen edges its verdict explains."""
    explained: set[frozenset[End]] = set()
    checks: list[LinkCheck] = []
    for link in design.links:
        a, b = ends(link)
        cable = view.cables.get(link.id)
        label = cable.id if cable else link.id
        st = status[link.id]
        if st in ("ok", "wrong_speed"):
            explained.add(frozenset((a, b)))
        if st in ("miswired", "swapped"):
            explained.update(frozenset((x, y)) for x in (a, b) for y in view.peers.get(x, ()))
        match = view.edges.get(frozenset((a, b)))
        rate = min(match.rates) if match and match.rates else None
        found_a: tuple[str, ...] = ()
        found_b: tuple[str, ...] = ()
        sources: tuple[str, ...] = ()
        if st != "ok":  # what each end sees, and where it was read, only where it matters
            found_a = tuple(sorted(view.show(p) for p in view.peers.get(a, ())))
            found_b = tuple(sorted(view.show(p) for p in view.peers.get(b, ())))
            sources = view.sources_near(a, b)
        show_a, show_b = view.show(a), view.show(b)
        detail = _detail(st, link, show_a, show_b, label, rate, found_a, found_b)
        partner = ""
        if link.id in swaps:
            partner, detail = swaps[link.id]
        checks.append(
            LinkCheck(
                link_id=link.id,
                kind=link.kind,
                a=show_a,
                b=show_b,
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
    return checks, explained


def _unexpected(view: _View, explained: set[frozenset[End]]) -> list[Unexpected]:
    """Seen edges no planned link explains, sorted by their ends."""
    out = []
    for edge, seen in view.edges.items():
        if edge in explained:
            continue
        x, y = sorted(view.show(e) for e in edge)
        rate = min(seen.rates) if seen.rates else None
        out.append(Unexpected(x, y, rate, tuple(sorted(set(seen.sources)))))
    out.sort(key=lambda u: (u.a, u.b))
    return out


def _findings(
    checks: list[LinkCheck], unexpected: list[Unexpected], notes: Sequence[tuple[str, str]] = ()
) -> list[Finding]:
    """What the technician must fix: swaps once per pair, then each other fault, then extras."""
    by_id = {c.link_id: c for c in checks}
    done: set[str] = set()
    findings: list[Finding] = []
    for check in checks:
        if check.status in ("ok", "unverified") or check.link_id in done:
            continue
        if check.status == "swapped":
            twin = by_id[check.partner]
            done.update((check.link_id, twin.link_id))
            pair = (check.link_id, twin.link_id)
            findings.append(Finding("swap", pair, (check.label, twin.label), check.detail))
        else:
            findings.append(Finding(check.status, (check.link_id,), (check.label,), check.detail))
    for u in unexpected:
        message = (
            f"a cable between {u.a} and {u.b} is not in the plan; remove it "
            f"(seen in {u.sources[0]})"
        )
        findings.append(Finding("unexpected", (), (), message))
    findings.extend(Finding(kind, (), (), message) for kind, message in notes)
    order = {k: i for i, k in enumerate(FINDING_KINDS)}
    findings.sort(key=lambda f: (order[f.kind], f.links, f.message))
    return findings


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
    cables = {c.link_id: c for c in design.cables}
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
