"""CP-SAT switch placement: beats the naive first fit, reports its gap, is deterministic, obeys racks."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest

import railplan.solve.placement as placement
from railplan import load_spec, plan
from railplan.errors import InfeasibleError, SpecError
from railplan.physical.bom import bom
from railplan.physical.floor import build_floor, switch_power_w, switch_units
from railplan.pipeline.layout import complete
from railplan.solve.placement import driver, exhaustive
from railplan.spec import spec_from_dict

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(scope="module")
def h100_1k(catalog):
    spec = load_spec(EXAMPLES / "h100-1k.yaml")
    return spec, plan(spec, catalog)


def test_cpsat_beats_naive_on_the_1k_example(catalog, h100_1k):
    spec, design = h100_1k
    assert (design.gpus, design.sizing.switch_model, design.topology) == (1024, "qm9700", "roft")
    solved, report = complete(design, spec, catalog, time_limit_s=5)
    naive, _ = complete(design, spec, catalog, method="naive")
    solved_cost = bom(solved, catalog).totals.cost_usd
    naive_cost = bom(naive, catalog).totals.cost_usd
    # same switches, so the whole difference is cables and optics
    assert solved_cost < naive_cost
    # the report states objective, proven bound and gap: six groups in four racks are 4,096
    # placements, all priced, so the optimum is proven without loading CP-SAT
    assert report.method == "flow and swaps, every placement priced"
    assert report.status == "OPTIMAL" and report.bound_kind == "exhaustive"
    assert report.best_bound_usd <= report.objective_usd + 1e-6
    assert 0.0 <= report.gap < 1e-6
    assert report.objective_usd < report.naive_objective_usd


def test_cp_sat_proves_the_optimum_that_pricing_every_placement_finds(
    catalog, h100_1k, monkeypatch
):
    spec, design = h100_1k
    priced, by_pricing = complete(design, spec, catalog, time_limit_s=5)
    monkeypatch.setattr(exhaustive, "EXHAUSTIVE_LIMIT", 0)  # the CP-SAT joint model instead
    solved, by_cp_sat = complete(design, spec, catalog, time_limit_s=5)
    # the search's answer kicked first (``kicks``), then proven by the joint model
    assert by_cp_sat.method == "flow and swaps, kicks, cp-sat joint"
    assert (by_pricing.status, by_cp_sat.status) == ("OPTIMAL", "OPTIMAL")
    assert by_pricing.objective_usd == by_cp_sat.objective_usd == by_cp_sat.best_bound_usd
    assert priced.placements == solved.placements


def test_a_1k_plan_never_loads_cp_sat():
    """The 1k job's placement is priced whole, so CP-SAT (and the pandas it imports, a third
    of a second) stays unloaded (the search's min-cost flow is OR-Tools' graph module): the 1k job is no slower than the 2k one (issue 34)."""
    import subprocess
    import sys

    code = (
        "import sys; from railplan import load_spec, plan; from railplan.catalog import "
        "load_catalog; from railplan.pipeline.layout import complete; "
        f"s = load_spec({str(EXAMPLES / 'h100-1k.yaml')!r}); c = load_catalog(); "
        "complete(plan(s, c), s, c); print('ortools.sat.python.cp_model' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_same_spec_same_placement(catalog, h100_1k):
    spec, design = h100_1k
    first, r1 = complete(design, spec, catalog, time_limit_s=2)
    second, r2 = complete(design, spec, catalog, time_limit_s=2)
    assert first.placements == second.placements
    assert first.cables == second.cables
    assert (r1.objective_usd, r1.best_bound_usd) == (r2.objective_usd, r2.best_bound_usd)


def test_role_by_role_is_deterministic_and_beats_naive(catalog, h100_1k, monkeypatch):
    monkeypatch.setattr(driver, "JOINT_LIMIT", 0)  # force the scalable path: the search alone
    monkeypatch.setattr(driver, "KICK_CELLS", 0)
    monkeypatch.setattr(exhaustive, "EXHAUSTIVE_LIMIT", 0)
    spec, design = h100_1k
    a, ra = complete(design, spec, catalog, time_limit_s=2)
    b, _ = complete(design, spec, catalog, time_limit_s=2)
    assert ra.method == "flow and swaps" and ra.bound_kind in ("relaxation", "capacity")
    assert a.placements == b.placements
    assert ra.best_bound_usd <= ra.objective_usd <= ra.naive_objective_usd
    assert 0.0 <= ra.gap < 1.0


def test_racks_hold_their_switches(catalog, h100_1k):
    spec, design = h100_1k
    done, _ = complete(design, spec, catalog, time_limit_s=2)
    layout = spec.layout
    switches = design.switch_by_id()
    units: dict[str, set[int]] = defaultdict(set)
    power: dict[str, float] = defaultdict(float)
    racks = {r.id: r for r in done.racks}
    for p in done.placements:
        if p.device not in switches:
            continue
        sw = switches[p.device]
        assert racks[p.rack].kind == "network"
        span = set(range(p.u, p.u + switch_units(sw, catalog)))
        assert not units[p.rack] & span, f"{p.device} overlaps another switch"
        units[p.rack] |= span
        assert max(span) <= layout.rack_height_u - layout.network_rack_reserved_u
        power[p.rack] += switch_power_w(sw, catalog, layout.switch_power)
    assert all(w <= layout.network_rack_power_w for w in power.values())


def test_rule_leaves_in_their_su_rack(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"network_racks": "in-row", "placement": {"leaves_in_su_rack": True}},
        }
    )
    design = plan(spec, catalog)
    done, _ = complete(design, spec, catalog, time_limit_s=2)
    floor = build_floor(design, spec.layout, catalog)
    where = {p.device: p.rack for p in done.placements}
    for sw in design.switches:
        if sw.role == "leaf":
            assert where[sw.id] in floor.su_racks[sw.su]


def test_rule_spines_in_the_network_row(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {
                "network_racks": "network-row",
                "placement": {"spines_in_network_row": True},
            },
        }
    )
    design = plan(spec, catalog)
    done, _ = complete(design, spec, catalog, time_limit_s=2)
    floor = build_floor(design, spec.layout, catalog)
    where = {p.device: p.rack for p in done.placements}
    row = set(floor.network_row_racks())
    assert all(where[sw.id] in row for sw in design.switches if sw.tier >= 2)


def test_rules_that_cannot_hold_say_why(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"placement": {"spines_in_network_row": True}},
        }
    )
    with pytest.raises(SpecError, match="spines_in_network_row: the layout has no network row"):
        complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    # end of row: SUs 1 and 2 are both nearest to R0117, and their 16 leaves draw
    # 16 x 1720 W = 27.5 kW, more than one 20 kW rack: the error names the rule
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"network_rack_power_w": 20000, "placement": {"leaves_in_su_rack": True}},
        }
    )
    with pytest.raises(InfeasibleError, match=r"leaves_in_su_rack: .*R0117"):
        complete(plan(spec, catalog), spec, catalog, time_limit_s=1)


def test_too_few_network_racks_is_refused(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"network_rack_count": 1},
        }
    )
    with pytest.raises(SpecError, match=r"layout\.network_rack_count: 1 network racks cannot hold"):
        complete(plan(spec, catalog), spec, catalog)


def test_relaxation_bound_is_below_the_proven_optimum(catalog, h100_1k):
    from railplan.physical.costers import DesignCoster

    spec, design = h100_1k
    floor = build_floor(design, spec.layout, catalog)
    groups = placement.make_groups(design, floor, catalog, spec.layout.placement.group_size)
    cands = placement.candidate_racks(design, floor, groups, spec.layout.placement)
    tables = placement.cost_tables(
        design, floor, catalog, groups, DesignCoster(design, catalog), cands
    )
    placed = placement.place_switches(
        design, floor, catalog, DesignCoster(design, catalog), spec.layout.placement
    )
    assert placed.report.status == "OPTIMAL"
    usable = spec.layout.rack_height_u - spec.layout.network_rack_reserved_u
    power = spec.layout.network_rack_power_w
    optimum = round(placed.report.objective_usd * placement.CENTS)
    assert 0 < placement.relaxation_bound(groups, tables, usable, power) <= optimum
    assert 0 < placement.capacity_bound(groups, tables, usable, power, optimum) <= optimum


def test_2k_search_reaches_the_optimum_found_by_enumeration(catalog):
    """2,048 GPUs (8 leaf blocks, 4 spine blocks, 8 racks of 2 blocks): every way to put the
    spines, each with the leaves' best assignment (scipy's Hungarian method), gives the
    optimum; the search must reach it without CP-SAT."""
    from scipy.optimize import linear_sum_assignment

    from railplan.physical.costers import DesignCoster

    spec = spec_from_dict(
        {"cluster": {"gpus": 2048, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"]}}
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    rules = spec.layout.placement
    groups = placement.make_groups(design, floor, catalog, rules.group_size)
    cands = placement.candidate_racks(design, floor, groups, rules)
    tables = placement.cost_tables(
        design, floor, catalog, groups, DesignCoster(design, catalog), cands
    )
    leaves = [i for i, g in enumerate(groups) if g.role == "leaf"]
    spines = [i for i, g in enumerate(groups) if g.role == "spine"]
    per_rack = 2  # 8 QM9700 draw 13.76 kW: two blocks fill a 30 kW rack
    assert groups[0].power_w * per_rack <= spec.layout.network_rack_power_w < groups[0].power_w * 3
    best = None
    for combo in itertools.combinations_with_replacement(range(tables.n_racks), len(spines)):
        count = Counter(combo)
        if max(count.values()) > per_rack:
            continue
        at = np.zeros(len(groups), dtype=np.intp)
        at[spines] = combo
        slots = [r for r in range(tables.n_racks) for _ in range(per_rack - count[r])]
        rows = []
        for i in leaves:
            row = tables.fixed[i].copy()
            for p, m in zip(*tables.partners[i], strict=True):
                row += tables.matrices[m][:, at[p]]
            rows.append(row[slots])
        r, c = linear_sum_assignment(np.array(rows))
        at[np.array(leaves)[r]] = np.array(slots)[c]
        cost = placement.placement_cost(tables, at)
        best = cost if best is None else min(best, cost)
    _, report = complete(design, spec, catalog)
    assert round(report.objective_usd * placement.CENTS) == best
    # the lower bound already proves it within the default 0.5%: no CP-SAT needed
    assert report.method == "flow and swaps" and report.gap <= rules.relative_gap_limit
    assert report.best_bound_usd <= report.objective_usd <= report.naive_objective_usd


def test_a_tighter_gap_asks_cp_sat(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 2048, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"]},
            "layout": {"placement": {"relative_gap_limit": 0, "deterministic_time_s": 0.5}},
        }
    )
    _, report = complete(plan(spec, catalog), spec, catalog)
    assert report.method == "flow and swaps, kicks, cp-sat joint"
    assert report.time_limit_s == 0.5
    assert report.best_bound_usd <= report.objective_usd


def test_time_limit_s_is_the_deprecated_name_of_deterministic_time_s():
    old = spec_from_dict({"cluster": {"gpus": 16}, "layout": {"placement": {"time_limit_s": 3}}})
    assert old.layout.placement.deterministic_time_s == 3.0
    with pytest.raises(SpecError, match="deterministic_time_s only"):
        spec_from_dict(
            {
                "cluster": {"gpus": 16},
                "layout": {"placement": {"time_limit_s": 3, "deterministic_time_s": 4}},
            }
        )


def test_the_budget_grows_with_the_groups():
    rules = spec_from_dict({"cluster": {"gpus": 16}}).layout.placement
    assert driver.deterministic_budget_s(rules, 4, None) == driver.AUTO_MIN_S
    assert driver.deterministic_budget_s(rules, 100, None) == 100 * driver.AUTO_S_PER_GROUP
    assert driver.deterministic_budget_s(rules, 10**6, None) == driver.AUTO_MAX_S
    assert driver.deterministic_budget_s(rules, 100, 2.5) == 2.5  # given on the call
    fixed = spec_from_dict(
        {"cluster": {"gpus": 16}, "layout": {"placement": {"deterministic_time_s": 7}}}
    ).layout.placement
    assert driver.deterministic_budget_s(fixed, 100, None) == 7


@pytest.mark.parametrize(
    "spec_data",
    [
        {"cluster": {"gpus": 4096, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"]}},
        {
            "cluster": {"gpus": 2048, "node": "h20-4x2x200g"},
            "fabric": {"topology": "matrix", "switches": ["cx864e-n"]},
        },
        {
            "cluster": {"gpus": 1024, "node": "hgx-h100-8x400g"},
            "fabric": {"topology": "fat-tree", "switches": ["qm9700"]},
        },
    ],
)
def test_scalable_path_is_deterministic_and_no_worse_than_first_fit(
    catalog, spec_data, monkeypatch
):
    from railplan.design import design_to_json

    monkeypatch.setattr(driver, "JOINT_LIMIT", 0)
    monkeypatch.setattr(driver, "KICK_CELLS", 0)
    monkeypatch.setattr(exhaustive, "EXHAUSTIVE_LIMIT", 0)
    spec = spec_from_dict(spec_data)
    design = plan(spec, catalog)
    first, report = complete(design, spec, catalog)
    second, _ = complete(design, spec, catalog)
    assert design_to_json(first) == design_to_json(second)
    assert report.best_bound_usd <= report.objective_usd <= report.naive_objective_usd
    _, naive_report = complete(design, spec, catalog, method="naive")
    assert report.cable_cost_usd <= naive_report.cable_cost_usd


def test_a_first_fit_nothing_can_cable_is_called_no_price(catalog, h100_1k, monkeypatch):
    """naive_objective_usd counts a link beyond every part's reach at UNREACHABLE_USD; when
    first fit costs more than every link at its dearest reachable price could, some link must
    be at that price, and the report says the figure is no price."""
    from railplan.physical.costers import DesignCoster, dearest_usd

    spec, design = h100_1k
    _, report = complete(design, spec, catalog, time_limit_s=1)
    assert not any("first fit would leave" in n for n in report.notes)
    # the dearest reachable price bounds what a link can cost once the coster has priced
    coster = DesignCoster(design, catalog)
    assert dearest_usd(coster) is None
    coster.costs(0, np.array([1.0, 30.0, 1e6]))
    dearest = dearest_usd(coster)
    assert dearest is not None and 0 < dearest < driver.UNREACHABLE_USD
    # a first fit dearer than every link at the dearest price: the report must say it
    monkeypatch.setattr(driver, "dearest_usd", lambda _c: report.naive_objective_usd / 1e9)
    _, flagged = complete(design, spec, catalog, time_limit_s=1)
    note = next(n for n in flagged.notes if "first fit would leave" in n)
    assert "is no price" in note and "could not be cabled" in note
