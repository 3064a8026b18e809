"""The costs stage: price draws, triangular quantiles, Poisson spares, TCO terms, and the
`compare --json` cost ranges and Monte Carlo against ROFT."""

from __future__ import annotations

import json
import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import poisson

from railplan.catalog import load_catalog
from railplan.costs import draw_prices, priced_bill, spares, tco
from railplan.costs.montecarlo import triangular
from railplan.costs.spares import poisson_quantile
from railplan.pipeline.build import build
from railplan.spec import load_spec
from railplan.spec.costs import CostsSpec, SparesSpec
from tests.cli_outputs import run
from tests.conftest import EXAMPLES


@cache
def compare_json(*extra: str) -> dict:  # type: ignore[type-arg]
    code, out, err = run(
        ["compare", str(EXAMPLES / "matrix-4k.yaml"), "--no-traffic", "--json", *extra]
    )
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_compare_has_cost_ranges_and_p_cheaper() -> None:
    designs = compare_json()["designs"]
    assert {d["topology"] for d in designs} >= {"roft", "matrix"}
    for d in designs:
        c = d["cost_usd"]
        assert c["low"] <= c["p5"] <= c["typical"] <= c["p95"] <= c["high"]
        assert c["typical"] == pytest.approx(d["totals"]["cost_usd"], abs=0.01)
        groups = d["cost_breakdown_usd"]
        assert sum(g["typical"] for g in groups.values()) == pytest.approx(c["typical"], abs=0.1)
        vs = d["vs_roft"]
        assert 0.0 <= vs["p_cheaper"] <= 1.0
        r = vs["saving_range"]
        assert r["typical"] == pytest.approx(-vs["cost_usd"], abs=0.01)
        assert r["low"] <= r["high"]
        assert d["tco_usd"]["total"]["typical"] > c["typical"]
    roft = next(d for d in designs if d["topology"] == "roft")
    assert roft["vs_roft"]["p_cheaper"] == 0.0 and roft["vs_roft"]["saving_range"]["high"] == 0
    matrix = next(d for d in designs if d["topology"] == "matrix")
    # fewer switches and optics: cheaper in every draw, so its saving range is all positive
    assert matrix["vs_roft"]["saving_range"]["low"] > 0 and matrix["vs_roft"]["p_cheaper"] == 1.0
    named = [p["part"] for p in matrix["vs_roft"]["sensitive_parts"]]
    assert named and named[0] == "switch:cx864e-n"  # the part the two differ in most


def test_same_seed_same_figures_other_seed_other_draws() -> None:
    a, b = compare_json(), compare_json("--set", "costs.seed=0")
    assert a == b
    again = run(["compare", str(EXAMPLES / "matrix-4k.yaml"), "--no-traffic", "--json"])[1]
    assert json.loads(again) == a  # a fresh run, not the cache
    other = compare_json("--set", "costs.seed=7")
    p5 = [d["cost_usd"]["p5"] for d in a["designs"]]
    assert p5 != [d["cost_usd"]["p5"] for d in other["designs"]]


def test_a_price_draw_depends_only_on_seed_and_key() -> None:
    alone = draw_prices(["switch:x"], 3, 500)["switch:x"]
    among = draw_prices(["cable:y", "switch:x", "transceiver:z"], 3, 500)["switch:x"]
    assert np.array_equal(alone, among)
    assert not np.array_equal(alone, draw_prices(["switch:x"], 4, 500)["switch:x"])


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0, 1e5),
    st.floats(0, 1e5),
    st.floats(0, 1e5),
)
def test_triangular_quantile_stays_in_range_and_rises(a: float, b: float, c: float) -> None:
    low, mode, high = sorted((a, b, c))
    u = np.linspace(0, 1, 201)
    x = triangular(u, low, mode, high)
    assert np.all(x >= low - 1e-6) and np.all(x <= high + 1e-6)
    assert np.all(np.diff(x) >= -1e-6)


def test_triangular_mean_is_the_three_point_mean() -> None:
    u = np.random.default_rng(1).random(200_000)
    x = triangular(u, 100.0, 150.0, 400.0)
    assert x.mean() == pytest.approx((100 + 150 + 400) / 3, rel=0.005)


@pytest.mark.parametrize("lam", [0.0, 0.01, 0.3, 1.0, 4.2, 25.0])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.999])
def test_poisson_quantile_is_scipys(lam: float, level: float) -> None:
    expected = 0 if lam == 0 else int(poisson.ppf(level, lam))
    assert poisson_quantile(lam, level) == expected


@pytest.fixture(scope="module")
def h100():  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    built = build(load_spec(EXAMPLES / "h100-1k.yaml"), catalog)
    assert built.bom is not None
    return built.bom, catalog, priced_bill(built.bom, catalog)


def test_spares_follow_the_poisson_rule_and_the_site_minimum(h100) -> None:  # type: ignore[no-untyped-def]
    bom, catalog, bill = h100
    policy = SparesSpec(service_level=0.99, lead_time_days=60, min_per_part=2, sites=2)
    lines = spares(bill, catalog, policy)
    assert lines and len(lines) == len(bill.lines)  # no panels here: every line can fail
    for s in lines:
        n_site = math.ceil(s.priced.line.count / 2)
        lam = n_site * s.afr * 60 / 365.25
        each = max(int(poisson.ppf(0.99, lam)), 2)
        assert s.count == each * 2
        assert s.expected_per_lead_time == pytest.approx(lam, abs=1e-4)
    # spares never change the installed counts
    assert [p.line.count for p in bill.lines] == [ln.count for ln in bom.lines]


def test_tco_terms(h100) -> None:  # type: ignore[no-untyped-def]
    bom, catalog, bill = h100
    policy = CostsSpec(years=3, usd_per_kwh=0.1, pue=1.2)
    cost = tco(bom, bill, spares(bill, catalog, SparesSpec()), catalog, policy)
    energy = bom.totals.power_w / 1000 * 8766 * 3 * 1.2 * 0.1
    assert cost.energy == (energy, energy, energy)
    assert cost.capital[1] == pytest.approx(bom.totals.cost_usd)
    assert cost.capital[0] < cost.capital[1] < cost.capital[2]
    optics = sum(ln.total_usd for ln in bom.lines if ln.kind == "transceiver")
    assert cost.replacements[1] >= optics * 0.02 * 3 - 1e-6  # at least the optics' share
    assert cost.total[1] == pytest.approx(
        sum(t[1] for t in (cost.capital, cost.spares, cost.energy, cost.replacements))
    )
