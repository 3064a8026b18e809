"""A catalog price: typical, low and high figures in USD, dated, with the kind and reference of
its source; the legacy ``{value, source: "estimate: ..."}`` form still loads.

Kinds, from firmest to softest: ``quote`` (a written quotation to the user), ``list`` (the
vendor's published list price), ``reseller`` (a price a reseller advertises), ``estimate`` (no
public figure found; the range says how unsure it is). ``ref`` names the document or page.

A legacy entry keeps its one figure as ``typical``. Its range follows its source word: a
``list price: ...`` (or ``datasheet``/``vendor``/``standard``) figure is taken as exact
(low = high = typical); an ``estimate: ...`` is given ``LEGACY_ESTIMATE_FACTOR`` either way
(typical / 1.5 to typical x 1.5), the width of the bundled estimates. Its date is unknown ("").
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from railplan.catalog.base import SOURCE_KINDS, _Strict

PRICE_KINDS = ("quote", "list", "reseller", "estimate")
PriceKind = Literal["quote", "list", "reseller", "estimate"]
#: a legacy estimate spans typical / factor .. typical x factor
LEGACY_ESTIMATE_FACTOR = 1.5
#: the one currency railplan adds up; a price in another must be converted first
CURRENCY: Literal["USD"] = "USD"
_DATE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$")


class PriceSource(_Strict):
    """Where a price comes from: its kind and a document or page a reader can open."""

    kind: PriceKind
    ref: str = Field(min_length=3, max_length=400)


class Price(_Strict):
    """A price range in USD: ``low <= typical <= high``, dated ``YYYY-MM`` or ``YYYY-MM-DD``."""

    typical: float = Field(ge=0, allow_inf_nan=False)
    low: float = Field(ge=0, allow_inf_nan=False)
    high: float = Field(ge=0, allow_inf_nan=False)
    currency: Literal["USD"] = CURRENCY
    #: when the figure was seen ("" only for a legacy entry, whose date is unknown)
    date: str = ""
    source: PriceSource
    #: True when the entry was read from the legacy ``{value, source}`` form
    legacy: bool = False

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        if isinstance(data, dict) and "value" in data:
            return legacy_price(data)
        if isinstance(data, dict):
            if "currency" in data and data["currency"] != CURRENCY:
                raise ValueError(
                    f"currency {data['currency']!r}: railplan adds prices in {CURRENCY}; "
                    "convert the figures to USD and name the rate in the source ref"
                )
            if "typical" in data and not data.get("date") and not data.get("legacy"):
                raise ValueError("a price needs a date (YYYY-MM or YYYY-MM-DD) it was seen on")
        return data

    @model_validator(mode="after")
    def _ordered(self) -> Price:
        if not self.low <= self.typical <= self.high:
            raise ValueError(
                f"low {self.low:g} <= typical {self.typical:g} <= high {self.high:g} must hold"
            )
        if self.date and not _DATE.match(self.date):
            raise ValueError(f"date {self.date!r} is not YYYY-MM or YYYY-MM-DD")
        return self

    @property
    def value(self) -> float:
        """The typical figure (what the bill and every optimiser price with)."""
        return self.typical

    @property
    def kind(self) -> str:
        return self.source.kind

    def cite(self) -> str:
        """One line naming kind, reference and date: ``reseller: <ref> (2025-06)``."""
        when = f" ({self.date})" if self.date else " (undated)"
        return f"{self.source.kind}: {self.source.ref}{when}"

    def scaled(self, k: float) -> tuple[float, float, float]:
        """(low, typical, high) times ``k``."""
        return (self.low * k, self.typical * k, self.high * k)


def legacy_price(data: dict[str, Any]) -> dict[str, Any]:
    """The new form of a legacy ``{value, source: "kind: text"}`` price (see the module)."""
    extra = sorted(set(data) - {"value", "source"})
    if extra:
        raise ValueError(f"a legacy price has only value and source, not {', '.join(extra)}")
    value, source = data.get("value"), data.get("source")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("value must be a number")
    if not isinstance(source, str) or len(source) < 3:
        raise ValueError("source must name where the figure comes from")
    word = source.lower()
    if not word.startswith(SOURCE_KINDS):
        raise ValueError(
            f"must start with one of {', '.join(SOURCE_KINDS)} (e.g. 'estimate: ...'), or use "
            "the form {typical, low, high, date, source: {kind, ref}}"
        )
    ref = source.split(":", 1)[1].strip() if ":" in source else source
    v = float(value)
    if word.startswith("estimate"):
        low, high, kind = v / LEGACY_ESTIMATE_FACTOR, v * LEGACY_ESTIMATE_FACTOR, "estimate"
    else:
        low, high, kind = v, v, "list"
    return {
        "typical": v,
        "low": round(low, 2),
        "high": round(high, 2),
        "date": "",
        "source": {"kind": kind, "ref": ref if len(ref) >= 3 else source},
        "legacy": True,
    }
