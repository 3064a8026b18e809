"""The as-built check's result: a verdict per design link, the findings, what was unexpected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from railplan.field.names import Endpoint

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
