"""The cable check's shortcut for alike cables says exactly what checking every cable rule by
rule says, on sound designs and on designs with cables broken at random (wrong part, module
or length, two modules in one cage, beyond reach by a hair)."""

from __future__ import annotations

import dataclasses
import math
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import railplan.validate.cables as cable_rules
from railplan.catalog import LENGTH_EPS_M, Catalog, load_catalog
from railplan.design import Design
from railplan.pipeline.build import build
from tests.conftest import make_spec

CATALOG = load_catalog()


@cache
def designs() -> tuple[Design, ...]:
    specs = [
        make_spec(64, "dgx-h100", switches=["qm9700"]),  # InfiniBand, twin-port cages
        make_spec(256, "hgx-h100-8x400g", switches=["cx864e-n"]),  # Ethernet, DACs and AECs
        make_spec(1280, "h20-4x2x200g", topology="matrix", switches=["cx732q-n"]),  # plant
    ]
    return tuple(build(s, CATALOG).design for s in specs)


def rule_by_rule(
    design: Design, monkeypatch: pytest.MonkeyPatch, catalog: Catalog = CATALOG
) -> list[str]:
    """The check with the shortcut off: every cable through every rule."""
    with monkeypatch.context() as m:
        m.setattr(cable_rules, "_clean_up_to", lambda *args: -math.inf)
        return cable_rules._check_cables(design, catalog)


@pytest.fixture(params=["walk", "arrays"])
def arrays(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The check as it runs on small designs (the walk) and on large ones (the arrays first)."""
    if request.param == "arrays":
        monkeypatch.setattr(cable_rules, "ARRAYS_FROM_CABLES", 0)
    return str(request.param)


def test_sound_designs_pass_both_ways(monkeypatch: pytest.MonkeyPatch, arrays: str) -> None:
    for d in designs():
        assert cable_rules._check_cables(d, CATALOG) == [] == rule_by_rule(d, monkeypatch)


def test_the_arrays_say_yes_to_sound_designs_and_no_to_broken_ones() -> None:
    """The arrays decide a sound design themselves (the walk is not what passes it) and hand
    a broken one to the walk."""
    for d in designs():
        ends = cable_rules.link_ends(d, CATALOG)
        protocols = cable_rules.link_protocols(d, CATALOG)
        plant = {s.link_id for s in d.segments}
        assert cable_rules._sound(d, CATALOG, ends, protocols, plant)
        twin = next(
            (c for c in d.cables if c.transceiver_a and ends[c.link_id][0].ports_per_cage > 1),
            None,
        )
        broken = [
            dataclasses.replace(d.cables[0], length_m=-1.0),
            dataclasses.replace(d.cables[0], link_id="no-such-link"),
            dataclasses.replace(d.cables[0], length_m=1e5),
        ]
        if twin is not None:  # a cage given a second module beside its first
            other = next(t for t in sorted(CATALOG.transceivers) if t != twin.transceiver_a)
            broken.append(dataclasses.replace(twin, transceiver_a=other))
        for cab in broken:
            cables = tuple(cab if c.id == cab.id else c for c in d.cables)
            bad = dataclasses.replace(d, cables=cables)
            assert not cable_rules._sound(bad, CATALOG, ends, protocols, plant), cab


def _lengths(design: Design, catalog: Catalog = CATALOG) -> list[float]:
    """Stocked lengths and reaches of the parts in the design, a hair either side."""
    out = {0.5, 3.0, 1e5, -1.0}
    for cab in design.cables:
        part = catalog.cables.get(cab.media)
        if part is not None:
            out.update(part.lengths_m)
        for name in (cab.transceiver_a, cab.transceiver_b):
            t = catalog.transceivers.get(name)
            if t is not None:
                out.add(t.reach_m.value)
    hair = {x + d for x in out for d in (-2 * LENGTH_EPS_M, LENGTH_EPS_M / 2, 2 * LENGTH_EPS_M)}
    return sorted(out | hair)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_broken_cables_get_the_same_sentences_both_ways(data: st.DataObject) -> None:
    d = data.draw(st.sampled_from(designs()))
    cables = list(d.cables)
    media = [*sorted(CATALOG.cables), "bogus-cable"]
    modules = [*sorted(CATALOG.transceivers), "", "bogus-optic"]
    for _ in range(data.draw(st.integers(1, 6))):
        i = data.draw(st.integers(0, len(cables) - 1))
        what = data.draw(st.sampled_from(["length", "media", "a", "b"]))
        if what == "length":
            change = {"length_m": data.draw(st.sampled_from(_lengths(d)))}
        elif what == "media":
            change = {"media": data.draw(st.sampled_from(media))}
        else:
            change = {f"transceiver_{what}": data.draw(st.sampled_from(modules))}
        cables[i] = dataclasses.replace(cables[i], **change)
    broken = dataclasses.replace(d, cables=tuple(cables))
    with pytest.MonkeyPatch.context() as m:
        if data.draw(st.booleans(), label="arrays first"):
            m.setattr(cable_rules, "ARRAYS_FROM_CABLES", 0)
        got = cable_rules._check_cables(broken, CATALOG)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(cable_rules, "_clean_up_to", lambda *args: -math.inf)
        want = cable_rules._check_cables(broken, CATALOG)
    assert got == want


def _longer_stock() -> Catalog:
    """The bundled catalog with every fibre cord stocked at twice its longest length too, so
    module reach, not the longest stock, limits the optical cables."""
    cables = {
        k: c.model_copy(update={"lengths_m": [*c.lengths_m, 2 * max(c.lengths_m)]})
        if c.optical
        else c
        for k, c in CATALOG.cables.items()
    }
    return CATALOG.model_copy(update={"cables": cables})


#: the cable walk's own answer, from the walk with the shortcut off, whichever way the check
#: under test runs (the walk and the arrays-first check are compared with the same answer)
_WALKED: dict[tuple[int, int, float], list[str]] = {}
WALK_FROM_CABLES = cable_rules.ARRAYS_FROM_CABLES


def walked(key: tuple[int, int, float], broken: Design, catalog: Catalog) -> list[str]:
    """``rule_by_rule`` in the walk, once per (catalog, design, length) for both fixtures."""
    if key not in _WALKED:
        assert len(broken.cables) < WALK_FROM_CABLES  # the walk, not the arrays, answers here
        with pytest.MonkeyPatch.context() as m:
            m.setattr(cable_rules, "ARRAYS_FROM_CABLES", WALK_FROM_CABLES)
            _WALKED[key] = rule_by_rule(broken, m, catalog)
    return _WALKED[key]


@pytest.mark.parametrize("catalog", [CATALOG, _longer_stock()], ids=["bundled", "longer-stock"])
def test_every_stock_and_reach_boundary_gets_the_same_sentences_both_ways(
    catalog: Catalog, arrays: str
) -> None:
    """One cable of every kind at each stocked length and reach, a hair either side."""
    for k, d in enumerate(designs()):
        first: dict[tuple[str, str, str], int] = {}
        for i, cab in enumerate(d.cables):
            first.setdefault((cab.media, cab.transceiver_a, cab.transceiver_b), i)
        for length in _lengths(d, catalog):
            cables = list(d.cables)
            for i in first.values():
                cables[i] = dataclasses.replace(cables[i], length_m=length)
            broken = dataclasses.replace(d, cables=tuple(cables))
            got = cable_rules._check_cables(broken, catalog)
            assert got == walked((id(catalog), k, length), broken, catalog), length
