"""compare(spec): plan every topology family for one cluster and put the results side by side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from railplan.catalog import Catalog, load_catalog
from railplan.costs import (
    PricedBill,
    PriceDraws,
    Tco,
    bill_draws,
    draw_prices,
    priced_bill,
    spares,
    tco,
    versus,
)
from railplan.design import Design
from railplan.design.metrics import inter_switch_links, max_hops
from railplan.design.summary import plan_summary
from railplan.errors import InfeasibleError, SpecError
from railplan.physical.bom import Bom
from railplan.pipeline.build import build
from railplan.spec import Spec
from railplan.traffic.summary import summary_for_compare

FAMILIES = ("roft", "matrix", "fat-tree", "rail-only")


@dataclass(frozen=True)
class CompareRow:
    """One family's answer: a design with its derived figures, or why it cannot be built."""

    family: str
    design: Design | None
    reason: str = ""
    max_hops: int | None = None
    inter_switch_links: int | None = None
    bom: Bom | None = None

    @property
    def feasible(self) -> bool:
        return self.design is not None


def compare_family(
    spec: Spec,
    catalog: Catalog,
    family: str,
    layout: bool = False,
    method: Literal["cp-sat", "naive"] = "cp-sat",
) -> CompareRow:
    """Build ``family`` for the spec's cluster (laid out and billed when ``layout``);
    an infeasible or invalid request gives the reason."""
    try:
        built = build(spec, catalog, topology=family, layout=layout, method=method)
    except (InfeasibleError, SpecError) as exc:
        return CompareRow(family=family, design=None, reason=str(exc))
    design = built.design
    return CompareRow(
        family=family,
        design=design,
        max_hops=max_hops(design),
        inter_switch_links=inter_switch_links(design),
        bom=built.bom,
    )


def compare(
    spec: Spec,
    catalog: Catalog | None = None,
    families: tuple[str, ...] = FAMILIES,
    *,
    layout: bool = False,
    method: Literal["cp-sat", "naive"] = "cp-sat",
) -> list[CompareRow]:
    """One row per family (roft, matrix, fat-tree, rail-only), in that order.

    ``layout=True`` places and cables each design and bills it (``row.bom``).
    """
    catalog = catalog or load_catalog()
    return [compare_family(spec, catalog, family, layout, method) for family in families]


def bom_differences(base: CompareRow, other: CompareRow) -> dict[str, float]:
    """``other`` minus ``base`` in switches, transceivers, cables, cost and power, summed from
    the BOM lines themselves (not from totals or constants)."""
    assert base.bom is not None and other.bom is not None

    def sums(bill: Bom) -> dict[str, float]:
        return {
            "switches": sum(line.count for line in bill.lines if line.kind == "switch"),
            "transceivers": sum(line.count for line in bill.lines if line.kind == "transceiver"),
            "cables": sum(
                line.count for line in bill.lines if line.kind in ("cable", "fibre", "splitter")
            ),
            "cost_usd": round(sum(line.total_usd for line in bill.lines), 2),
            "power_w": round(sum(line.total_power_w for line in bill.lines), 2),
        }

    a, b = sums(base.bom), sums(other.bom)
    return {k: round(b[k] - a[k], 2) for k in a}


def row_json(row: CompareRow, traffic: bool, failures: bool = False) -> dict[str, Any]:
    assert row.design is not None
    data = plan_summary(row.design)
    data["max_hops"] = row.max_hops
    data["inter_switch_links"] = row.inter_switch_links
    if row.bom is not None:
        data["totals"] = row.bom.totals.as_dict()
    if traffic:
        data["traffic"] = summary_for_compare(row.design, failures=failures)
    return data


def compare_json(
    rows: list[CompareRow],
    traffic: bool = True,
    failures: bool = False,
    spec: Spec | None = None,
    catalog: Catalog | None = None,
) -> dict[str, Any]:
    """The ``railplan compare --json`` object: ``{"designs": [...], "infeasible": [...]}``.

    Every design carries the ``plan --json`` keys plus ``max_hops``, ``inter_switch_links``,
    ``totals`` (when billed), ``traffic`` (when asked: ``traffic.summary.summary_for_compare``,
    with ``worst_failure`` when ``failures``) and, beside a billed ROFT, ``vs_roft``: the
    differences summed from the BOM lines (zeros on the ROFT row itself, so every billed row has
    the same keys). Given the ``spec`` and ``catalog``, a billed design also has ``cost_usd``
    (low, typical, high, p5, p95), ``cost_breakdown_usd`` and ``tco_usd``, and ``vs_roft``
    the Monte Carlo comparison (``costs.montecarlo.versus``: ``p_cheaper``, ``saving_range``,
    ``sensitive_parts``) and ``tco_saving_usd``.
    """
    feasible = [r for r in rows if r.feasible]
    designs = [row_json(r, traffic, failures and traffic) for r in feasible]
    base = next((r for r in feasible if r.family == "roft" and r.bom is not None), None)
    costed = _costs(feasible, spec, catalog) if spec is not None and catalog is not None else {}
    for data, row in zip(designs, feasible, strict=True):
        if row.family in costed:
            data.update(costed[row.family].json)
    if base is not None:
        for data, row in zip(designs, feasible, strict=True):
            if row.bom is not None:
                data["vs_roft"] = bom_differences(base, row)
                if row.family in costed and base.family in costed:
                    data["vs_roft"].update(costed[row.family].against(costed[base.family]))
    infeasible = [{"topology": r.family, "reason": r.reason} for r in rows if not r.feasible]
    return {"designs": designs, "infeasible": infeasible}


@dataclass
class _Costed:
    """A billed family's priced bill, TCO and the price draws shared by every family."""

    bill: PricedBill
    tco: Tco
    draws: PriceDraws
    json: dict[str, Any]

    def against(self, base: _Costed) -> dict[str, Any]:
        out = versus(base.bill, self.bill, self.draws).to_json()
        out["tco_saving_usd"] = round(base.tco.total[1] - self.tco.total[1], 2)
        return out


def _costs(rows: list[CompareRow], spec: Spec, catalog: Catalog) -> dict[str, _Costed]:
    """Price ranges, TCO and Monte Carlo totals of every billed family, over one set of draws."""
    import numpy as np

    bills = {r.family: (r, priced_bill(r.bom, catalog)) for r in rows if r.bom is not None}
    keys = [p.key for _, bill in bills.values() for p in bill.lines]
    draws = draw_prices(keys, spec.costs.seed, spec.costs.draws)
    out = {}
    for family, (row, bill) in bills.items():
        assert row.bom is not None
        cost = tco(row.bom, bill, spares(bill, catalog, spec.spares), catalog, spec.costs)
        p5, p95 = np.percentile(bill_draws(bill, draws), [5.0, 95.0]).tolist()
        data = {
            "cost_usd": {**bill.total(), "p5": round(p5, 2), "p95": round(p95, 2)},
            "cost_breakdown_usd": bill.by_group(),
            "tco_usd": cost.to_json(),
        }
        out[family] = _Costed(bill=bill, tco=cost, draws=draws, json=data)
    return out
