"""The bill counted over link rows: per-tier counts, missing links and item groups are what the
per-link walks over link ids (the code these replaced) count, on every way cables are shared."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.design.ends import CageEnd, link_ends
from railplan.design.link_table import link_table
from railplan.physical.bom import TIERS, bom
from railplan.physical.bom_items import (
    _first_seen,
    _first_seen_hashed,
    by_link,
    items,
    link_rows,
    modules,
)
from tests.test_link_arrays import DESIGNS, laid_out


def tiers_walk(design: Design) -> dict[str, dict[str, int]]:
    """Per BOM line (part, and length for cables), its links' tiers counted link by link."""
    catalog = load_catalog()
    tier_of = {lk.id: lk.kind.replace("-", "_") for lk in design.links}
    ordered = by_link(design)
    mods = modules(design, catalog, link_table(design, catalog), ordered)
    out: dict[str, Counter[str]] = {}
    for code, link in zip(mods.part.tolist(), mods.link, strict=True):
        out.setdefault(mods.parts[code].id, Counter())[tier_of.get(link, "")] += 1
    return {part: {t: n for t, n in c.items() if t} for part, c in out.items()}


def totals_walk(design: Design) -> dict[str, dict[str, int]]:
    """Links, physical cables and bought modules per tier, walked by link id."""
    catalog = load_catalog()
    kind_of = {lk.id: lk.kind for lk in design.links}
    ordered = by_link(design)
    table = link_table(design, catalog)
    mods = modules(design, catalog, table, ordered)
    things = items(design, catalog, {}, ordered) if _has_ids(design) else None
    per = {t: {"links": 0, "physical_cables": 0, "transceivers": 0} for t in TIERS}
    for link in {c.link_id for c in design.cables}:
        per[kind_of[link].replace("-", "_")]["links"] += 1
    for link in things.link if things is not None else []:
        per[kind_of[link].replace("-", "_")]["physical_cables"] += 1
    for code, link in zip(mods.part.tolist(), mods.link, strict=True):
        if mods.parts[code].form_factor != "cpo":
            per[kind_of[link].replace("-", "_")]["transceivers"] += 1
    return {t: v for t, v in per.items() if any(v.values())}


def _has_ids(design: Design) -> bool:
    return all(c.physical for c in design.cables)


@pytest.mark.parametrize("name", DESIGNS)
def test_module_tiers_and_totals_are_the_walks(name: str) -> None:
    design = laid_out(name)
    billed = bom(design, load_catalog())
    got = {ln.part: ln.per_tier for ln in billed.lines if ln.kind == "transceiver"}
    assert got == tiers_walk(design)
    assert billed.totals.per_tier == totals_walk(design)


@pytest.mark.parametrize("name", DESIGNS)
def test_rows_name_the_links_they_stand_for(name: str) -> None:
    design = laid_out(name)
    catalog = load_catalog()
    table = link_table(design, catalog)
    ordered = by_link(design)
    rows = link_rows(table, ordered)
    assert [table.ids[r] for r in rows.tolist()] == [c.link_id for c in ordered]
    things = items(design, catalog, {}, ordered)
    want = [table.row.get(link, -1) for link in things.link]
    assert things.row.tolist() == want


@pytest.mark.parametrize("name", DESIGNS)
def test_links_without_cables_are_noted_as_before(name: str) -> None:
    design = laid_out(name)
    plant = {s.link_id for s in design.segments}  # their pieces need their cables
    kept = [c for n, c in enumerate(design.cables) if n % 3 or c.link_id in plant]
    dropped = dataclasses.replace(design, cables=tuple(kept))
    missing = len(design.links) - len({c.link_id for c in dropped.cables})
    note = f"{missing} of {len(design.links)} links have no cable and are not priced"
    notes = bom(dropped, load_catalog()).notes
    assert (note in notes) == (missing > 0)


@pytest.mark.parametrize("name", DESIGNS)
def test_items_without_physical_ids_are_grouped_as_before(name: str) -> None:
    """A design written before physical ids: items grouped by the rule, by hashing."""
    design = laid_out(name)
    bare = dataclasses.replace(
        design, cables=tuple(dataclasses.replace(c, physical="") for c in design.cables)
    )
    catalog = load_catalog()
    things = items(bare, catalog, _ends(bare), by_link(bare))
    table = link_table(bare, catalog)
    assert things.row.tolist() == [table.row.get(link, -1) for link in things.link]


def _ends(design: Design) -> dict[str, tuple[CageEnd, CageEnd]]:
    return link_ends(design, load_catalog())


@given(
    st.lists(st.text(alphabet=st.sampled_from("Pab01\x00-"), min_size=0, max_size=4), max_size=60)
)
def test_grouping_by_sorting_is_grouping_by_hashing(keys: list[str]) -> None:
    """Groups numbered by first appearance, trailing NULs (numpy drops them) included."""
    got = _first_seen(list(keys))
    want = _first_seen_hashed(list(keys))
    assert np.array_equal(got, want)
