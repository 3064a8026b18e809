"""CP-SAT switch placement: beats the naive first fit, reports its gap, is deterministic, obeys racks."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

import railplan.solve.placement as placement
from railplan import load_spec, plan
from railplan.errors import InfeasibleError, SpecError
from railplan.physical.bom import bom
from railplan.physical.floor import build_floor, switch_power_w, switch_units
from railplan.pipeline.layout import complete
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
    # the report states objective, proven bound and gap
    assert report.method == "cp-sat joint" and report.status == "OPTIMAL"
    assert report.best_bound_usd <= report.objective_usd + 1e-6
    assert 0.0 <= report.gap < 1e-6
    assert report.objective_usd < report.naive_objective_usd


def test_same_spec_same_placement(catalog, h100_1k):
    spec, design = h100_1k
    first, r1 = complete(design, spec, catalog, time_limit_s=2)
    second, r2 = complete(design, spec, catalog, time_limit_s=2)
    assert first.placements == second.placements
    assert first.cables == second.cables
    assert (r1.objective_usd, r1.best_bound_usd) == (r2.objective_usd, r2.best_bound_usd)


def test_role_by_role_is_deterministic_and_beats_naive(catalog, h100_1k, monkeypatch):
    monkeypatch.setattr(placement, "JOINT_LIMIT", 0)  # force the scalable path
    spec, design = h100_1k
    a, ra = complete(design, spec, catalog, time_limit_s=2)
    b, _ = complete(design, spec, catalog, time_limit_s=2)
    assert ra.method == "cp-sat by role" and ra.bound_kind == "relaxation"
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
    bound = placement.relaxation_bound(groups, tables, floor) / placement.CENTS
    assert 0 < bound <= placed.report.objective_usd
