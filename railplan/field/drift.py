"""Drift between two as-built captures: which cables moved, were swapped, added or removed.

A capture (LLDP files, ibnetdiscover, iblinkinfo) is read into edges between design ports, as
``field.asbuilt`` reads it. Two captures of the same design are then compared edge by edge:

- ``moved``: an edge of the old capture whose one end now sees another port (the cable was
  re-plugged at the other end);
- ``swapped``: two old edges {a, b} and {c, d} that now read {a, d} and {c, b} (two cables
  exchanged at one end), reported once as a pair;
- ``removed``: an old edge whose ends see nothing now although the new capture covers them;
- ``added``: a new edge whose ends saw nothing before.

Each entry names the cable by the design's cable id and labels (the planned link on the old
edge, else on the new one) and says whether the new position is the planned one, so a repair
that left a cable on the wrong port is found on the next sweep.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from railplan.design import Cable, Design, Link
from railplan.field.asbuilt import _edge, read_inputs
from railplan.field.asbuilt_report import End
from railplan.field.common import FieldInputError
from railplan.field.names import Endpoint, NameMap

Edge = frozenset[End]
DRIFT_KINDS = ("moved", "swapped", "removed", "added")


@dataclass(frozen=True)
class Capture:
    """The edges one capture shows and the devices it covers."""

    edges: frozenset[Edge]
    covered: frozenset[str]
    full_fabric: bool
    inputs: tuple[str, ...]


def read_capture(
    design: Design,
    names: NameMap,
    lldp: Sequence[str | Path] = (),
    ibnetdiscover: str | Path | None = None,
    iblinkinfo: str | Path | None = None,
) -> Capture:
    """Parse one capture's files into the edges between design ports it shows."""
    if not (lldp or ibnetdiscover is not None or iblinkinfo is not None):
        raise FieldInputError("--since: give the earlier capture's LLDP files or IB discovery")
    parsed, inputs = read_inputs(lldp, ibnetdiscover, iblinkinfo)
    edges: set[Edge] = set()
    covered: set[str] = set()
    full = False
    for item in parsed:
        full = full or item.full_fabric
        for reporter in item.reporters:
            device = next((d for n in reporter if (d := names.device(n))), None)
            if device is not None:
                covered.add(device)
        for s in item.sightings:
            edge = _edge(names, s)
            if edge is not None:
                edges.add(edge)
    # a switch seen on the far side of a host's LLDP is covered for that edge only; the
    # reporters are what a capture covers as a whole
    return Capture(frozenset(edges), frozenset(covered), full, tuple(inputs))


@dataclass(frozen=True, slots=True)
class DriftEntry:
    """One change between the captures."""

    kind: str
    cable: str
    label_a: str
    label_b: str
    before: str  # "x - y" as the old capture showed it
    after: str
    #: the new position is the planned one (True), is not (False), or there is none (None)
    planned: bool | None


@dataclass(frozen=True)
class DriftReport:
    """Every change between an earlier capture and this one."""

    entries: tuple[DriftEntry, ...]
    unchanged: int
    old_inputs: tuple[str, ...]
    new_inputs: tuple[str, ...]

    def count(self, kind: str) -> int:
        return sum(1 for e in self.entries if e.kind == kind)

    def to_json(self) -> dict[str, Any]:
        return {
            "since": list(self.old_inputs),
            "unchanged": self.unchanged,
            "counts": {k: self.count(k) for k in DRIFT_KINDS},
            "changes": [
                {
                    "kind": e.kind,
                    "cable": e.cable,
                    "label_a": e.label_a,
                    "label_b": e.label_b,
                    "before": e.before,
                    "after": e.after,
                    "planned": e.planned,
                }
                for e in self.entries
            ],
        }

    def summary_line(self) -> str:
        parts = ", ".join(f"{self.count(k)} {k}" for k in DRIFT_KINDS)
        return f"since the earlier capture: {parts}; {self.unchanged} links unchanged"


def _covers(cap: Capture, end: End) -> bool:
    return cap.full_fabric or (isinstance(end, Endpoint) and end.device in cap.covered)


def drift(design: Design, names: NameMap, old: Capture, new: Capture) -> DriftReport:
    """What changed from capture ``old`` to capture ``new`` of ``design``."""
    planned: dict[Edge, Link] = {}
    at: dict[Endpoint, Link] = {}
    for lk in design.links:
        a, b = Endpoint(lk.a_device, lk.a_port), Endpoint(lk.b_device, lk.b_port)
        planned[frozenset((a, b))] = lk
        at[a] = lk
        at[b] = lk
    cables: dict[str, Cable] = {c.link_id: c for c in design.cables}

    def show(end: End) -> str:
        return names.display(end) if isinstance(end, Endpoint) else end

    def edge_text(edge: Edge) -> str:
        return " - ".join(sorted(show(e) for e in edge))

    def cable_of(*edges: Edge) -> tuple[str, str, str]:
        for edge in edges:
            lk = planned.get(edge)
            if lk is None:
                lk = next((at[e] for e in sorted(edge, key=show) if e in at), None)
            if lk is not None:
                cab = cables.get(lk.id)
                return (cab.id, cab.label_a, cab.label_b) if cab else (lk.id, "", "")
        return ("", "", "")

    # only edges the new capture could have seen again count as gone
    gone = sorted(
        (e for e in old.edges - new.edges if any(_covers(new, x) for x in e)), key=edge_text
    )
    fresh = sorted(
        (e for e in new.edges - old.edges if any(_covers(old, x) for x in e)), key=edge_text
    )
    new_at: dict[End, list[Edge]] = defaultdict(list)
    for e in fresh:
        for x in e:
            new_at[x].append(e)
    used_new: set[Edge] = set()
    entries: list[DriftEntry] = []
    pending: list[tuple[Edge, Edge, End]] = []  # (old edge, new edge, the end that stayed)
    for e in gone:
        match = None
        for stay in sorted(e, key=show):
            for n in new_at.get(stay, []):
                if n not in used_new:
                    match = (n, stay)
                    break
            if match:
                break
        if match is None:
            cab = cable_of(e)
            entries.append(DriftEntry("removed", *cab, edge_text(e), "", None))
            continue
        used_new.add(match[0])
        pending.append((e, match[0], match[1]))
    # two moves that exchange their far ends are one swap
    far = {}
    for k, (o, n, stay) in enumerate(pending):
        (old_far,) = o - {stay}
        (new_far,) = n - {stay}
        far[k] = (old_far, new_far)
    by_ends = {(f[0], f[1]): k for k, f in far.items()}
    done: set[int] = set()
    for k, (o, n, _) in enumerate(pending):
        if k in done:
            continue
        other = by_ends.get((far[k][1], far[k][0]))
        if other is not None and other != k and other not in done:
            done |= {k, other}
            o2, n2, _ = pending[other]
            for old_e, new_e in ((o, n), (o2, n2)):
                cab = cable_of(old_e)
                entries.append(
                    DriftEntry(
                        "swapped", *cab, edge_text(old_e), edge_text(new_e), new_e in planned
                    )
                )
            continue
        done.add(k)
        cab = cable_of(o, n)
        entries.append(DriftEntry("moved", *cab, edge_text(o), edge_text(n), n in planned))
    for e in fresh:
        if e not in used_new:
            cab = cable_of(e)
            entries.append(DriftEntry("added", *cab, "", edge_text(e), e in planned))
    order = {k: i for i, k in enumerate(DRIFT_KINDS)}
    entries.sort(key=lambda x: (order[x.kind], x.cable, x.before, x.after))
    return DriftReport(
        entries=tuple(entries),
        unchanged=len(old.edges & new.edges),
        old_inputs=old.inputs,
        new_inputs=new.inputs,
    )
