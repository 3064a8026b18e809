"""The fibre plant's shortcuts give what the long way gives: port names read from tables, the
plant's links picked by row, each alike chain's parts checked once, each item priced once."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design
from railplan.design.ends import link_ends, link_protocols
from railplan.design.link_table import link_table
from railplan.design.port_names import PortNames
from railplan.physical import plant as plant_module
from railplan.physical.cabling import _in_order
from railplan.validate import plant as check_module
from tests.field_example import cabled
from tests.test_plant import planted

ROOT = Path(__file__).resolve().parent.parent


def _every_end(d: Design) -> list[tuple[str, int]]:
    return [(lk.a_device, lk.a_port) for lk in d.links] + [
        (lk.b_device, lk.b_port) for lk in d.links
    ]


@pytest.mark.parametrize("which", ["plant", "superpod"])
def test_port_names_by_table_are_the_designs_own(which: str) -> None:
    d = (
        planted().design
        if which == "plant"
        else cabled(ROOT / "examples" / "superpod-h100-4su.yaml")
    )
    switches = d.switch_by_id()
    names = PortNames(d, switches)
    ends = _every_end(d)
    assert [names(dev, port) for dev, port in ends] == [
        d.port_name(dev, port, switches) for dev, port in ends
    ]
    # a port outside a device's table is named the long way too
    for dev, _ in ends[:: max(1, len(ends) // 7)]:
        assert names(dev, 10_000) == d.port_name(dev, 10_000, switches)
    if which == "superpod":  # an attached device (the UFM) and nodes are in the ends
        assert any(dev == "ufm" for dev, _ in ends)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), share=st.floats(0.0, 1.0))
def test_the_plants_links_in_order_by_row_are_the_filter_over_every_link(
    seed: int, share: float
) -> None:
    d = planted().design
    table = link_table(d, load_catalog())
    rng = np.random.default_rng(seed)
    rows = rng.permutation(len(d.links))
    order = [d.links[r] for r in rows.tolist()]
    ids = {lk.id for lk in d.links if rng.random() < share}
    assert _in_order(ids, order, rows, table) == [lk for lk in order if lk.id in ids]


def test_repeated_link_ids_leave_the_plants_links_to_the_filter() -> None:
    d = planted().design
    twice = dataclasses.replace(d, links=(*d.links, d.links[0]))
    table = link_table(twice, load_catalog())
    rows = np.arange(len(twice.links))
    assert _in_order({d.links[0].id}, list(twice.links), rows, table) is None


def _check_plant_long_way(d: Design, catalog: Catalog) -> list[str]:
    """``check_plant`` with every link's parts checked afresh (no answer shared)."""
    fresh = check_module._parts

    def unshared(*args: object) -> list[str]:
        return fresh(*args[:-1], {})  # type: ignore[arg-type, call-arg]

    check_module._parts = unshared  # type: ignore[assignment]
    try:
        return check_module.check_plant(
            d, catalog, link_ends(d, catalog), link_protocols(d, catalog)
        )
    finally:
        check_module._parts = fresh


def _check_plant(d: Design, catalog: Catalog) -> list[str]:
    return check_module.check_plant(d, catalog, link_ends(d, catalog), link_protocols(d, catalog))


@pytest.mark.parametrize(
    "spoil",
    [
        "none",
        "length",  # every middle piece at an unstocked length: one problem per link, alike
        "part",  # one link's middle piece on a part that is no fibre
        "two-alike",  # two links spoiled the same way: each named
    ],
)
def test_plant_check_shares_answers_only_between_alike_chains(catalog: Catalog, spoil: str) -> None:
    d = planted().design
    segs = list(d.segments)
    middles = [
        i
        for i, s in enumerate(segs)
        if s.seq == 2 and len({t.seq for t in segs if t.link_id == s.link_id}) == 3
    ]
    if spoil == "length":
        for i in middles:
            segs[i] = dataclasses.replace(segs[i], length_m=segs[i].length_m + 0.25)
    elif spoil == "part":
        segs[middles[0]] = dataclasses.replace(segs[middles[0]], part="no-such-part")
    elif spoil == "two-alike":
        for i in middles[:2]:
            segs[i] = dataclasses.replace(segs[i], length_m=segs[i].length_m + 0.25)
    spoiled = dataclasses.replace(d, segments=tuple(segs))
    found = _check_plant(spoiled, catalog)
    assert found == _check_plant_long_way(spoiled, catalog)
    assert (found == []) == (spoil == "none")
    if spoil == "two-alike":
        named = {segs[i].link_id for i in middles[:2]}
        assert {p.split(":")[0].removeprefix("link ") for p in found if "stocked" in p} == named


def test_the_plants_cost_prices_each_item_at_its_last_piece(catalog: Catalog) -> None:
    d = planted().design
    seen: dict[str, float] = {}
    for s in d.segments:
        seen[s.physical] = catalog.cables[s.part].price_at(s.length_m)
    panels = sum(
        catalog.panels[p.part].price_usd.value
        + p.cassettes * catalog.cassettes[p.cassette].price_usd.value
        for p in d.panels
    )
    want = round(panels + sum(seen.values()), 2)
    assert plant_module._cost(d.panels, catalog, d.segments) == want
