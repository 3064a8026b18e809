"""The fibre plant: links whose both ends fan out get harnesses, panels and trunks, checked,
billed, scheduled piece by piece and mapped port by port in the sheets."""

from __future__ import annotations

import csv
import dataclasses
import io
from collections import Counter
from collections.abc import Callable
from functools import cache

import pytest

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design, design_from_json, design_to_json
from railplan.errors import InfeasibleError
from railplan.physical import media
from railplan.physical.media import CageEnd, LinkRun
from railplan.pipeline.build import Build, build
from railplan.render import cables_csv
from railplan.render.pdf_sheets import render_sheets
from railplan.spec import Spec
from railplan.validate import check
from tests.conftest import make_spec
from tests.test_pdf import sections, text_of

#: 1,280 GPUs as a Matrix of 64 x 200G QSFP-DD leaves: bundles of one link per leaf pair, so
#: both ends of every leaf-leaf link sit on a 2-port connector whose ports go to two leaves
PLANT_SPEC = dict(gpus=1280, node="h20-4x2x200g", topology="matrix", switches=["cx732q-n"])


@cache
def planted() -> Build:
    spec = make_spec(
        PLANT_SPEC["gpus"],
        PLANT_SPEC["node"],
        topology=PLANT_SPEC["topology"],
        switches=PLANT_SPEC["switches"],
    )
    return build(spec, load_catalog())


def test_links_that_fan_out_at_both_ends_go_through_the_plant(catalog: Catalog) -> None:
    b = planted()
    d = b.design
    assert check(d, catalog) == []
    leaf_leaf = [lk for lk in d.links if lk.kind == "leaf-leaf"]
    plant = {s.link_id for s in d.segments}
    assert plant == {lk.id for lk in leaf_leaf}  # every one needs it; no node link does
    assert b.bom is not None and b.bom.totals.plant_links == len(leaf_leaf) == 648
    pieces = Counter(s.link_id for s in d.segments)
    for lk in leaf_leaf:
        chain = sorted((s for s in d.segments if s.link_id == lk.id), key=lambda s: s.seq)
        assert pieces[lk.id] in (2, 3)  # harness, (trunk or cord), harness
        harness = catalog.cables[chain[0].part]
        assert harness.breakout == 2 and harness.end_a == "mpo-16-upc"  # SR8 run as 2 x 200G
        assert chain[0].a_device == lk.a_device and chain[-1].b_device == lk.b_device
    # every leg end lands on a panel port: one shared coupler per link inside a rack
    same_rack = sum(1 for lk in leaf_leaf if pieces[lk.id] == 2)
    assert sum(p.used for p in d.panels) == 2 * (len(leaf_leaf) - same_rack) + same_rack
    placed = {p.device for p in d.placements}
    assert {p.id for p in d.panels} <= placed


def test_plant_is_billed_from_its_physical_items(catalog: Catalog) -> None:
    b = planted()
    d = b.design
    assert b.bom is not None
    t = b.bom.totals
    lines = {(ln.kind, ln.part): ln.count for ln in b.bom.lines}
    by_part = Counter(p.part for p in d.panels)
    assert {k[1]: n for k, n in lines.items() if k[0] == "panel"} == dict(by_part)
    assert sum(n for (k, _), n in lines.items() if k == "cassette") == sum(
        p.cassettes for p in d.panels
    )
    items = {s.physical: catalog.cables[s.part].kind for s in d.segments}
    assert t.trunks == sum(1 for k in items.values() if k == "trunk")
    assert t.harnesses == sum(1 for s in {(s.physical, s.part) for s in d.segments}
                              if catalog.cables[s[1]].breakout > 1)  # fmt: skip
    assert t.panels == len(d.panels) and t.panel_units == sum(p.height_u for p in d.panels)
    switch_u = sum(catalog.switch(s.model).rack_units for s in d.switches)
    assert t.rack_units == switch_u + t.panel_units
    # a trunk carries at most 12 legs, each once
    legs = Counter(s.physical for s in d.segments if items[s.physical] == "trunk")
    assert max(legs.values()) <= 12
    assert t.links == len(d.links)
    assert t.per_tier["leaf_leaf"]["links"] == 648


def test_schedule_lists_each_plant_piece_as_its_own_row() -> None:
    d = planted().design
    rows = list(csv.DictReader(io.StringIO(cables_csv.render(d))))
    pieces = Counter(s.link_id for s in d.segments)
    per_link = Counter(r["link_id"] for r in rows)
    for lk in d.links:
        assert per_link[lk.id] == pieces.get(lk.id, 1)
    plant_rows = [r for r in rows if r["piece"]]
    assert len(plant_rows) == len(d.segments)
    first = next(r for r in plant_rows if r["piece"].startswith("1/"))
    assert first["a_device"].startswith("p0-") and first["b_device"].startswith("PNL-")
    assert first["b_port"].endswith("/front") and first["transceiver_a"]
    direct = [r for r in rows if not r["piece"]]
    assert all(r["physical_cable"].startswith("P") and r["leg"] for r in direct)


def test_sheets_carry_a_patch_panel_port_map() -> None:
    b = planted()
    pdf, _ = render_sheets(b.design, b.bom)
    reader, parts = sections(pdf)
    assert "Patch-panel port maps" in parts
    text = text_of(reader, parts["Patch-panel port maps"])
    for p in b.design.panels:
        assert p.id in text
    assert "/rear" in text and "A1-B2" in text


def test_design_json_keeps_the_plant() -> None:
    d = planted().design
    again = design_from_json(design_to_json(d))
    assert again == d
    assert again.panels == d.panels and again.segments == d.segments


def test_check_refuses_a_broken_plant(catalog: Catalog) -> None:
    d = planted().design
    segs = list(d.segments)
    i = next(k for k, s in enumerate(segs) if s.seq == 2)
    clash = next(s for s in segs if s.seq == 2 and s.a_device == segs[i].a_device and s != segs[i])
    segs[i] = dataclasses.replace(segs[i], a_port=clash.a_port)
    problems = check(dataclasses.replace(d, segments=tuple(segs)), catalog)
    assert any("carries links" in p or "do not meet" in p for p in problems)
    long = [dataclasses.replace(s, length_m=1000.0) if s.seq == 2 else s for s in d.segments]
    problems = check(dataclasses.replace(d, segments=tuple(long)), catalog)
    assert any("not stocked" in p or "beyond" in p for p in problems)


def _fan_out_both_ends(length: float) -> list[LinkRun]:
    """Two Ethernet switches with 4 x 200G cages: cage 0 of s0 reaches four different cages."""
    return [
        LinkRun(
            f"L{i}",
            200,
            length,
            CageEnd("s0", 0, i, "osfp", 4, "Asterfusion", (100,)),
            CageEnd(f"s{i + 1}", 0, 0, "osfp", 4, "Asterfusion", (100,)),
            protocol="ethernet",
        )
        for i in range(4)
    ]


def test_plant_chosen_only_where_needed_or_cheaper(catalog: Catalog) -> None:
    # both ends fan out: nothing point-to-point joins them, so the plant carries them
    got = media.assign_cages(catalog, _fan_out_both_ends(30.0))
    assert {c.kind for c in got.choices.values()} == {"plant"}
    assert any("both ends fan out" in n for n in got.notes)
    # one cage fanning out to single-port NICs: a 1:2 splitter fibre is cheaper than panels
    fan = [
        LinkRun(f"N{i}", 200, 30.0, CageEnd(f"n{i}", 0, 0, "qsfp112", 1, "Broadcom", ()),
                CageEnd("s0", 0, i, "osfp", 4, "Asterfusion", (100,)), protocol="ethernet")
        for i in range(4)
    ]  # fmt: skip
    assert {c.kind for c in media.assign_cages(catalog, fan).choices.values()} != {"plant"}

    # make long splitter fibre dear per metre: the plant keeps its harnesses short (in-rack)
    # and runs the distance on a trunk, so it wins on cost and says so
    def dearer(c):  # type: ignore[no-untyped-def]
        # a price is a range now: `value` is the typical figure, so move all three
        per_m = c.price_per_m_usd.model_copy(update={"typical": 300.0, "low": 300.0, "high": 300.0})
        return c.model_copy(update={"price_per_m_usd": per_m})

    dear = {k: dearer(c) if c.kind == "fibre" and c.breakout > 1 else c
            for k, c in catalog.cables.items()}  # fmt: skip
    pricey = catalog.model_copy(update={"cables": dear})
    got = media.assign_cages(pricey, fan)
    assert {c.kind for c in got.choices.values()} == {"plant"}
    assert any("cheaper than point-to-point" in n for n in got.notes)


def test_a_plant_channel_beyond_reach_is_refused(catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError, match=r"no catalog part reaches 600\.0 m"):
        media.assign_cages(catalog, _fan_out_both_ends(600.0))


def test_plant_cost_per_link_adds_up(catalog: Catalog) -> None:
    from railplan.physical.media_types import catalog_index
    from railplan.physical.plant_plans import (
        PANEL_RUN_M,
        cheapest_carriage,
        panel_options,
        port_usd,
    )

    got = media.assign_cages(catalog, _fan_out_both_ends(30.0))
    c = got.choices["L0"]
    harness = catalog.cables[c.fan_out_a]
    assert harness.breakout == 2 and c.fan_out_a == c.fan_out_b
    t = catalog.transceivers[c.transceiver_a]
    panel, plate = panel_options(catalog_index(catalog), harness.end_b)[0]
    leg_parts = [p for p in catalog.cables.values()
                 if p.optical and p.breakout == 1 and p.fibre == harness.fibre
                 and p.end_a == p.end_b == harness.end_b and not p.usable("ethernet", ["Asterfusion"])]  # fmt: skip
    carriage, stock, per_leg = cheapest_carriage(leg_parts, 30.0)  # type: ignore[misc]
    assert (c.cable, c.stocked_length_m) == (carriage.id, stock)
    fan = harness.price_at(harness.stocked(PANEL_RUN_M) or 0.0) / 2  # one harness, two legs
    expected = t.price_usd.value / 4 + t.price_usd.value  # s0's module serves four links
    expected += 2 * fan + 2 * port_usd(panel, plate) + per_leg
    assert c.cost_usd == pytest.approx(expected, abs=1e-3)


def test_a_leg_sent_to_the_far_racks_panel_shares_its_coupler(catalog: Catalog) -> None:
    """Rack R1 has no free unit, so the a leg of an R1-R2 link lands on a panel in R2: the b
    leg, from R2, then joins it in the same coupler (no second port, no cord between them)."""
    from types import SimpleNamespace

    from railplan.design import Link
    from railplan.physical.plant_panels import PanelSpace, allocate_ports

    connector = next(iter(catalog.cassettes.values())).connector
    space = PanelSpace(
        free={"R1": set(), "R2": set(range(1, 43))},
        order=lambda rack: [rack, "R2" if rack == "R1" else "R1"],
    )
    lk = Link("L1", "leaf_spine", "x", 0, "y", 0, 400, 0)
    fan = SimpleNamespace(end_b=connector)
    a = SimpleNamespace(rack="R1", fan=fan, panel=-1, number=0)
    b = SimpleNamespace(rack="R2", fan=fan, panel=-1, number=0)
    allocate_ports({("L1", "a"): a, ("L1", "b"): b}, [lk], space, catalog)  # type: ignore[dict-item]
    assert space.panels[a.panel].rack == "R2"
    assert (b.panel, b.number) == (a.panel, a.number)
    assert space.panels[a.panel].used == 1


def _stretched_1k(longest_cord_m: float) -> tuple[Spec, Catalog]:
    """h100-1k on a floor of 16 rows 36.9 m apart: its leaf-spine links run up to 299.9 m
    between switches, but the panels of some rack pairs stand 300.1 m apart. The OS2 trunk is
    stocked at 300 and 500 m (no 400): the media choice prices a 300 m trunk, and at the
    panels only the 500 m one spans the gap, which with the harnesses exceeds the 500 m of the
    DR4 modules. The OS2 cord has no 300 m length; OS2 cords stop at ``longest_cord_m``."""
    from pathlib import Path

    import yaml

    from railplan.spec import spec_from_dict

    data = yaml.safe_load((Path(__file__).parents[1] / "examples" / "h100-1k.yaml").read_text())
    data["layout"].update(
        racks_per_row=2, row_pitch_m=36.9, network_rack_count=3, network_rack_reserved_u=0
    )
    cat = load_catalog()
    cables = dict(cat.cables)

    def lengths(part: str, keep: Callable[[float], bool]) -> None:
        cables[part] = cables[part].model_copy(
            update={"lengths_m": [x for x in cables[part].lengths_m if keep(x)]}
        )

    lengths("trunk-os2-mpo12-apc-12", lambda x: x != 400)
    lengths("fibre-os2-mpo12-apc", lambda x: x != 300 and x <= longest_cord_m)
    lengths("fibre-smf-lc", lambda x: x <= longest_cord_m)
    # the placement that opens the 300.1 m gap is a cost optimum, so it moves with module
    # prices: the twin-port SR modules keep the USD 1,200 this floor was built with, and a
    # catalog price update does not move the racks out of the scenario
    transceivers = dict(cat.transceivers)
    for part in ("osfp-800g-2xsr4", "osfp-800g-2xsr4-4x200g", "osfp-rhs-800g-2xsr4"):
        price = transceivers[part].price_usd.model_copy(
            update={"typical": 1200.0, "low": 800.0, "high": 1800.0}
        )
        transceivers[part] = transceivers[part].model_copy(update={"price_usd": price})
    return spec_from_dict(data), cat.model_copy(
        update={"cables": cables, "transceivers": transceivers}
    )


def test_a_plant_channel_beyond_reach_falls_back_to_point_to_point() -> None:
    """Regression: a single-mode plant channel the stocked trunks cannot keep within reach
    used to fail the whole build (the 131,072-GPU README job); those links now take
    point-to-point cords where their cages allow, and the design passes check."""
    spec, cat = _stretched_1k(longest_cord_m=2000)
    b = build(spec, cat)
    d = b.design
    assert check(d, cat) == []
    assert b.placement is not None and b.bom is not None
    kept = [n for n in b.placement.notes if "kept off the fibre plant" in n]
    assert len(kept) == 1 and "fibre-os2-mpo12-apc" in kept[0]
    moved = int(kept[0].split()[0])
    plant = {s.link_id for s in d.segments}
    cables = {c.link_id: c for c in d.cables}
    leaf_spine = [lk for lk in d.links if lk.kind == "leaf-spine"]
    # the moved links are point-to-point 500 m OS2 cords, within the 500 m DR4 reach
    direct_long = [lk for lk in leaf_spine if lk.id not in plant and cables[lk.id].length_m > 200]
    assert len(direct_long) >= moved > 0
    for lk in direct_long:
        c = cables[lk.id]
        assert (c.media, c.length_m) == ("fibre-os2-mpo12-apc", 500.0)
        assert cat.transceivers[c.transceiver_a].reach_m.value >= c.length_m
    # every link left in the plant has its channel within its modules' reach
    for lk_id in plant:
        c = cables[lk_id]
        assert c.length_m <= cat.transceivers[c.transceiver_a].reach_m.value
    assert b.bom.totals.plant_links == len(plant) > 0


def test_a_plant_channel_nothing_else_carries_names_the_limit() -> None:
    """Without a single-mode cord that long (MPO for DR4, LC for FR4), the same links have no
    way within reach: the refusal says so and names the channel limit of the modules. The
    kicked placement fails first (a node link of a twin-port cage beyond the 100 m its other
    link allows); the search's own placement, cabled next, is the one that opens the 300.1 m
    gap, and its refusal is the answer."""
    spec, cat = _stretched_1k(longest_cord_m=200)
    with pytest.raises(InfeasibleError, match=r"within the 500 m its modules osfp-800g-2xdr4"):
        build(spec, cat)


def _numbers_in_order(d: Design) -> None:
    """Physical ids are P00001 on without a gap or a repeat: the point-to-point cables first,
    numbered as their links come in technician (cable) order, then the plant's pieces."""
    plant = {s.link_id for s in d.segments}
    direct: list[int] = []
    for c in d.cables:  # cable ids run in technician order
        n = int(c.physical[1:])
        if c.link_id not in plant and n not in direct:
            direct.append(n)
    pieces = sorted({int(s.physical[1:]) for s in d.segments})
    assert direct == list(range(1, len(direct) + 1))
    assert pieces == list(range(len(direct) + 1, len(direct) + len(pieces) + 1))


def test_physical_ids_number_direct_cables_then_the_plant() -> None:
    _numbers_in_order(planted().design)


def test_physical_ids_stay_in_order_after_links_move_off_the_plant() -> None:
    """The plant is tried numbering its own pieces from 1 and moved up after the
    point-to-point cables once it stands, also when a retry moved links off it."""
    spec, cat = _stretched_1k(longest_cord_m=2000)
    b = build(spec, cat)
    assert b.placement is not None
    assert any("kept off the fibre plant" in n for n in b.placement.notes)
    _numbers_in_order(b.design)
