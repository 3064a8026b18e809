"""``media_design``'s pass over every component at once equals its walk group by group: the
same choices in the same order, the same notes and traces, at lengths on and beside every
breakpoint a decision reads; and a plant split per length class equals one per link."""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import replace
from functools import cache
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan.catalog import LENGTH_EPS_M, Catalog, load_catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.physical.media_assign import _Notes
from railplan.physical.media_design import (
    Structure,
    Trace,
    _Groups,
    _whole,
    shape_of,
    structure,
    tell,
)
from railplan.physical.media_design import _lengths as routed_in_order
from railplan.physical.media_plans import (
    MediaChoice,
    cheapest,
    length_breakpoints,
    longest_reach,
    per_link_choices,
    plans_for,
    plant_link_choices,
)
from railplan.physical.media_policy import OPTICS
from railplan.physical.media_types import CatalogIndex
from tests.conftest import make_spec

_CATALOG = load_catalog()


@cache
def _designs() -> tuple[Design, ...]:
    """Twin-port InfiniBand (two planes), Ethernet, and a Matrix whose leaf links can only go
    through the fibre plant."""
    from railplan.pipeline.plan import plan

    specs = [
        make_spec(512, "dgx-h100", switches=["qm9700"], planes=2),
        make_spec(256, "hgx-h100-8x400g", switches=["cx864e-n"]),
        make_spec(1280, "h20-4x2x200g", topology="matrix", switches=["cx732q-n"]),
    ]
    return tuple(plan(spec, _CATALOG) for spec in specs)


@cache
def _edges(design: Design) -> dict[int, tuple[float, ...]]:
    """By shape number: every breakpoint a decision of the shape reads, and the floats beside
    it, below the shortest length nothing reaches."""
    idx = CatalogIndex(_CATALOG)
    struct = structure(design, _CATALOG)
    out = {}
    for number in sorted(set(struct.shape_ids)):
        comp = shape_of(struct, struct.shape_ids.index(number))
        reach = longest_reach(plans_for(idx, comp))
        near = {0.0, -0.0, 1.0, 5.0, reach}
        for fibre in ("", "mmf", "smf", OPTICS):
            stocks, limits = length_breakpoints(idx, replace(comp, fibre=fibre))
            for x in [s - LENGTH_EPS_M for s in stocks] + list(limits):
                near |= {x, math.nextafter(x, -math.inf), math.nextafter(x, math.inf), x + 1e-3}
        # up to the first length nothing reaches (a plant's channel may end before its reach)
        fits = [x for x in sorted(near) if 0 <= x <= reach]
        n = len(comp.runs)
        refused = [x for x in fits if cheapest(plans_for(idx, comp), x, n) is None]
        out[number] = tuple(x for x in fits if not refused or x < refused[0])
    return out


def _lengths(design: Design, rng: random.Random, shared: bool) -> list[float]:
    """A length for every link, among its shape's edges and floats within its reach:
    ``shared``, a handful per shape (alike components then share decisions)."""
    struct = structure(design, _CATALOG)
    edges = _edges(design)
    pools = {
        k: [rng.choice(v) if rng.random() < 0.6 else rng.uniform(0, v[-1]) for _ in range(4)]
        for k, v in edges.items()
    }
    out = [0.0] * len(design.links)
    for g, members in enumerate(struct.groups):
        number = struct.shape_ids[g]
        for i in members:
            if shared:
                out[i] = rng.choice(pools[number])
            elif rng.random() < 0.5:
                out[i] = rng.choice(edges[number])
            else:
                out[i] = rng.uniform(0, edges[number][-1])
    return out


def _walk(
    struct: Structure,
    idx: CatalogIndex,
    lengths: list[float],
    fibre: dict[str, str],
    direct: frozenset[str],
) -> tuple[dict[str, MediaChoice], _Notes, list[Trace]]:
    """The walk ``assign_design`` did before the pass: component by component, in order."""
    groups = _Groups(struct, idx, lengths, fibre, direct)
    choices: dict[str, MediaChoice] = {}
    traces = []
    for g in range(len(struct.groups)):
        each, trace = groups.decide(g)
        choices.update(zip(struct.link_ids[g], each, strict=True))
        traces.append(trace)
    notes = _Notes([], Counter(), {}, Counter())
    for told, n, link, length, stretched in traces:
        tell(notes, told, n, link, length)
        if stretched is not None:
            notes.stretched.append(stretched)
    return choices, notes, traces


def _same(
    design: Design,
    catalog: Catalog,
    lengths: list[float],
    fibre: dict[str, str],
    direct: frozenset[str],
) -> bool:
    struct = structure(design, catalog)
    # each from a fresh index: no decision the other remembered, priced at its own lengths
    got = _whole(struct, CatalogIndex(catalog), lengths, fibre, direct)
    try:
        choices, notes, traces = _walk(struct, CatalogIndex(catalog), lengths, fibre, direct)
    except InfeasibleError:
        assert got is None  # refused: the walk says which component
        return False
    assert got is not None
    assert list(got[0].items()) == list(choices.items())
    assert got[1] == notes
    assert list(got[1].skipped) == list(notes.skipped)  # counted in the same order too
    assert got[1].sentences() == notes.sentences()
    assert got[2]() == traces
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_whole_pass_equals_the_walk(data: st.DataObject) -> None:
    design = data.draw(st.sampled_from(_designs()))
    ids = [lk.id for lk in design.links]
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    lengths = _lengths(design, rng, data.draw(st.booleans()))
    asked = st.sampled_from(["mmf", "smf", OPTICS])
    fibre = {k: data.draw(asked) for k in data.draw(st.lists(st.sampled_from(ids), max_size=8))}
    direct = frozenset(data.draw(st.lists(st.sampled_from(ids), max_size=8)))
    _same(design, _CATALOG, lengths, fibre, direct)


def test_whole_pass_equals_the_walk_on_each_design() -> None:
    """Each design at lengths its links reach (never refused), with and without some links
    asking for single-mode fibre or kept direct."""
    for design in _designs():
        ids = [lk.id for lk in design.links]
        for seed in (0, 1, 7):
            lengths = _lengths(design, random.Random(seed), seed == 1)
            assert _same(design, _CATALOG, lengths, {}, frozenset())
            fibre = {k: "smf" for k in ids[seed::29]}
            _same(design, _CATALOG, lengths, fibre, frozenset(ids[seed::31]))


def test_plant_designs_take_the_plant_and_notes() -> None:
    """The designs above do exercise what the pass counts: plant links, cut groups, notes."""
    kinds: Counter[str] = Counter()
    stretched = skipped = 0
    for design in _designs():
        struct = structure(design, _CATALOG)
        lengths = _lengths(design, random.Random(3), False)
        got = _whole(struct, CatalogIndex(_CATALOG), lengths, {}, frozenset())
        if got is None:
            continue
        kinds.update(c.kind for c in got[0].values())
        stretched += len(got[1].stretched)
        skipped += len(got[1].skipped)
    assert kinds["plant"] and len(kinds) > 2, kinds
    assert stretched and skipped


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_plant_link_choices_equal_per_link_ones(data: st.DataObject) -> None:
    design = data.draw(st.sampled_from(_designs()))
    idx = CatalogIndex(_CATALOG)
    struct = structure(design, _CATALOG)
    g = data.draw(st.integers(0, len(struct.groups) - 1))
    comp = shape_of(struct, g)
    plant = [p for p in plans_for(idx, comp) if p.plant is not None]
    edges = _edges(design)[struct.shape_ids[g]]
    pick = st.one_of(st.sampled_from(edges), st.floats(min_value=0.0, max_value=edges[-1]))
    at = data.draw(pick)
    priced = cheapest(plant, at, len(comp.runs))
    if priced is None:
        return
    n = len(comp.runs)
    groups = data.draw(st.lists(st.lists(pick, min_size=n, max_size=n), max_size=12))
    expected = [per_link_choices(comp, priced, lengths) for lengths in groups]
    assert plant_link_choices(comp, priced, groups) == expected


def test_lengths_read_in_link_order_equal_those_looked_up() -> None:
    """A dict keyed in link order is read by its values; any other by lookups, the same."""
    ids = ("L3", "L1", "L2")
    in_order = {"L3": 3, "L1": 1.5, "L2": 0.0}
    expected = [3.0, 1.5, 0.0]
    assert routed_in_order(ids, in_order) == expected
    assert routed_in_order(ids, dict(reversed(in_order.items()))) == expected
    assert routed_in_order(ids, MappingProxyType(in_order)) == expected
    assert routed_in_order(ids, {**in_order, "L9": 1.0}) == expected
    with pytest.raises(InfeasibleError, match="link L1 has no routed length"):
        routed_in_order(ids, {"L3": 1.0, "L2": 1.0})
    with pytest.raises(InfeasibleError, match="not a length"):
        routed_in_order(ids, {"L3": 1.0, "L1": -1.0, "L2": 1.0})
