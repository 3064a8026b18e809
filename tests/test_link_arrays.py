"""The array passes over links (physical ids, end labels, colours, the bill's modules and items)
give what the rule-by-rule walks they replaced give: those walks are kept here as the oracle."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import railplan.physical.cage_groups as cage_group_rules
import railplan.physical.media_design as media_design
from railplan import load_spec, plan
from railplan.catalog import Catalog, load_catalog
from railplan.design import Design, Link, Switch
from railplan.design.ends import CageEnd, link_ends
from railplan.design.link_table import EndArrays, LinkTable, link_table
from railplan.errors import InfeasibleError
from railplan.physical.bom_items import by_link, instance_key, items, line_kind, modules
from railplan.physical.cage_groups import cage_groups, group_shapes
from railplan.physical.labels import TIA_598, EndLabels, link_colours
from railplan.physical.media_assign import LinkRun, component_shape, components
from railplan.physical.media_design import structure
from railplan.physical.media_types import MediaChoice
from railplan.physical.physical_ids import direct_ids
from railplan.pipeline.layout import complete
from railplan.spec.labels import parse_label_template
from tests.test_plant import planted

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
#: small examples between them cabled with twin-port DACs and splitters, fibre cords on twin
#: and single modules, and the fibre plant
DESIGNS = ("seed001-64gpu", "basepod-8node", "seed003-matrix", "layout-64gpu-tray-graph", "plant")


@functools.cache
def laid_out(name: str) -> Design:
    """The example of that name laid out, or ("plant") the Matrix cabled through the plant."""
    catalog = load_catalog()
    if name == "plant":
        return planted().design
    spec = load_spec(EXAMPLES / f"{name}.yaml")
    return complete(plan(spec, catalog), spec, catalog, time_limit_s=0.5)[0]


# --- physical ids -----------------------------------------------------------------------


def walk_ids(catalog, order, ends, choices):  # type: ignore[no-untyped-def]
    """The walk ``direct_ids`` replaced: each link's ``instance_key`` in order, the first link
    of a key drawing the next id, legs numbered by (a slot, b slot, link id)."""
    first: dict[Hashable, str] = {}
    members: dict[Hashable, list[tuple[int, str]]] = {}
    for link in order:
        choice = choices[link.id]
        if choice.kind == "plant":
            continue
        part = catalog.cables[choice.cable]
        mods = [
            catalog.transceivers.get(n) if n else None
            for n in (choice.transceiver_a, choice.transceiver_b)
        ]
        a, b = ends[link.id]
        key = instance_key(part, a, b, mods)
        first.setdefault(key, f"P{len(first) + 1:05d}")
        members.setdefault(key, []).append((a.slot * 1000 + b.slot, link.id))
    out = {}
    for key, phys in first.items():
        ranked = sorted(members[key])
        for n, (_, link_id) in enumerate(ranked, start=1):
            out[link_id] = (phys, "A1-B1" if len(ranked) == 1 else f"A{n}-B{n}")
    return out


class _Link(NamedTuple):
    id: str


def _choice(cable: str, ta: str = "", tb: str = "", kind: str = "direct") -> MediaChoice:
    return MediaChoice(cable, 3.0, ta, tb, kind, 1.0, 1.0)


#: one of each way ``instance_key`` names a cable: straight and splitter DACs, cords on
#: modules of one and two ports per connector, splitter cords either way round, the plant
CHOICES = (
    _choice("", kind="plant"),
    _choice("dac-osfp-800g-twin"),
    _choice("dac-osfp-800g-2x400g-osfp"),
    _choice("dac-osfp-800g-4x200g-osfp"),
    _choice("fibre-mmf-mpo12-apc", "osfp-800g-2xsr4", "osfp-800g-2xsr4"),
    _choice("fibre-mmf-mpo12-apc", "osfp-800g-2xsr4-4x200g", "osfp-800g-2xsr4"),
    _choice("fibre-mmf-mpo12-apc-2x", "osfp-800g-2xsr4-4x200g", "osfp-800g-2xsr4"),
    _choice("fibre-mmf-mpo12-apc-2x", "osfp-800g-2xsr4", "osfp-800g-2xsr4-4x200g"),
    _choice("fibre-mmf-mpo12-apc-2x", "osfp-800g-2xsr4", "osfp-800g-2xsr4"),
)

END = st.tuples(
    st.integers(0, 3), st.integers(-1, 3), st.integers(0, 3), st.sampled_from([1, 2, 4])
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(END, END, st.integers(0, len(CHOICES) - 1)), min_size=1, max_size=40),
    st.randoms(use_true_random=False),
)
def test_direct_ids_name_the_cables_the_instance_key_walk_names(rows, rnd) -> None:  # type: ignore[no-untyped-def]
    catalog = load_catalog()
    ids = [f"L{i}" for i in range(len(rows))]
    rnd.shuffle(ids)  # link ids in no particular order, so ties break on them
    table, ends = table_of(ids, [(a, b) for a, b, _ in rows])
    choices = {link_id: CHOICES[c] for link_id, (_, _, c) in zip(ids, rows, strict=True)}
    order = [_Link(i) for i in ids]
    rnd.shuffle(order)
    counter = iter(range(1, 10_000))
    phys, legs, count = direct_ids(catalog, order, table, choices, lambda: f"P{next(counter):05d}")
    want = walk_ids(catalog, order, ends, choices)
    got = {link.id: (p, g) for link, p, g in zip(order, phys, legs, strict=True) if p}
    assert got == want
    assert count == len({p for p, _ in want.values()})
    assert all(
        not p and not g for link, p, g in zip(order, phys, legs, strict=True) if link.id not in want
    )


SHAPES = (("osfp", "nvidia", (100,)), ("osfp", "", ()), ("qsfp112", "arista", (100,)))


def table_of(ids, rows):  # type: ignore[no-untyped-def]
    """A link table and the link ends it stands for, from (device, cage, slot, ports per cage)
    at each end of each link (devices d0-d3, each of one shape of SHAPES)."""
    devices = ("d0", "d1", "d2", "d3")
    shapes = {}
    ends = {}
    columns: dict[str, list[list[int]]] = {"a": [[] for _ in range(7)], "b": [[] for _ in range(7)]}
    for link_id, (a, b) in zip(ids, rows, strict=True):
        pair = []
        for side, (dev, cage, slot, ppc) in (("a", a), ("b", b)):
            ff, vendor, lanes = SHAPES[dev % len(SHAPES)]
            code = shapes.setdefault((ff, ppc, vendor, lanes), len(shapes))
            for col, v in zip(
                columns[side], (dev, 0, cage, slot, ppc, dev * 10 + cage + 1, code), strict=True
            ):
                col.append(v)
            pair.append(CageEnd(devices[dev], cage, slot, ff, ppc, vendor, lanes))
        ends[link_id] = (pair[0], pair[1])
    a, b = (EndArrays(*(np.array(c, np.int64) for c in columns[s])) for s in "ab")
    listed = tuple(sorted(shapes, key=shapes.__getitem__))
    return LinkTable(tuple(ids), devices, {k: i for i, k in enumerate(ids)}, a, b, listed), ends


@pytest.mark.parametrize("name", DESIGNS)
def test_laid_out_physical_ids_are_the_walks(name: str) -> None:
    """The cabled design numbers its point-to-point cables as the walk does (technician order
    is the cables' order; the plant's pieces come after)."""
    catalog = load_catalog()
    design = laid_out(name)
    plant = {s.link_id for s in design.segments}
    links = {lk.id: lk for lk in design.links}
    ends = link_ends(design, catalog)
    direct = [c for c in design.cables if c.link_id not in plant]
    choices = {c.link_id: _choice(c.media, c.transceiver_a, c.transceiver_b) for c in direct}
    want = walk_ids(catalog, [links[c.link_id] for c in direct], ends, choices)
    assert {c.link_id: (c.physical, c.leg) for c in direct} == want


# --- cage groups and their shapes -------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(END, END, st.sampled_from([200, 400]), st.sampled_from(["", "ib", "eth"])),
        min_size=1,
        max_size=40,
    )
)
def test_cage_groups_and_shapes_are_the_walks(rows) -> None:  # type: ignore[no-untyped-def]
    ids = [f"L{i}" for i in range(len(rows))]
    table, ends = table_of(ids, [(a, b) for a, b, _, _ in rows])
    runs = [
        LinkRun(i, speed, 0.0, *ends[i], protocol=protocol)
        for i, (_, _, speed, protocol) in zip(ids, rows, strict=True)
    ]
    with pytest.MonkeyPatch.context() as m:  # scipy's components, whatever the size
        m.setattr(cage_group_rules, "SCIPY_FROM_LINKS", 0)
        groups = cage_groups(table, runs)
    assert groups == [tuple(m) for m in components(runs)]
    shapes = group_shapes(table, runs, groups)
    for members, got in zip(groups, shapes, strict=True):
        try:
            want = component_shape(runs, members, "")
        except InfeasibleError as exc:
            assert isinstance(got, InfeasibleError)
            assert str(got) == str(exc)
        else:
            assert got == want


@pytest.mark.parametrize("scipy_from", [0, cage_group_rules.SCIPY_FROM_LINKS])
@pytest.mark.parametrize("name", DESIGNS)
def test_the_structure_of_a_laid_out_design_is_the_walks(
    name: str, scipy_from: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = load_catalog()
    design = laid_out(name)
    monkeypatch.setattr(cage_group_rules, "SCIPY_FROM_LINKS", scipy_from)
    struct = media_design._structure(design, catalog)  # built anew, not remembered
    runs = list(struct.runs)
    assert list(struct.groups) == [tuple(m) for m in components(runs)]
    assert list(struct.shapes) == [component_shape(runs, m, "") for m in struct.groups]
    assert [tuple(runs[i].link_id for i in m) for m in struct.groups] == list(struct.link_ids)
    numbered: dict[object, int] = {}
    assert list(struct.shape_ids) == [numbered.setdefault(s, len(numbered)) for s in struct.shapes]


# --- link ends ----------------------------------------------------------------------------


def end_by_rule(design: Design, catalog: Catalog, device: str, port: int) -> CageEnd:
    """A link end by its device's rule: a switch's cage sections, an attached device's one port
    per cage, anything else a node of the design's shape."""
    sw = design.switch_by_id().get(device)
    if sw is not None:
        cage, slot, ppc = sw.cage_of(port)
        m = catalog.switch(sw.model)
        return CageEnd(device, cage, slot, m.form_factor, ppc, m.vendor, m.lane_gbps)
    dev = design.device_by_id().get(device)
    if dev is not None:
        return CageEnd(device, port, 0, dev.form_factor, 1, "", ())
    shape = design.shape
    nic = catalog.nics.get(shape.nic_model)
    ppc = shape.ports_per_cage
    return CageEnd(
        device,
        port // ppc,
        port % ppc,
        shape.form_factor,
        ppc,
        nic.vendor if nic else "",
        nic.lane_gbps if nic else (),
    )


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_link_ends_follow_each_devices_rule_even_off_its_ports(data: st.DataObject) -> None:
    """Ends built from the table's columns are the records each device's rule gives, also for
    ports a device does not have and devices the design does not list (a broken design.json)."""
    catalog = load_catalog()
    design = laid_out(data.draw(st.sampled_from(DESIGNS)))
    links = list(design.links)
    for _ in range(data.draw(st.integers(0, 5))):
        i = data.draw(st.integers(0, len(links) - 1))
        side = data.draw(st.sampled_from("ab"))
        change: dict[str, object] = {f"{side}_port": data.draw(st.integers(-3, 300))}
        if data.draw(st.booleans()):
            change[f"{side}_device"] = data.draw(st.sampled_from(["stranger", links[0].a_device]))
        links[i] = dataclasses.replace(links[i], **change)
    broken = dataclasses.replace(design, links=tuple(links))
    ends = link_ends(broken, catalog)
    for link in links:
        a, b = ends[link.id]
        assert a == end_by_rule(broken, catalog, link.a_device, link.a_port)
        assert b == end_by_rule(broken, catalog, link.b_device, link.b_port)
        assert a.key == (a.device, a.cage) and type(a) is CageEnd
    table = link_table(broken, catalog)
    for i, link in enumerate(links):
        a, b = ends[link.id]
        assert table.shapes[table.a.shape[i]] == (
            a.form_factor,
            a.ports_per_cage,
            a.vendor,
            a.lanes,
        )
        assert table.shapes[table.b.shape[i]] == (
            b.form_factor,
            b.ports_per_cage,
            b.vendor,
            b.lanes,
        )


# --- link table -------------------------------------------------------------------------


@pytest.mark.parametrize("name", DESIGNS)
def test_cage_keys_are_equal_exactly_when_the_cages_are(name: str) -> None:
    catalog = load_catalog()
    design = laid_out(name)
    table = link_table(design, catalog)
    ends = link_ends(design, catalog)
    keys: dict[int, tuple[str, int]] = {}
    for i, link in enumerate(design.links):
        pair = ends[link.id]
        for side, end in ((table.a, pair[0]), (table.b, pair[1])):
            assert table.devices[side.device[i]] == end.device
            assert (side.cage[i], side.slot[i], side.ports_per_cage[i]) == (
                end.cage,
                end.slot,
                end.ports_per_cage,
            )
            assert keys.setdefault(int(side.cage_key[i]), end.key) == end.key
    assert len(set(keys.values())) == len(keys)


# --- labels and colours -----------------------------------------------------------------


class _Spot(NamedTuple):
    rack: str
    u: int


class _Ports:
    def table(self, device: str) -> list[str]:
        return [f"{device}:{p}" for p in range(3)]

    def __call__(self, device: str, port: int) -> str:
        return f"{device}?{port}"


@given(st.lists(st.tuples(st.integers(0, 2), st.integers(-2, 5)), max_size=30))
def test_label_columns_read_what_each_end_renders(ends: list[tuple[int, int]]) -> None:
    devices = ("n1", "sw", "n2")
    labels = EndLabels(
        parse_label_template("{rack}-U{u:02d}/{device}/{port}"),
        {d: d.upper() for d in devices},
        {d: _Spot(f"R{i}", i + 1) for i, d in enumerate(devices)},
        _Ports(),  # type: ignore[arg-type]
    )
    dev = np.array([d for d, _ in ends], np.int64)
    port = np.array([p for _, p in ends], np.int64)
    want = [labels(devices[d], p) for d, p in ends]
    assert labels.columns(devices, dev, port) == want
    assert all(("?" in w) == (not 0 <= p < 3) for w, (_, p) in zip(want, ends, strict=True))


def colour_walk(link: Link, switches: Mapping[str, Switch], by: str) -> str:
    """TIA-598 by rail (the link's, else its a-end switch's), else by plane, one link."""
    rail = link.rail
    if rail < 0:
        sw = switches.get(link.a_device)
        rail = sw.rail if sw is not None else -1
    if by == "rail" and rail >= 0:
        return TIA_598[rail % len(TIA_598)]
    return TIA_598[link.plane % len(TIA_598)]


@pytest.mark.parametrize("by", ["rail", "plane"])
@pytest.mark.parametrize("name", DESIGNS)
def test_link_colours_are_the_walks(name: str, by: str) -> None:
    design = laid_out(name)
    switches = design.switch_by_id()
    want = [colour_walk(link, switches, by) for link in design.links]
    assert link_colours(design.links, switches, by) == want
    assert by == "plane" or len(set(want)) > 1


# --- the bill's modules and items -------------------------------------------------------


def walk_modules(design: Design, catalog: Catalog) -> list[tuple[str, str, bool, str]]:
    """Each cage's module in the order met, cables by link id: (cage, part, on switch, link)."""
    ends = link_ends(design, catalog)
    switches = design.switch_by_id()
    out: dict[tuple[str, int], tuple[str, str, bool, str]] = {}
    for cab in by_link(design):
        for end, name in zip(
            ends[cab.link_id], (cab.transceiver_a, cab.transceiver_b), strict=True
        ):
            if name and end.key not in out and name in catalog.transceivers:
                out[end.key] = (end.device, name, end.device in switches, cab.link_id)
    return list(out.values())


def walk_items(design: Design, catalog: Catalog) -> list[tuple[str, float, str, str]]:
    """Each physical item in the order met: (part, longest length, BOM kind, first link)."""
    plant = {s.link_id for s in design.segments}
    out: dict[str, list] = {}
    for cab in by_link(design):
        if cab.link_id in plant:
            continue
        part = catalog.cables[cab.media]
        held = out.setdefault(cab.physical, [part.id, 0.0, line_kind(part, False), cab.link_id])
        held[1] = max(held[1], cab.length_m)
    for s in design.segments:
        part = catalog.cables[s.part]
        held = out.setdefault(s.physical, [part.id, s.length_m, line_kind(part, True), s.link_id])
        held[1] = max(held[1], s.length_m)
    return [tuple(v) for v in out.values()]  # type: ignore[misc]


@pytest.mark.parametrize("name", DESIGNS)
def test_modules_and_items_are_the_walks(name: str) -> None:
    catalog = load_catalog()
    design = laid_out(name)
    ordered = by_link(design)
    mods = modules(design, catalog, link_table(design, catalog), ordered)
    got = [
        (mods.devices[d], mods.parts[p].id, bool(s), link)
        for d, p, s, link in zip(mods.device, mods.part, mods.on_switch, mods.link, strict=True)
    ]
    assert got == walk_modules(design, catalog)
    things = items(design, catalog, link_ends(design, catalog), ordered)
    got_items = [
        (things.parts[p].id, float(m), k, link)
        for p, m, k, link in zip(
            things.part, things.length_m, things.kind, things.link, strict=True
        )
    ]
    assert got_items == walk_items(design, catalog)


def test_the_examples_cover_every_way_cables_are_shared() -> None:
    """Twin-port cables (legs A2-B2), fibre cords and the fibre plant all occur above."""
    legs = {c.leg for name in DESIGNS for c in laid_out(name).cables}
    assert "A2-B2" in legs
    catalog = load_catalog()
    assert any(len(m) > 1 for n in DESIGNS for m in structure(laid_out(n), catalog).groups)
    assert any(laid_out(name).segments for name in DESIGNS)
    kinds = {
        load_catalog().cables[c.media].optical for name in DESIGNS for c in laid_out(name).cables
    }
    assert kinds == {True, False}
