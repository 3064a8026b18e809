"""Spares per part: enough for the failures of one replenishment lead time on each site.

Failures of ``n`` installed parts with annualized failure rate ``afr`` arrive as a Poisson
process; over a lead time of ``L`` days a site holding ``n_site = ceil(n / sites)`` of them
expects ``lam = n_site * afr * L / 365.25`` failures. The site keeps the smallest ``s`` with
``P(Poisson(lam) <= s) >= service_level``, and at least ``min_per_part`` of every part that
can fail. Spares are their own section: never added to the installed counts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.costs.afr import afr_of
from railplan.costs.priced import PricedBill, PricedLine
from railplan.spec.costs import SparesSpec

DAYS_PER_YEAR = 365.25


@dataclass(frozen=True, slots=True)
class SpareLine:
    """Spares of one bill line: count over all sites, the failure rate and expected failures
    per lead time per site that set it, and their price range."""

    priced: PricedLine
    count: int
    afr: float
    afr_source: str
    expected_per_lead_time: float

    def extended(self) -> tuple[float, float, float]:
        p = self.priced
        return (p.low_usd * self.count, p.typical_usd * self.count, p.high_usd * self.count)


def poisson_quantile(lam: float, level: float) -> int:
    """The smallest ``s`` with ``P(Poisson(lam) <= s) >= level`` (summed term by term)."""
    if lam <= 0:
        return 0
    term = math.exp(-lam)
    total, s = term, 0
    while total < level and s < 1_000_000:
        s += 1
        term *= lam / s
        total += term
    return s


def spares(bill: PricedBill, catalog: Catalog, policy: SparesSpec) -> tuple[SpareLine, ...]:
    """A spares line per bill line whose part can fail (see the module for the rule)."""
    out = []
    for p in bill.lines:
        rate = afr_of(p.line, catalog)
        if rate.value <= 0:
            continue
        per_site = math.ceil(p.line.count / policy.sites)
        lam = per_site * rate.value * policy.lead_time_days / DAYS_PER_YEAR
        each = max(poisson_quantile(lam, policy.service_level), policy.min_per_part)
        out.append(
            SpareLine(
                priced=p,
                count=each * policy.sites,
                afr=rate.value,
                afr_source=rate.source,
                expected_per_lead_time=round(lam, 4),
            )
        )
    return tuple(out)
