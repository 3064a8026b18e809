"""cable_rows: each cable's link as a link-table row, -1 for an unknown link, worked out once per
design; the bill's cables in link-id order are ``by_link``'s."""

from __future__ import annotations

import dataclasses

import pytest

from railplan.catalog import load_catalog
from railplan.design.cable_rows import cable_rows
from railplan.design.link_table import link_table
from railplan.physical.bom_items import by_link, by_link_order
from railplan.validate.plant import _plant_cables_and_links
from tests.test_link_arrays import DESIGNS, laid_out


@pytest.mark.parametrize("name", DESIGNS)
def test_rows_are_the_links_of_the_cables(name: str) -> None:
    design, catalog = laid_out(name), load_catalog()
    table = link_table(design, catalog)
    rows = cable_rows(design, catalog)
    assert [table.ids[r] for r in rows.tolist()] == [c.link_id for c in design.cables]
    assert cable_rows(design, catalog) is rows  # remembered for the same objects
    with pytest.raises(ValueError):
        rows[0] = 1  # shared between callers: read-only


def test_an_unknown_link_is_minus_one() -> None:
    design, catalog = laid_out("seed001-64gpu"), load_catalog()
    stray = dataclasses.replace(design.cables[3], link_id="NO-SUCH-LINK")
    broken = dataclasses.replace(design, cables=(*design.cables[:3], stray, *design.cables[4:]))
    rows = cable_rows(broken, catalog)
    assert rows[3] == -1 and (rows[:3] >= 0).all() and (rows[4:] >= 0).all()


@pytest.mark.parametrize("name", DESIGNS)
def test_link_order_is_by_link(name: str) -> None:
    design = laid_out(name)
    reversed_cables = dataclasses.replace(design, cables=design.cables[::-1])
    for d in (design, reversed_cables):
        assert [d.cables[i] for i in by_link_order(d)] == by_link(d)


@pytest.mark.parametrize("name", DESIGNS)
def test_the_plant_picks_its_cables_and_links_by_row(name: str) -> None:
    design = laid_out(name)
    pieces: dict[str, object] = {s.link_id: s for s in design.segments}
    pieces = pieces or {design.links[0].id: None}
    pieces["NO-SUCH-LINK"] = None
    stray = dataclasses.replace(design.cables[0], link_id="NO-SUCH-LINK")
    for d in (design, dataclasses.replace(design, cables=(*design.cables, stray))):
        got = _plant_cables_and_links(d, load_catalog(), pieces)
        want_cables = {c.link_id: c for c in d.cables if c.link_id in pieces}
        want_links = {lk.id: lk for lk in d.links if lk.id in pieces}
        assert got == (want_cables, want_links)
