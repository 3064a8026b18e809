"""Prices drawn over their ranges, one draw per catalog price shared by every design.

Each price is drawn from the triangular distribution on (low, typical, high), the usual law
for a three-point estimate; a cable's per-metre price moves with its base price (one draw per
cable part). The draws of a price depend only on the seed and the price's key (a numpy PCG64
stream seeded by both), so two designs that bill the same part see the same draw in every
trial, whatever else they bill: the comparison measures the parts they differ in.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from railplan.costs.priced import PricedBill, PricedLine

PriceDraws = dict[str, np.ndarray]
#: the saving range is the 5th to 95th percentile of the draws
RANGE_PERCENTILES = (5.0, 95.0)
#: parts named as the ranking's sensitivity, at most
SENSITIVE_PARTS = 3


def draw_prices(keys: Iterable[str], seed: int, draws: int) -> PriceDraws:
    """A uniform (0, 1) draw per trial for every price key."""
    out: PriceDraws = {}
    for key in sorted(set(keys)):
        rng = np.random.default_rng([seed, zlib.crc32(key.encode("utf-8"))])
        out[key] = rng.random(draws)
    return out


def triangular(u: np.ndarray, low: float, mode: float, high: float) -> np.ndarray:
    """The triangular (low, mode, high) quantile of the uniform draws ``u``."""
    if high <= low:
        return np.full_like(u, mode)
    cut = (mode - low) / (high - low)
    left = low + np.sqrt(u * (high - low) * (mode - low))
    right = high - np.sqrt((1.0 - u) * (high - low) * (high - mode))
    return np.where(u < cut, left, right)


def line_draws(p: PricedLine, u: np.ndarray) -> np.ndarray:
    """The extended price of one line in every trial."""
    unit = triangular(u, *p.base)
    if any(p.per_m):
        unit = unit + triangular(u, *p.per_m)
    return unit * p.line.count


def bill_draws(bill: PricedBill, prices: PriceDraws) -> np.ndarray:
    """The bill's total in every trial (lines added in bill order)."""
    n = len(next(iter(prices.values()))) if prices else 0
    total = np.zeros(n)
    for p in bill.lines:
        total = total + line_draws(p, prices[p.key])
    return total


def _by_key(bill: PricedBill, prices: PriceDraws) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for p in bill.lines:
        d = line_draws(p, prices[p.key])
        out[p.key] = out[p.key] + d if p.key in out else d
    return out


@dataclass(frozen=True)
class Versus:
    """One design against a base: the share of trials where it costs less, the saving (base
    minus it) at typical prices and its 5th-95th percentile range, and the prices whose draws
    move the saving most with their share of its variance."""

    p_cheaper: float
    saving_typical: float
    saving_low: float
    saving_high: float
    sensitive: tuple[tuple[str, float], ...]

    def to_json(self) -> dict[str, object]:
        return {
            "p_cheaper": self.p_cheaper,
            "saving_range": {
                "low": round(self.saving_low, 2),
                "typical": round(self.saving_typical, 2),
                "high": round(self.saving_high, 2),
            },
            "sensitive_parts": [{"part": k, "variance_share": s} for k, s in self.sensitive],
        }


def versus(base: PricedBill, other: PricedBill, prices: PriceDraws) -> Versus:
    """``other`` against ``base`` over the same price draws."""
    a, b = bill_draws(base, prices), bill_draws(other, prices)
    saving = a - b
    lo, hi = np.percentile(saving, RANGE_PERCENTILES)
    typical = base.total()["typical"] - other.total()["typical"]
    pa, pb = _by_key(base, prices), _by_key(other, prices)
    n = len(saving)
    variances = {}
    for key in sorted(set(pa) | set(pb)):
        diff = pa.get(key, np.zeros(n)) - pb.get(key, np.zeros(n))
        variances[key] = float(np.var(diff))
    whole = sum(variances.values())
    ranked = sorted(variances.items(), key=lambda kv: (-kv[1], kv[0]))
    sensitive = tuple(
        (k, round(v / whole, 4)) for k, v in ranked[:SENSITIVE_PARTS] if whole > 0 and v > 0
    )
    return Versus(
        p_cheaper=round(float(np.mean(b < a)), 4),
        saving_typical=round(typical, 2),
        saving_low=float(lo),
        saving_high=float(hi),
        sensitive=sensitive,
    )
