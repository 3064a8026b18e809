"""The media decision cache: a remembered answer equals the one priced afresh, at every length."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.catalog import LENGTH_EPS_M, Catalog, load_catalog
from railplan.design import Design
from railplan.physical import media
from railplan.physical.media_plans import (
    Component,
    Priced,
    catalog_index,
    cheapest,
    cheapest_for,
    plans_for,
)
from railplan.physical.media_types import CatalogIndex
from tests.conftest import make_spec

_CATALOG = load_catalog()


def _components(catalog: Catalog) -> list[Component]:
    """Every distinct component shape of three small designs (InfiniBand, Ethernet, 3 tiers),
    with their relaxed twins (what the rules cost is priced on those)."""
    from railplan.pipeline.plan import plan

    out: dict[Component, None] = {}
    specs = [
        make_spec(256, "hgx-h100-8x400g", switches=["cx864e-n"]),
        make_spec(256, "dgx-h100", switches=["qm9700"]),
        make_spec(512, "dgx-h100", switches=["qm9700"], planes=2),
    ]
    for spec in specs:
        design = plan(spec, catalog)
        runs = media.design_runs(design, catalog, {lk.id: 1.0 for lk in design.links})
        for members in media.components(runs):
            for fibre in ("", "mmf", "smf"):
                comp = media.component_shape(runs, members, fibre)
                out[comp] = None
                out[comp.relaxed()] = None
    return list(out)


COMPONENTS = _components(_CATALOG)


def _fresh(idx: CatalogIndex, comp: Component, length_m: float, which: str) -> Priced | None:
    plans = plans_for(idx, comp)
    if which == "direct":
        plans = tuple(p for p in plans if p.plant is None)
    return cheapest(plans, length_m, len(comp.runs))


def _edges(idx: CatalogIndex, comp: Component) -> list[float]:
    """Every stocked length and reach of the component's parts, and a hair either side."""
    out = []
    for plan in plans_for(idx, comp):
        parts = [p for inst in plan.instances for p in inst.parts]
        parts += list(plan.plant.carriages) if plan.plant is not None else []
        points = [plan.reach_m] + [s for p in parts for s in p.lengths_m]
        for x in points:
            if math.isfinite(x):
                out += [x, x - LENGTH_EPS_M, x + LENGTH_EPS_M, x + 2 * LENGTH_EPS_M, x + 1e-3]
    return [x for x in out if x >= 0]


def test_there_are_components_of_several_shapes() -> None:
    assert len(COMPONENTS) >= 6
    assert any(len(c.runs) > 1 for c in COMPONENTS)
    assert any(c.protocol == "ethernet" for c in COMPONENTS)


@pytest.mark.skipif(
    os.environ.get("RAILPLAN_SLOW") != "1", reason="every breakpoint (20 s): RAILPLAN_SLOW=1"
)
def test_cached_answer_equals_fresh_one_at_every_breakpoint() -> None:
    idx = catalog_index(_CATALOG)
    checked = 0
    for comp in COMPONENTS:
        for which in ("all", "direct"):
            for length in _edges(idx, comp):
                # twice: the second call is answered from the cache, both must equal a fresh price
                for _ in range(2):
                    assert cheapest_for(idx, comp, length, which) == _fresh(
                        idx, comp, length, which
                    ), (comp, which, length)
                checked += 1
    assert checked > 500


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(COMPONENTS),
    st.sampled_from(("all", "direct")),
    st.lists(st.floats(min_value=0.0, max_value=2500.0), min_size=1, max_size=8),
)
def test_cached_answer_equals_fresh_one_at_random_lengths(
    comp: Component, which: str, lengths: list[float]
) -> None:
    idx = catalog_index(_CATALOG)
    for length in lengths:
        assert cheapest_for(idx, comp, length, which) == _fresh(idx, comp, length, which)


def _designs() -> list[Design]:
    from railplan.pipeline.plan import plan

    return [
        plan(make_spec(256, "hgx-h100-8x400g", switches=["cx864e-n"]), _CATALOG),
        plan(make_spec(512, "dgx-h100", switches=["qm9700"], planes=2), _CATALOG),
    ]


DESIGNS = _designs()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_design_assignment_equals_the_one_cage_by_cage(data: st.DataObject) -> None:
    """The remembered, structure-once assignment is the one ``assign_cages`` gives afresh,
    at random lengths, with random links asking for a fibre type or kept point-to-point."""
    from railplan.physical.media_assign import assign_cages, design_runs
    from railplan.physical.media_design import assign_design

    design = data.draw(st.sampled_from(DESIGNS))
    links = [lk.id for lk in design.links]
    pool = st.sampled_from([0.5, 1.0, 2.0, 3.0, 5.0, 7.5, 20.0, 30.0, 49.9, 50.0, 100.0, 450.0])
    lengths = {k: data.draw(pool) for k in links}
    fibre = {k: "smf" for k in data.draw(st.lists(st.sampled_from(links), max_size=6))}
    direct = set(data.draw(st.lists(st.sampled_from(links), max_size=6)))
    try:
        expected = assign_cages(_CATALOG, design_runs(design, _CATALOG, lengths, fibre, direct))
    except Exception as exc:  # the same refusal is expected of both
        try:
            assign_design(design, _CATALOG, lengths, fibre, direct)
        except type(exc) as again:
            assert str(again) == str(exc)
            return
        raise AssertionError(f"assign_design accepted what assign_cages refused: {exc}") from exc
    for _ in range(2):  # the second call answers from what the first remembered
        got = assign_design(design, _CATALOG, lengths, fibre, direct)
        assert got == expected


def test_the_cable_check_is_derived_afresh_for_every_design_object() -> None:
    """The bill reuses the cable check of the very design object ``check`` just derived it
    for; any other design, however alike, is checked from scratch (and the answer returned is
    a copy the caller may change)."""
    import dataclasses

    from railplan.validate.cables import check_cables
    from tests.test_media import cabled_at_20m

    design, cables = cabled_at_20m(_CATALOG)
    sound = dataclasses.replace(design, cables=tuple(cables))
    first = check_cables(sound, _CATALOG)
    assert first == []
    first.append("changed by the caller")
    assert check_cables(sound, _CATALOG) == []
    cables[0] = dataclasses.replace(cables[0], media="no-such-part")
    broken = dataclasses.replace(design, cables=tuple(cables))
    assert any("no-such-part" in p for p in check_cables(broken, _CATALOG))
    assert check_cables(sound, _CATALOG) == []
    assert any("no-such-part" in p for p in check_cables(broken, _CATALOG))


def _without_300m_cords() -> Catalog:
    cables = dict(_CATALOG.cables)
    for part in ("fibre-os2-mpo12-apc", "trunk-os2-mpo12-apc-12"):
        stock = [x for x in cables[part].lengths_m if x != 300]
        cables[part] = cables[part].model_copy(update={"lengths_m": stock})
    return _CATALOG.model_copy(update={"cables": cables})


_NO_300M = _without_300m_cords()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_asking_again_with_some_links_changed_equals_a_fresh_answer(data: st.DataObject) -> None:
    """The fibre-plant retry asks again at the same lengths with a few links kept
    point-to-point or moved to single-mode: only their components are decided again, and
    the answer (choices and notes) is the one ``assign_cages`` gives afresh."""
    from railplan.physical.media_assign import assign_cages, design_runs
    from railplan.physical.media_design import assign_design

    design = data.draw(st.sampled_from(DESIGNS))
    links = [lk.id for lk in design.links]
    # node links at 5 m; without a stocked 300 m single-mode cord, links of 300 m take the
    # plant, where keeping a link point-to-point changes its component's answer
    pool = st.sampled_from([2.0, 5.0, 30.0, 50.0, 100.0, 300.0, 300.0, 450.0])
    lengths = {lk.id: 5.0 if lk.kind == "node-leaf" else data.draw(pool) for lk in design.links}
    fibre: dict[str, str] = {}
    direct: set[str] = set()
    upper = [lk.id for lk in design.links if lk.kind != "node-leaf"]
    for _ in range(3):  # single-mode reaches every length drawn; multimode would be refused
        for k in data.draw(st.lists(st.sampled_from(links), max_size=4)):
            fibre[k] = data.draw(st.sampled_from(["smf", ""]))
        direct |= set(data.draw(st.lists(st.sampled_from(upper), max_size=4)))
        try:
            expected = assign_cages(_NO_300M, design_runs(design, _NO_300M, lengths, fibre, direct))
        except Exception as exc:
            try:
                assign_design(design, _NO_300M, lengths, fibre, direct)
            except type(exc) as again:
                assert str(again) == str(exc)
                return
            raise AssertionError(
                f"assign_design accepted what assign_cages refused: {exc}"
            ) from exc
        assert assign_design(design, _NO_300M, lengths, fibre, direct) == expected
