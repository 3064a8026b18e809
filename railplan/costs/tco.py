"""Total cost of ownership over the spec's ``costs.years``: capital, spares, energy, and the
optics and cables replaced as they fail.

- capital: the bill at its low, typical and high prices;
- spares: the spares section at the same prices (bought once, at the start);
- energy: the bill's typical power x 8,766 h a year x years x PUE x USD per kWh (the same in
  all three columns: power is not a price);
- replacements: each transceiver and cable line's expected failures, count x afr x years,
  at its unit price (switches and NICs are taken to be replaced under a support contract,
  outside this sum; a failed part drawn from the spares is replaced by buying another).
"""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.costs.afr import afr_of
from railplan.costs.priced import CABLE_KINDS, PricedBill
from railplan.costs.spares import SpareLine
from railplan.physical.bom import Bom
from railplan.spec.costs import CostsSpec

HOURS_PER_YEAR = 8766.0
#: bill kinds whose failures are bought again inside the TCO
REPLACED = ("transceiver", *CABLE_KINDS)


@dataclass(frozen=True)
class Tco:
    """TCO terms, each as (low, typical, high) USD."""

    years: int
    usd_per_kwh: float
    pue: float
    power_w: float
    capital: tuple[float, float, float]
    spares: tuple[float, float, float]
    energy: tuple[float, float, float]
    replacements: tuple[float, float, float]

    @property
    def total(self) -> tuple[float, float, float]:
        terms = (self.capital, self.spares, self.energy, self.replacements)
        return (
            sum(t[0] for t in terms),
            sum(t[1] for t in terms),
            sum(t[2] for t in terms),
        )

    def to_json(self) -> dict[str, object]:
        def rng(t: tuple[float, float, float]) -> dict[str, float]:
            return {"low": round(t[0], 2), "typical": round(t[1], 2), "high": round(t[2], 2)}

        return {
            "years": self.years,
            "usd_per_kwh": self.usd_per_kwh,
            "pue": self.pue,
            "power_w": self.power_w,
            "capital": rng(self.capital),
            "spares": rng(self.spares),
            "energy": rng(self.energy),
            "replacements": rng(self.replacements),
            "total": rng(self.total),
        }


def _sum3(rows: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    return (sum(r[0] for r in rows), sum(r[1] for r in rows), sum(r[2] for r in rows))


def tco(
    bom: Bom,
    bill: PricedBill,
    spare_lines: tuple[SpareLine, ...],
    catalog: Catalog,
    policy: CostsSpec,
) -> Tco:
    """The TCO of a priced bill (see the module for each term)."""
    kwh = bom.totals.power_w / 1000.0 * HOURS_PER_YEAR * policy.years * policy.pue
    energy = kwh * policy.usd_per_kwh
    replaced = []
    for p in bill.lines:
        if p.line.kind in REPLACED:
            failures = p.line.count * afr_of(p.line, catalog).value * policy.years
            replaced.append((p.low_usd * failures, p.typical_usd * failures, p.high_usd * failures))
    total = bill.total()
    return Tco(
        years=policy.years,
        usd_per_kwh=policy.usd_per_kwh,
        pue=policy.pue,
        power_w=bom.totals.power_w,
        capital=(total["low"], total["typical"], total["high"]),
        spares=_sum3([s.extended() for s in spare_lines]),
        energy=(energy, energy, energy),
        replacements=_sum3(replaced),
    )
