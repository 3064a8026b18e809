"""The spec's ``bill``, ``costs`` and ``spares`` sections: media policy, TCO and spares rules.

Defaults and where they come from:

- ``costs.years`` 5: the depreciation life commonly used for network equipment (an
  assumption; set your own).
- ``costs.usd_per_kwh`` 0.08: US average retail price of electricity to industrial customers,
  about 8 cents per kWh in 2024 (US EIA, Electric Power Monthly, Table 5.6.A).
- ``costs.pue`` 1.56: the industry-average power usage effectiveness of the Uptime Institute
  Global Data Center Survey 2024; a new AI hall is often nearer 1.2-1.3.
- ``bill.media`` cheapest: any part that reaches, priced; fibre and copper-in-rack narrow it.
- ``costs.draws`` 2000 and ``costs.seed`` 0: the Monte Carlo over price ranges (same seed,
  same figures).
- ``spares.service_level`` 0.95: the chance that the spares on a site cover every failure
  during one replenishment lead time; ``spares.lead_time_days`` 30; ``spares.min_per_part`` 1
  per site for every active part and cable; ``spares.sites`` 1.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MEDIA_POLICIES = ("cheapest", "fibre", "copper-in-rack")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class BillSpec(_Strict):
    """What the bill may use: ``media`` cheapest (any part that reaches), fibre (optics and
    fibre cords only, as NVIDIA's reference bills) or copper-in-rack (the cheapest part that
    reaches, DAC/ACC where it does, for a link inside one rack; optics and fibre for every link
    between racks)."""

    media: Literal["cheapest", "fibre", "copper-in-rack"] = Field(
        "cheapest",
        description=(
            "cheapest | fibre (transceivers and fibre throughout, no copper or AOC) | "
            "copper-in-rack (copper where reach allows inside a rack, fibre between racks)"
        ),
    )


class CostsSpec(_Strict):
    """Total cost of ownership and the price Monte Carlo."""

    years: int = Field(5, ge=1, le=30, description="TCO horizon in years")
    usd_per_kwh: float = Field(0.08, ge=0, le=10, description="Electricity price, USD per kWh")
    pue: float = Field(1.56, ge=1, le=5, description="Power usage effectiveness of the hall")
    draws: int = Field(2000, ge=100, le=100_000, description="Monte Carlo price draws")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Monte Carlo seed")


class SparesSpec(_Strict):
    """How many spares each site keeps, from installed counts and failure rates."""

    service_level: float = Field(
        0.95, gt=0, lt=1, description="Chance the spares cover the failures of one lead time"
    )
    lead_time_days: float = Field(30, gt=0, le=730, description="Replenishment lead time")
    min_per_part: int = Field(1, ge=0, le=1000, description="Spares per part and site, at least")
    sites: int = Field(1, ge=1, le=1000, description="Sites the installed parts spread over")
