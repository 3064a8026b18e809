"""The shortcuts that make ``recommend`` fast change nothing it answers: the closed-form leaf
tally, the all-to-all ceiling in closed form, wiring twins judged once, the pipelined branch
and bound."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.advise import recommend, search
from railplan.advise.candidates import Candidate, candidates, spec_of
from railplan.advise.ceiling import ceiling_refusal, counted_ceiling
from railplan.advise.evaluate import alltoall_ceiling, evaluate
from railplan.advise.explain import recommendation_json
from railplan.advise.requirements import requirements_of
from railplan.advise.search import lost_reason
from railplan.advise.twins import for_twin, ports_signature, twin_of
from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.errors import RailplanError
from railplan.pipeline.build import build, plan_json
from railplan.pipeline.plan import plan, tier_lists
from railplan.spec import Spec, load_spec
from railplan.topology import GENERATORS
from railplan.topology.tiers import TierModels
from railplan.topology.wiring import counting

CATALOG = load_catalog()
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def spec(gpus: int, node: str, *switches: str, **fabric: object) -> Spec:
    return Spec.model_validate(
        {"cluster": {"gpus": gpus, "node": node}, "fabric": {"switches": list(switches), **fabric}}
    )


def leaf_classes(design: Design) -> Counter:
    """The real design's links below the upper tiers, by the class counting mode tallies."""
    by_id = {s.id: s for s in design.switches}
    form = {s.id: CATALOG.switch(s.model).form_factor for s in design.switches}

    def cls(device: str, port: int) -> tuple[str, int] | None:
        sw = by_id.get(device)
        return None if sw is None else (form[device], sw.cage_of(port)[2])

    return Counter(
        (lk.kind, lk.rate_gbps, cls(lk.a_device, lk.a_port), cls(lk.b_device, lk.b_port))
        for lk in design.links
        if lk.kind not in ("leaf-spine", "spine-core")
    )


CASES = [
    (spec(256, "dgx-h100", "qm9700"), "roft"),
    (spec(1000, "dgx-h100", "qm9700", whole_su=False), "roft"),
    (spec(512, "dgx-h100", "sn5600", oversubscription="2:1"), "roft"),
    (spec(512, "dgx-h100", "sn5600", planes=2), "fat-tree"),
    (spec(600, "dgx-h100", "qm9700", whole_su=False, oversubscription="3:1"), "fat-tree"),
    (spec(256, "dgx-h100", "cx864e-n"), "matrix"),
    (spec(128, "dgx-h100", "qm9700"), "rail-only"),
    (load_spec(EXAMPLES / "superpod-h100-4su.yaml"), "roft"),
    (load_spec(EXAMPLES / "fat-tree-1k.yaml", ["fabric.fat_tree.tors_per_rack=2"]), "fat-tree"),
    (load_spec(EXAMPLES / "hpn-pod.yaml"), "roft"),
]


@pytest.mark.parametrize(
    ("base", "family"), CASES, ids=[f"{f}-{i}" for i, (_, f) in enumerate(CASES)]
)
def test_counting_tally_is_the_wiring(base: Spec, family: str) -> None:
    """Counting mode tallies every leaf link in closed form (a run of ports split at the
    leaf's up section): the same classes and counts the real wiring makes, the same leaves."""
    s = base.model_copy(update={"fabric": base.fabric.model_copy(update={"topology": family})})
    shape, _, lists = tier_lists(s, CATALOG, family)
    tiers = TierModels(lists["leaf"][0], lists["spine"][0], lists["core"][0])
    model = tiers.leaf if tiers.uniform else tiers
    design = GENERATORS[family](s, shape, model)
    with counting() as tally:
        GENERATORS[family](s, shape, model)
    assert tally.links == leaf_classes(design)
    assert [sw.id for sw in tally.switches if sw.tier == 1] == [
        sw.id for sw in design.switches if sw.tier == 1
    ]


def test_twins_are_the_same_ports() -> None:
    """SN5600 and CX864E-N: 64 OSFP cages of 800G on 51.2T, Ethernet, 2U; the QM9700 is not
    their twin, and a twin is always later in the order than the candidate it copies."""
    sn, cx, qm = (CATALOG.switch(m) for m in ("sn5600", "cx864e-n", "qm9700"))
    assert ports_signature(sn) == ports_signature(cx) != ports_signature(qm)
    base = spec(1024, "dgx-h100", "sn5600", "cx864e-n", "qm9700")
    order = candidates(base, CATALOG, requirements_of(base))
    twins = twin_of(order, CATALOG)
    assert twins and all(order.index(rep) < order.index(c) for c, rep in twins.items())
    assert all(c.switch == "sn5600" and rep.switch == "cx864e-n" for c, rep in twins.items())
    assert all(dataclasses.replace(c, switch="cx864e-n") == rep for c, rep in twins.items())


@pytest.mark.parametrize(
    "cand",
    [
        Candidate("roft", "sn5600", "3:1", 1, True, 43),  # fails the all-to-all ceiling
        Candidate("roft", "sn5600", "2:1", 2, True, 64),  # fails the routed all-to-all
        Candidate("fat-tree", "sn5600", "1:1"),  # fails pair tests and all-to-all
        Candidate("matrix", "sn5600", "2:1", 2),
    ],
    ids=lambda c: c.label,
)
def test_a_twin_takes_the_figures_evaluate_gives(cand: Candidate) -> None:
    """An unbilled twin's evaluation carried over equals evaluating it: figures, verdicts
    (the vendor its own), summary, traffic, check."""
    base = spec(1024, "dgx-h100", "sn5600", "cx864e-n")
    req = requirements_of(base)
    rep = dataclasses.replace(cand, switch="cx864e-n")
    ev = evaluate(base, rep, req, CATALOG)
    assert ev.built and not ev.billed
    carried = for_twin(ev, cand, req, CATALOG)
    assert carried == evaluate(base, cand, req, CATALOG)


def test_a_billed_or_refused_twin_is_evaluated_again() -> None:
    base = spec(1024, "dgx-h100", "sn5600", "cx864e-n")
    req = requirements_of(base)
    billed = evaluate(base, Candidate("roft", "cx864e-n"), req, CATALOG)
    assert billed.billed and billed.meets
    assert for_twin(billed, Candidate("roft", "sn5600"), req, CATALOG) is None
    refused = evaluate(base, Candidate("single-switch", "cx864e-n"), req, CATALOG)
    assert not refused.built and "cx864e-n" in refused.reason
    assert for_twin(refused, Candidate("single-switch", "sn5600"), req, CATALOG) is None


def _without_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search, "twin_of", lambda order, catalog: {})


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    nodes=st.integers(min_value=2, max_value=40),
    alltoall=st.sampled_from([0.0, 0.5, 0.9]),
    pairs=st.sampled_from([0.0, 1.0]),
)
def test_twins_change_no_answer(
    monkeypatch: pytest.MonkeyPatch, nodes: int, alltoall: float, pairs: float
) -> None:
    """The whole recommendation (design, cost, frontier, every rejected reason) is the same
    with twins carried over as with every candidate evaluated on its own, and the pipelined
    search with two workers gives it too."""
    base = spec(nodes * 8, "dgx-h100", "sn5600", "cx864e-n")
    over = {"alltoall": alltoall, "pairs_full": pairs}
    fast = recommendation_json(recommend(base, CATALOG, over, workers=1))
    two = recommendation_json(recommend(base, CATALOG, over, workers=2))
    with monkeypatch.context() as m:
        _without_twins(m)
        plain = recommendation_json(recommend(base, CATALOG, over, workers=1))
    for out in (fast, two):
        out.pop("search")
    searched = plain.pop("search")
    assert json.dumps(fast, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert json.dumps(two, sort_keys=True) == json.dumps(plain, sort_keys=True)
    assert searched["evaluated"] >= 1


def test_spec_of_twin_differs_only_in_the_model() -> None:
    base = spec(512, "dgx-h100", "sn5600", "cx864e-n")
    a = spec_of(base, Candidate("roft", "sn5600", "2:1")).model_dump()
    b = spec_of(base, Candidate("roft", "cx864e-n", "2:1")).model_dump()
    assert a["fabric"].pop("switches") == ["sn5600"] and b["fabric"].pop("switches") == ["cx864e-n"]
    assert a == b


CEILING_CASES = [
    spec(256, "dgx-h100", "qm9700"),
    spec(1000, "dgx-h100", "qm9700", "sn5600"),
    spec(2048, "dgx-h100", "sn5600"),
    spec(600, "h20-4x2x200g", "cx864e-n"),
    load_spec(EXAMPLES / "superpod-h100-4su.yaml"),
    load_spec(EXAMPLES / "fat-tree-1k.yaml", ["fabric.fat_tree.tors_per_rack=2"]),
    spec(8192, "dgx-h100", "qm9700", planes=1),  # three tiers: pods of spines, cores
]


@pytest.mark.parametrize(
    "base", CEILING_CASES, ids=[f"{s.name}-{s.cluster.gpus}" for s in CEILING_CASES]
)
def test_counted_ceiling_is_the_built_designs(base: Spec) -> None:
    """Every ROFT and fat-tree candidate's closed-form ceiling (from counting mode) is the
    ``alltoall_ceiling`` of the design ``plan`` builds for it, to the last digit; a family
    it does not cover gives None."""
    req = requirements_of(base)
    seen = 0
    for cand in candidates(base, CATALOG, req):
        s = spec_of(base, cand)
        counted = counted_ceiling(s, CATALOG, cand.family, CATALOG.switch(cand.switch))
        if cand.family not in ("roft", "fat-tree"):
            assert counted is None
            continue
        try:
            design = plan(s, CATALOG)
        except RailplanError:
            assert counted is None, cand.label
            continue
        if len(design.nodes) < 2:
            continue
        assert counted == alltoall_ceiling(design), cand.label
        seen += 1
    assert seen >= 1


def test_a_ceiling_refusal_is_the_evaluation() -> None:
    """A candidate refused on its counted ceiling gets the figures, verdicts and reason its
    evaluation gives (the build's summary aside: it is not built)."""
    base = spec(1024, "dgx-h100", "qm9700")
    req = requirements_of(base)
    cand = Candidate("roft", "qm9700", "3:1")
    ceiling = counted_ceiling(spec_of(base, cand), CATALOG, "roft", CATALOG.switch("qm9700"))
    assert ceiling is not None and ceiling < req.alltoall
    refused = ceiling_refusal(cand, ceiling, req)
    ev = evaluate(base, cand, req, CATALOG)
    assert refused is not None and not ev.billed and ev.figures.get("alltoall_ceiling")
    assert dataclasses.replace(refused, summary=ev.summary) == ev
    assert lost_reason(refused, None) == lost_reason(ev, None)
    assert ceiling_refusal(cand, ceiling, requirements_of(base, {"alltoall": ceiling})) is None


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow,
          HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    nodes=st.integers(min_value=2, max_value=64),
    switch=st.sampled_from(["qm9700", "cx732q-n", "sn5600"]),
    alltoall=st.sampled_from([0.3, 0.6, 0.9]),
)
def test_ceiling_refusals_change_no_answer(
    monkeypatch: pytest.MonkeyPatch, nodes: int, switch: str, alltoall: float
) -> None:
    """The recommendation is the same with the closed-form ceiling refusing candidates as
    with every candidate built and judged by ``evaluate``."""
    base = spec(nodes * 8, "dgx-h100", switch)
    over = {"alltoall": alltoall}
    fast = recommendation_json(recommend(base, CATALOG, over, workers=1))
    with monkeypatch.context() as m:
        m.setattr(search, "counted_ceiling", lambda *a: None)
        plain = recommendation_json(recommend(base, CATALOG, over, workers=1))
    fast.pop("search"), plain.pop("search")
    assert json.dumps(fast, sort_keys=True) == json.dumps(plain, sort_keys=True)


@pytest.mark.parametrize(
    "base",
    [
        spec(1024, "dgx-h100", "qm9700", topology="roft"),
        spec(512, "dgx-h100", "sn5600", topology="rail-only", planes=2),
        spec(2048, "dgx-h100", "cx864e-n", "sn5600", topology="fat-tree"),  # CP-SAT chooses
    ],
    ids=["roft", "rail-only-2p", "fat-tree-choice"],
)
def test_laying_out_the_planned_topology_is_building_again(base: Spec) -> None:
    """``evaluate`` lays out the topology it planned (``build(planned=)``) instead of planning
    it again: the same design, bill and solver reports as a build from scratch."""
    planned = build(base, CATALOG, layout=False)
    again = build(base, CATALOG, planned=planned)
    fresh = build(base, CATALOG)
    assert again.design.links == fresh.design.links and again.design.cables == fresh.design.cables
    assert json.dumps(plan_json(again), sort_keys=True) == json.dumps(
        plan_json(fresh), sort_keys=True
    )
