"""The as-built check's result: a verdict per design link, the findings, what was unexpected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from railplan.field.names import Endpoint

#: relative tolerance when comparing a seen rate with the planned one
RATE_TOLERANCE = 0.02

STATUSES = ("ok", "wrong_speed", "swapped", "miswired", "missing", "unverified")
FINDING_KINDS = (
    "swap",
    "miswired",
    "missing",
    "wrong_speed",
    "unexpected",
    "stale",
    "two_neighbours",
)

#: how many uncovered devices a coverage failure names
_NAMED = 4

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
    #: one sentence: how many sightings were dropped and why, with the nearest design names
    dropped: str = ""

    @property
    def ok(self) -> bool:
        """True when nothing needs fixing (unverified links are not failures)."""
        return not self.findings

    @property
    def verified(self) -> int:
        """Planned links an input covers (every status but ``unverified``)."""
        return sum(1 for c in self.links if c.status != "unverified")

    def verified_share(self) -> float:
        """The share of planned links an input covers (1.0 for a design without links)."""
        return self.verified / len(self.links) if self.links else 1.0

    def coverage_failure(self, min_share: float = 1.0) -> str:
        """One sentence when fewer than ``min_share`` of the planned links could be verified."""
        if self.verified_share() >= min_share - 1e-12:
            return ""
        text = (
            f"only {self.verified} of {len(self.links)} planned links "
            f"({self.verified_share():.0%}) could be verified, below the {min_share:.0%} "
            "required (--min-verified)"
        )
        cause = self.dropped or next((w for w in self.warnings if "is not a device" in w), "")
        if cause:
            return f"{text}: {cause}"
        return f"{text}; no input covers {self._uncovered()}: add their captures"

    def _uncovered(self) -> str:
        """The devices at the ends of the unverified links, the first few named."""
        devices = sorted(
            {end.split()[0] for c in self.links if c.status == "unverified" for end in (c.a, c.b)}
        )
        shown = ", ".join(devices[:_NAMED])
        return shown + (f" and {len(devices) - _NAMED} more" if len(devices) > _NAMED else "")

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
            "dropped": self.dropped,
            "verified_links": self.verified,
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
