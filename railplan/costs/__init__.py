"""Costs over a finished bill: price ranges per line, spares, total cost of ownership and the
seeded Monte Carlo over price ranges that compares designs."""

from __future__ import annotations

from railplan.costs.afr import AFR_DEFAULTS, afr_of
from railplan.costs.montecarlo import PriceDraws, Versus, bill_draws, draw_prices, versus
from railplan.costs.priced import PricedBill, PricedLine, priced_bill
from railplan.costs.spares import SpareLine, spares
from railplan.costs.tco import Tco, tco

__all__ = [
    "AFR_DEFAULTS",
    "PriceDraws",
    "PricedBill",
    "PricedLine",
    "SpareLine",
    "Tco",
    "Versus",
    "afr_of",
    "bill_draws",
    "draw_prices",
    "priced_bill",
    "spares",
    "tco",
    "versus",
]
