"""Each bill line with its catalog price range, source kind, reference and date."""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog, Price
from railplan.physical.bom import Bom, BomLine

#: bill line kinds priced from the catalog's cables section (at the line's stocked length)
CABLE_KINDS = ("cable", "fibre", "splitter", "harness", "trunk")
#: the tier groups of the compare chart's cost breakdown
GROUPS = {
    "switch": "switches",
    "nic": "nics",
    "transceiver": "transceivers",
    "cable": "cables",
    "splitter": "cables",
    "fibre": "fibre plant",
    "harness": "fibre plant",
    "trunk": "fibre plant",
    "panel": "fibre plant",
    "cassette": "fibre plant",
}


@dataclass(frozen=True, slots=True)
class PricedLine:
    """A bill line and its unit price range; ``key`` names the price it draws from (a
    transceiver mode shares its part's; every length of a cable shares the cable's)."""

    line: BomLine
    key: str
    low_usd: float
    typical_usd: float
    high_usd: float
    #: the per-metre share of the unit price range (cables priced by length), else zeros
    per_m: tuple[float, float, float]
    base: tuple[float, float, float]
    kind: str
    ref: str
    date: str
    #: the maker the part is qualified for ("" for a multi-vendor MSA part)
    vendor: str = ""

    @property
    def group(self) -> str:
        return GROUPS.get(self.line.kind, self.line.kind)

    def extended(self) -> tuple[float, float, float]:
        n = self.line.count
        return (self.low_usd * n, self.typical_usd * n, self.high_usd * n)


@dataclass(frozen=True)
class PricedBill:
    """Every line of a bill priced as a range; totals in USD."""

    lines: tuple[PricedLine, ...]

    def total(self) -> dict[str, float]:
        """``{low, typical, high}``: the bill with every price at its low, typical, high end."""
        lo = sum(p.extended()[0] for p in self.lines)
        ty = sum(p.line.total_usd for p in self.lines)
        hi = sum(p.extended()[2] for p in self.lines)
        return {"low": round(lo, 2), "typical": round(ty, 2), "high": round(hi, 2)}

    def by_group(self) -> dict[str, dict[str, float]]:
        """The totals per cost group (switches, nics, transceivers, cables, fibre plant)."""
        out: dict[str, dict[str, float]] = {}
        for p in self.lines:
            lo, _, hi = p.extended()
            g = out.setdefault(p.group, {"low": 0.0, "typical": 0.0, "high": 0.0})
            g["low"] += lo
            g["typical"] += p.line.total_usd
            g["high"] += hi
        return {k: {f: round(v, 2) for f, v in g.items()} for k, g in out.items()}

    def sources(self) -> list[dict[str, str]]:
        """One row per price drawn from: key, kind, reference, date (sorted by key)."""
        seen: dict[str, dict[str, str]] = {}
        for p in self.lines:
            seen.setdefault(
                p.key, {"part": p.key, "kind": p.kind, "ref": p.ref, "date": p.date or "undated"}
            )
        return [seen[k] for k in sorted(seen)]


def _price_of(line: BomLine, catalog: Catalog) -> tuple[str, Price, Price | None, float, str]:
    """The key, price, per-metre price, length and vendor a line is priced from."""
    kind, part = line.kind, line.part
    if kind == "switch":
        sw = catalog.switch(part)
        return f"switch:{part}", sw.price_usd, None, 0.0, sw.vendor
    if kind == "nic":
        nic = catalog.nic(part)
        return f"nic:{part}", nic.price_usd, None, 0.0, nic.vendor
    if kind == "transceiver":
        t = catalog.transceivers[part]
        return f"transceiver:{t.part}", t.price_usd, None, 0.0, t.vendor
    if kind in CABLE_KINDS:
        c = catalog.cables[part]
        length = float(line.length_m or 0.0)
        return f"cable:{part}", c.price_usd, c.price_per_m_usd, length, c.vendor
    if kind == "panel":
        p = catalog.panels[part]
        return f"panel:{part}", p.price_usd, None, 0.0, p.vendor
    if kind == "cassette":
        cas = catalog.cassettes[part]
        return f"cassette:{part}", cas.price_usd, None, 0.0, cas.vendor
    raise ValueError(f"bill line kind {kind!r} has no catalog price")


def priced_line(line: BomLine, catalog: Catalog) -> PricedLine:
    key, price, per_m, length, vendor = _price_of(line, catalog)
    base = price.scaled(1.0)
    metres = per_m.scaled(length) if per_m is not None else (0.0, 0.0, 0.0)
    lo, ty, hi = (b + m for b, m in zip(base, metres, strict=True))
    ref = price.source.ref
    kinds: str = price.source.kind
    if per_m is not None:
        ref = f"{ref}; per metre: {per_m.source.kind}: {per_m.source.ref}"
        if per_m.source.kind != price.source.kind:
            kinds = f"{kinds}+{per_m.source.kind}"
    return PricedLine(
        line=line,
        key=key,
        low_usd=round(lo, 2),
        typical_usd=round(ty, 2),
        high_usd=round(hi, 2),
        per_m=metres,
        base=base,
        kind=kinds,
        ref=ref,
        date=price.date,
        vendor=vendor,
    )


def priced_bill(bom: Bom, catalog: Catalog) -> PricedBill:
    """Every line of ``bom`` with the price range of its catalog part (the catalog the bill was
    priced from: a user catalog's quote shows here with its own kind and reference)."""
    return PricedBill(tuple(priced_line(line, catalog) for line in bom.lines))
