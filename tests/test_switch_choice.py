"""Switch-model choice with CP-SAT: cheaper model wins, bound and gap reported, deterministic."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from railplan.catalog import Catalog, parse_catalog
from railplan.design import design_to_json
from railplan.errors import InfeasibleError, SpecError
from railplan.physical.bom import bom
from railplan.solve.switch_choice import choose, nominal_pricer
from railplan.validate import check
from tests.conftest import make_spec

CATALOGS = Path(__file__).resolve().parent.parent / "catalogs"


def catalog_with(prices: dict[str, float]) -> Catalog:
    """The bundled catalog with some switch prices changed."""
    docs = []
    for file in sorted(CATALOGS.glob("*.yaml")):
        doc = yaml.safe_load(file.read_text(encoding="utf-8"))
        for sw in doc.get("switches", []):
            if sw["id"] in prices:
                sw["price_usd"] = {"value": prices[sw["id"]], "source": "estimate: test"}
        docs.append((file.name, doc))
    return parse_catalog(docs)


def switches_only(catalog: Catalog):  # type: ignore[no-untyped-def]
    return lambda design: bom(design, catalog)


def test_picks_the_cheaper_of_two_allowed_models() -> None:
    # the bundled 51.2T switches share one reseller range: make the white box the cheaper
    catalog = catalog_with({"cx864e-n": 190_000, "sn5600": 200_000})
    spec = make_spec(256, switches=["sn5600", "cx864e-n"])
    design, report = choose(spec, catalog, "cost")
    assert {sw.model for sw in design.switches} == {"cx864e-n"}  # 190,000 vs 200,000 USD
    assert report.status == "OPTIMAL"
    assert report.best_bound == report.objective_value and report.gap == 0.0
    assert [b.label for b in report.bases] == ["cx864e-n", "sn5600"]
    assert report.objective_value == min(b.cost_usd for b in report.bases)
    assert report.objective_value == nominal_pricer(catalog)(design).totals.cost_usd
    assert report.lower_bound_switches == design.sizing.lower_bound_switches
    assert check(design) == []


def test_objective_decides_between_cheap_and_frugal(catalog: Catalog) -> None:
    cheap_sn = catalog_with({"sn5600": 50_000})  # cheaper than cx864e-n, but 1,100 W vs 1,000 W
    spec = make_spec(256, switches=["sn5600", "cx864e-n"])
    by_cost, cost_report = choose(spec, cheap_sn, "cost")
    by_power, power_report = choose(spec, cheap_sn, "power")
    assert {sw.model for sw in by_cost.switches} == {"sn5600"}
    assert {sw.model for sw in by_power.switches} == {"cx864e-n"}
    n = len(by_cost.switches)
    dearer = cheap_sn.switch("cx864e-n").price_usd.value - 50_000
    assert cost_report.bases[0].cost_usd - cost_report.objective_value == n * dearer
    assert power_report.objective == "power"
    assert power_report.objective_value == min(b.power_w for b in power_report.bases)


def test_radix_changes_the_fabric_not_just_the_unit_price(catalog: Catalog) -> None:
    # qm9700 costs half a cx864e-n but has half the ports at 400G, so twice the switches
    spec = make_spec(1024, switches=["qm9700", "cx864e-n"])
    design, report = choose(spec, catalog, "cost", switches_only(catalog))
    by_model = {b.label: b for b in report.bases}
    assert by_model["qm9700"].switches == 2 * by_model["cx864e-n"].switches
    best = min(report.bases, key=lambda b: (b.cost_usd, b.label))
    assert report.chosen.label == best.label
    assert {sw.model for sw in design.switches} == {best.label}


def test_same_inputs_same_answer(catalog: Catalog) -> None:
    spec = make_spec(256, switches=["sn5600", "cx864e-n", "qm9700"])
    one = choose(spec, catalog, "cost")
    two = choose(spec, catalog, "cost")
    assert design_to_json(one[0]) == design_to_json(two[0])
    assert one[1] == two[1]  # wall time is not compared
    assert one[1].to_json() == two[1].to_json()


def test_max_models_keeps_one_model_for_every_tier(catalog: Catalog) -> None:
    spec = make_spec(256, switches=["sn5600", "cx864e-n"])
    _, report = choose(spec, catalog, "cost", max_models=1)
    assert set(report.chosen.models) == {"leaf", "spine"}
    assert set(report.chosen.models.values()) == {"cx864e-n"}
    assert "per tier" in report.scope


def test_models_that_cannot_build_are_reported(catalog: Catalog) -> None:
    spec = make_spec(256, switches=["q3400", "cx864e-n"])
    _, report = choose(spec, catalog, "cost")
    assert [m for m, _ in report.skipped] == ["q3400"]
    # Quantum-X800 runs 200G-PAM4 lanes; ConnectX-7 400G runs 100G-PAM4 lanes (NVIDIA: XDR
    # parts cannot downshift), so no module pair joins them
    assert "no catalog part connects infiniband 400G osfp-rhs-osfp" in report.skipped[0][1]
    with pytest.raises(InfeasibleError, match="no allowed switch model builds and prices"):
        choose(make_spec(256, switches=["q3400"]), catalog, "cost")


def test_bad_arguments_are_refused(catalog: Catalog) -> None:
    spec = make_spec(256, switches=["cx864e-n"])
    with pytest.raises(SpecError, match="objective 'speed' is not one of cost, power"):
        choose(spec, catalog, "speed")
    with pytest.raises(SpecError, match="max_models must be at least 1"):
        choose(spec, catalog, "cost", max_models=0)


def catalog_plus(models: list[tuple[str, int, float]]) -> Catalog:
    """The bundled catalog plus test switches cut from cx864e-n: (id, OSFP cages, price)."""
    docs = []
    for file in sorted(CATALOGS.glob("*.yaml")):
        doc = yaml.safe_load(file.read_text(encoding="utf-8"))
        if "switches" in doc and any(s["id"] == "cx864e-n" for s in doc["switches"]):
            base = next(s for s in doc["switches"] if s["id"] == "cx864e-n")
            for mid, cages, price in models:
                doc["switches"].append(
                    {
                        **base,
                        "id": mid,
                        "name": mid,
                        "cages": cages,
                        "asic_tbps": cages * 0.8,
                        "price_usd": {"value": price, "source": "estimate: test"},
                    }
                )
        docs.append((file.name, doc))
    return parse_catalog(docs)


#: a small leaf is cheap but, as a spine, forces a third tier; a big spine is dear as a leaf
PER_TIER = [
    ("leaf-small", 16, 6_000),
    ("leaf-dear", 16, 30_000),
    ("spine-big", 64, 80_000),
    ("spine-dear", 64, 150_000),
]


def test_per_tier_choice_beats_every_single_model_fabric() -> None:
    cat = catalog_plus(PER_TIER)
    spec = make_spec(
        1024,
        leaf={"switches": ["leaf-small", "leaf-dear"]},
        spine={"switches": ["spine-big", "spine-dear"]},
    )
    design, report = choose(spec, cat, "cost")
    assert report.chosen.models == {"leaf": "leaf-small", "spine": "spine-big"}
    leaves = {sw.radix for sw in design.switches if sw.role == "leaf"}
    spines = {sw.radix for sw in design.switches if sw.role == "spine"}
    assert leaves == {32} and spines == {128}  # each tier sized from its own radix
    assert design.switch_counts() == {"leaf": 64, "spine": 8, "core": 0, "total": 72}
    bill = nominal_pricer(cat)(design).totals.cost_usd
    assert report.chosen.cost_usd == bill == report.objective_value
    singles = {}
    for model, _, _ in PER_TIER:  # every single-model fabric, planned and billed on its own
        single = choose(make_spec(1024, switches=[model]), cat, "cost")[0]
        singles[model] = nominal_pricer(cat)(single).totals.cost_usd
    assert all(bill < cost for cost in singles.values()), (bill, singles)
    assert report.status == "OPTIMAL" and report.gap == 0.0
    assert report.best_bound == report.objective_value
    assert check(design) == []
    assert any(
        "switch models by tier: leaf leaf-small, spine spine-big" in n for n in design.sizing.notes
    )


def test_a_fabric_wide_shortlist_is_chosen_per_tier_and_never_dearer_than_a_single_model() -> None:
    cat = catalog_plus(PER_TIER)
    _, report = choose(make_spec(1024, switches=[m for m, _, _ in PER_TIER]), cat, "cost")
    assert sorted(b.label for b in report.bases) == sorted(m for m, _, _ in PER_TIER)
    assert report.chosen.cost_usd <= min(b.cost_usd for b in report.bases)
    assert report.chosen.models == {"leaf": "leaf-small", "spine": "spine-big"}
    billed = {b.label for b in report.billed}
    assert "leaf leaf-small, spine spine-big" in billed
    assert report.to_json()["chosen"]["models"] == {"leaf": "leaf-small", "spine": "spine-big"}


def test_tiers_of_different_protocols_never_mix(catalog: Catalog) -> None:
    spec = make_spec(1024, leaf={"switches": ["qm9700"]}, spine={"switches": ["cx864e-n"]})
    with pytest.raises(InfeasibleError, match="infiniband and ethernet tiers do not mix"):
        choose(spec, catalog, "cost")
