"""Growth: phases cut from the final design, zero-move growth, delta bill against the two bills,
the delta test plan, and growth that must re-cable (2-tier into 3-tier) with its proved bound."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.change.grow import grow, grow_phases
from railplan.change.phases import cut, plan_phases, subset_problems
from railplan.design import Design
from railplan.physical.bom import bom
from railplan.pipeline.build import build
from railplan.spec import load_spec, spec_from_dict, spec_to_dict
from railplan.validate import check
from tests.conftest import EXAMPLES


def _bill(design: Design, catalog) -> Counter:
    out: Counter = Counter()
    for ln in bom(design, catalog).lines:
        out[ln.kind, ln.part, ln.length_m] += ln.count
    return out


def _spec(gpus: int, **extra):
    raw = spec_to_dict(load_spec(EXAMPLES / "h100-1k.yaml"))
    raw["cluster"]["gpus"] = gpus
    raw["name"] = f"h100-{gpus}"
    for path, value in extra.items():
        raw["fabric"][path] = value
    return spec_from_dict(raw)


@pytest.fixture(scope="module")
def h100_phased(catalog):
    spec = load_spec(EXAMPLES / "h100-1k.yaml")
    return spec, grow_phases(spec, catalog, [("su2", 512), ("su4", 1024)])


def test_h100_two_su_to_four_su_moves_nothing(h100_phased, catalog):
    spec, phased = h100_phased
    (step,) = phased.steps
    assert step.before.gpus == 512 and step.after.gpus == 1024
    assert step.before.sizing.sus == 2 and step.after.sizing.sus == 4
    assert step.moved == 0 and step.change.moves == () and step.change.removed == ()
    assert step.change.reracked == () and step.change.changed == ()
    # the final phase is the plan of the spec itself, byte for byte
    assert step.after.cables == build(spec, catalog).design.cables
    assert check(step.before, catalog) == [] and check(step.after, catalog) == []
    # every phase's cabling is a subset of the next: same ports, same cable rows, same racks
    assert subset_problems(step.before, step.after) == []
    before_cables = {c.link_id: c for c in step.before.cables}
    after_cables = {c.link_id: c for c in step.after.cables}
    assert all(after_cables[k] == c for k, c in before_cables.items())


def test_h100_delta_bill_is_the_difference_of_the_two_bills(h100_phased, catalog):
    _, phased = h100_phased
    (step,) = phased.steps
    expected = _bill(step.after, catalog)
    expected.subtract(_bill(step.before, catalog))
    assert step.change.bill_counts() == {k: v for k, v in expected.items() if v}
    assert all(ln.removed == 0 for ln in step.change.lines)
    cost = bom(step.after, catalog).totals.cost_usd - bom(step.before, catalog).totals.cost_usd
    assert step.change.cost_usd == pytest.approx(cost, abs=0.01)
    # 2 more SUs: 16 leaves; the 16 spines are already there, half their ports kept free
    assert step.change.bill_counts()["switch", "qm9700", None] == 16
    assert len([s for s in step.before.switches if s.tier == 2]) == 16


def test_h100_delta_test_plan_covers_every_added_link(h100_phased):
    _, phased = h100_phased
    (step,) = phased.steps
    added = {lk.id for lk in step.after.links} - {lk.id for lk in step.before.links}
    assert len(added) == 1024
    assert set(step.change.added) == added
    assert step.tests.covered("added") == added
    regression = step.tests.covered("regression")
    assert regression and regression <= {lk.id for lk in step.before.links}
    new_nodes = {n.id for n in step.after.nodes} - {n.id for n in step.before.nodes}
    tested = {p.node_a for p in step.tests.pairs if p.why == "added"}
    assert tested == new_nodes
    by_id = {n.id: n for n in step.after.nodes}
    for p in step.tests.pairs:
        if p.why == "added":  # a new node against an installed node in another SU
            assert p.node_b not in new_nodes and by_id[p.node_a].su != by_id[p.node_b].su


def test_buy_later_two_su_moves_half_the_uplinks(catalog):
    """Planned alone, 2 SU takes 8 spines (4 links per leaf and spine); 4 SU spreads each leaf
    over 16 spines at 2 links each: per leaf and spine pair only 2 of 4 can stay. Into the
    2-SU cut of the final design (whose spine ports for SUs 3-4 stay free) fewer can."""
    from railplan.change.align import align

    alone = build(_spec(512), catalog).design
    final = build(load_spec(EXAMPLES / "h100-1k.yaml"), catalog).design
    al = align(alone, final)
    assert al.moves == 16 * 8 * 2 == al.lower_bound_moves
    into_cut = align(alone, cut(final, 512, "su2"))
    assert into_cut.moves >= al.moves and into_cut.moves == into_cut.lower_bound_moves


@pytest.fixture(scope="module")
def two_to_three_tier(catalog):
    before = build(_spec(2048), catalog).design
    after = build(_spec(8192), catalog).design
    return before, after, grow(before, after, catalog)


def test_two_tier_into_three_tier_reports_moves_with_a_proved_bound(two_to_three_tier, catalog):
    before, after, g = two_to_three_tier
    assert before.sizing.tiers == 2 and after.sizing.tiers == 3
    assert g.alignment is not None
    # the bound, re-derived here from the two wirings: a 2-tier spine has one link to each of
    # the 64 leaves; a 3-tier spine serves one pod through its 32 down ports, so at most 32
    # of an installed spine's cables can stay on it
    spines_b = [s for s in before.switches if s.tier == 2]
    down = Counter(lk.b_device for lk in after.links if lk.kind == "leaf-spine")
    per_spine = max(down.values())
    links_b = Counter(lk.b_device for lk in before.links if lk.kind == "leaf-spine")
    bound = sum(max(0, links_b[s.id] - per_spine) for s in spines_b)
    assert bound == 32 * 32
    assert g.lower_bound == bound
    assert g.moved <= g.lower_bound + g.gap
    assert g.moved == bound and g.gap == 0
    # the moves counted are real: re-counted from the two designs' port pairs
    ends_after = {(lk.a_device, lk.a_port, lk.b_device, lk.b_port) for lk in g.after.links}
    stayed = sum(
        (lk.a_device, lk.a_port, lk.b_device, lk.b_port) in ends_after for lk in g.before.links
    )
    assert len(g.before.links) - stayed == g.moved
    assert check(g.after, catalog) == []
    assert {m.end for m in g.change.moves} == {"b"}  # the leaf end stays, the spine end moves
    steps = [(m.from_rack, -m.from_u, m.from_device, m.from_port) for m in g.change.moves]
    assert steps == sorted(steps)  # technician order


def test_pre_installing_the_core_tier_moves_nothing(catalog):
    phased = grow_phases(_spec(8192), catalog, [("p1", 2048), ("p2", 8192)])
    (step,) = phased.steps
    assert step.before.sizing.tiers == 3
    assert step.before.switch_counts()["core"] > 0
    assert step.moved == 0 and step.change.moves == ()
    assert check(step.before, catalog) == []


def test_phases_must_grow_and_end_at_the_cluster(catalog):
    from railplan.errors import SpecError

    with pytest.raises(SpecError, match="grow phase by phase"):
        spec_from_dict(
            {
                "cluster": {"gpus": 64, "node": "dgx-h100"},
                "phases": [{"name": "a", "gpus": 64}, {"name": "b", "gpus": 32}],
            }
        )
    with pytest.raises(SpecError, match=r"more than cluster\.gpus"):
        spec_from_dict(
            {"cluster": {"gpus": 64, "node": "dgx-h100"}, "phases": [{"name": "a", "gpus": 128}]}
        )
    with pytest.raises(SpecError, match="its own name"):
        spec_from_dict(
            {
                "cluster": {"gpus": 64, "node": "dgx-h100"},
                "phases": [{"name": "a", "gpus": 32}, {"name": "a", "gpus": 64}],
            }
        )
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 64, "node": "dgx-h100"},
            "phases": [{"name": "a", "gpus": 32}, {"name": "b", "gpus": 64}],
        }
    )
    assert [p.gpus for p in spec.phases] == [32, 64]
    assert "phases" not in spec_to_dict(load_spec(EXAMPLES / "h100-1k.yaml"))


@pytest.fixture(scope="module")
def h100_final(catalog):
    return build(load_spec(EXAMPLES / "h100-1k.yaml"), catalog).design


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sets(st.integers(1, 127), min_size=1, max_size=3))
def test_any_phases_are_nested_subsets_with_exact_delta_bills(h100_final, catalog, nodes):
    sizes = [*sorted(n * 8 for n in nodes), 1024]
    phases = [(f"ph{k}", g) for k, g in enumerate(sizes)]
    plan = plan_phases(h100_final, phases, catalog, [1] * len(phases))
    assert plan.problems == ()
    for (a, b), step in zip(itertools.pairwise(plan.phases), plan.steps, strict=True):
        assert not step.moves and not step.removed
        expected = _bill(b.design, catalog)
        expected.subtract(_bill(a.design, catalog))
        assert step.bill_counts() == {k: v for k, v in expected.items() if v}


PHASE_EXAMPLES = (
    "basepod-8node",  # rail-only
    "fat-tree-1k",  # per-rack ToRs
    "seed003-matrix",  # spineless Matrix: the whole mesh stands from day one
    "superpod-h100-4su",  # reserved UFM ports on an attached device
    "layout-64gpu-tray-graph",
    "seed000-2node",
)


@pytest.mark.parametrize("name", PHASE_EXAMPLES)
def test_every_family_grows_from_half_without_moves(name, catalog):
    final = build(load_spec(EXAMPLES / f"{name}.yaml"), catalog).design
    per = final.shape.gpus
    half = max(per, final.gpus // 2 // per * per)
    plan = plan_phases(final, [("half", half), ("all", final.gpus)], catalog, [1, 1])
    assert plan.problems == ()
    (step,) = plan.steps
    assert not step.moves and not step.removed and not step.changed
    expected = _bill(final, catalog)
    expected.subtract(_bill(plan.phases[0].design, catalog))
    assert step.bill_counts() == {k: v for k, v in expected.items() if v}


def test_fibre_plant_phases_add_plates_trunks_and_harnesses(catalog):
    """A Matrix whose leaf mesh runs through patch panels (tests/test_plant.py's design)."""
    from tests.conftest import make_spec

    spec = make_spec(1280, "h20-4x2x200g", topology="matrix", switches=["cx732q-n"])
    final = build(spec, catalog).design
    assert final.segments
    plan = plan_phases(final, [("half", 640), ("all", 1280)], catalog, [1, 1])
    assert plan.problems == ()
    (step,) = plan.steps
    expected = _bill(final, catalog)
    expected.subtract(_bill(plan.phases[0].design, catalog))
    assert step.bill_counts() == {k: v for k, v in expected.items() if v}
    assert not step.moves and not step.removed
