"""The cabling's passes over link columns (technician order, colours, end labels, cable and
physical ids, link ends) give what the per-link code they replaced gives: kept here as oracles."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import repeat
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.catalog import load_catalog
from railplan.design import Design, Link
from railplan.design.ends import CageEnd, _link_ends, _link_protocols
from railplan.design.link_table import EndArrays, link_columns, link_table
from railplan.physical.cabling import _numbering, numbered, technician_order, technician_rows
from railplan.physical.labels import (
    EndLabels,
    colours_at,
    link_colours,
)
from railplan.physical.physical_ids import direct_ids
from railplan.spec.labels import parse_label_template
from tests.test_link_arrays import CHOICES, DESIGNS, _Link, laid_out, table_of

DEVICES = ("node1", "node10", "node2", "sw-a", "sw-b", "Sw-a")


def sorted_walk(links: tuple[Link, ...], where: Mapping[str, Any], floor: Any) -> list[Link]:
    """The sort ``technician_order`` replaced: one Python key per link."""
    rack = floor.rack_by_id
    spot = {}
    for dev, p in where.items():
        r = rack[p.rack]
        spot[dev] = (r.row, r.position, -p.u)
    return sorted(links, key=lambda lk: (spot[lk.a_device], lk.a_device, lk.a_port))


LINK = st.tuples(
    st.sampled_from(DEVICES),
    st.integers(-2, 70),
    st.sampled_from(DEVICES),
    st.integers(0, 70),
    st.integers(-1, 3),  # plane
    st.integers(-2, 13),  # rail
)


def links_of(rows: list[tuple[str, int, str, int, int, int]], ids: list[str]) -> tuple[Link, ...]:
    return tuple(
        Link(i, "x", a, ap, b, bp, 400, plane, rail)
        for i, (a, ap, b, bp, plane, rail) in zip(ids, rows, strict=True)
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(LINK, max_size=40),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(1, 3)), min_size=6),
)
def test_technician_order_is_the_sort_by_key(rows: list[Any], spots: list[Any]) -> None:
    """Devices share racks and U (so names and ports decide), ports repeat and run negative,
    ids repeat: the order is the stable sort by (spot, device, port) all the same."""
    links = links_of(rows, [f"L{i % 7}" for i in range(len(rows))])
    racks = {f"R{r}{p}": SimpleNamespace(row=r, position=p) for r in range(3) for p in range(3)}
    where = {
        d: SimpleNamespace(rack=f"R{r}{p}", u=u)
        for d, (r, p, u) in zip(DEVICES, spots[:6], strict=True)
    }
    floor = SimpleNamespace(rack_by_id=racks)
    design = SimpleNamespace(links=links)
    want = sorted_walk(links, where, floor)
    got = technician_order(design, where, floor)  # type: ignore[arg-type]
    assert [id(x) for x in got] == [id(x) for x in want]
    rows_got = technician_rows(design, where, floor)  # type: ignore[arg-type]
    assert [links[i] for i in rows_got.tolist()] == got


def test_technician_order_fails_on_the_same_device_without_a_spot() -> None:
    links = links_of([("sw-a", 1, "node1", 0, 0, 0), ("node2", 0, "node10", 0, 0, 0)], ["L1", "L2"])
    floor = SimpleNamespace(rack_by_id={"R": SimpleNamespace(row=0, position=0)})
    where = {"sw-a": SimpleNamespace(rack="R", u=1)}  # node2 (an a end) has none; node1 neither
    with pytest.raises(KeyError) as want:
        sorted_walk(links, where, floor)
    with pytest.raises(KeyError) as got:
        technician_order(SimpleNamespace(links=links), where, floor)  # type: ignore[arg-type]
    assert got.value.args == want.value.args == ("node2",)


@settings(max_examples=100, deadline=None)
@given(st.lists(LINK, min_size=1, max_size=40), st.randoms(use_true_random=False))
def test_colours_at_rows_are_the_colours_of_those_links(rows: list[Any], rnd: Any) -> None:
    links = links_of(rows, [f"L{i}" for i in range(len(rows))])
    switches = {"sw-a": SimpleNamespace(rail=2), "sw-b": SimpleNamespace(rail=-1)}
    at = list(range(len(links)))
    rnd.shuffle(at)
    for by in ("rail", "plane"):
        want = link_colours([links[i] for i in at], switches, by)  # type: ignore[arg-type]
        got = colours_at(link_columns(links), np.array(at, np.int64), switches, by)  # type: ignore[arg-type]
        assert got == want


def test_link_columns_read_each_link() -> None:
    links = links_of([("sw-a", 3, "node1", 0, 1, 2), ("node2", 0, "sw-a", 5, 0, -1)], ["L1", "L2"])
    c = link_columns(links)
    assert c.ids == ("L1", "L2") and c.id_array.tolist() == ["L1", "L2"]
    assert c.devices == ("sw-a", "node2", "node1")  # a ends first, each once
    assert c.a_device.tolist() == [0, 1] and c.b_device.tolist() == [2, 0]
    assert c.a_port.tolist() == [3, 0] and c.b_port.tolist() == [0, 5]
    assert c.plane.tolist() == [1, 0] and c.rail.tolist() == [2, -1]
    assert link_columns(links) is c  # remembered by the tuple
    assert link_columns(tuple(links)) is c


class _Ports:
    def table(self, device: str) -> list[str]:  # two layouts: the switches' and the nodes'
        return [f"P{p}" for p in range(4)] if device.startswith("s") else ["nic0", "nic1"]

    def __call__(self, device: str, port: int) -> str:
        return f"{device}?{port}"


TEMPLATES = (
    "{rack}-U{u:02d}-{device}-{port}",
    "{port}",
    "{rack}/{device}/{port:>6}/{u}",
    "{device}{port:s}x{u:03d}",
    "{port}:{port}",
    "{rack}-{device}",
)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(TEMPLATES),
    st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 5)), max_size=30),
)
def test_label_columns_are_each_ends_label(text: str, ends: list[tuple[int, int]]) -> None:
    devices = ("n1", "sw1", "n2", "sw2")
    labels = EndLabels(
        parse_label_template(text),
        {d: d.upper() for d in devices},
        {d: SimpleNamespace(rack=f"R{i}", u=i + 1) for i, d in enumerate(devices)},
        _Ports(),  # type: ignore[arg-type]
    )
    dev = np.array([d for d, _ in ends], np.int64)
    port = np.array([p for _, p in ends], np.int64)
    got = labels.columns(devices, dev, port)
    assert got == labels.columns(devices, dev, port)  # again, from what the first remembered
    fresh = EndLabels(labels._template, labels._names, labels._where, labels._port_of)
    assert got == [fresh(devices[d], p) for d, p in ends]


@pytest.mark.parametrize("count", [0, 1, 9, 999, 1000, 1001, 99_999, 100_000, 123_457])
def test_numbered_is_the_format(count: int) -> None:
    assert numbered("C", count) == [f"C{i:05d}" for i in range(1, count + 1)]


@pytest.mark.parametrize("limit", [1, 2, 1000, 1001, 2500])
def test_numbering_draws_the_formats_below_its_limit(limit: int) -> None:
    draw = _numbering(limit)
    assert [draw() for _ in range(limit - 1)] == [f"P{i:05d}" for i in range(1, limit)]
    with pytest.raises(StopIteration):
        draw()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.tuples(
                st.integers(0, 3), st.integers(-1, 3), st.integers(0, 3), st.sampled_from([1, 2, 4])
            ),
            st.tuples(
                st.integers(0, 3), st.integers(-1, 3), st.integers(0, 3), st.sampled_from([1, 2, 4])
            ),
            st.integers(0, len(CHOICES) - 1),
        ),
        min_size=1,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_direct_ids_given_rows_and_choices_are_the_same(rows: list[Any], rnd: Any) -> None:
    catalog = load_catalog()
    ids = [f"L{i}" for i in range(len(rows))]
    rnd.shuffle(ids)
    table, _ = table_of(ids, [(a, b) for a, b, _ in rows])
    choices = {link_id: CHOICES[c] for link_id, (_, _, c) in zip(ids, rows, strict=True)}
    order: list[Any] = [_Link(i) for i in ids]
    rnd.shuffle(order)

    def fresh() -> Callable[[], str]:
        counter = iter(range(1, 10_000))
        return lambda: f"P{next(counter):05d}"

    want = direct_ids(catalog, order, table, choices, fresh())
    at = np.array([table.row[x.id] for x in order], np.int64)
    chosen = [choices[x.id] for x in order]
    got = direct_ids(catalog, order, table, choices, fresh(), rows=at, chosen=chosen)
    assert got == want


def records_walk(design: Design) -> dict[str, tuple[CageEnd, CageEnd]]:
    """The records ``_link_ends`` built before it read names from object arrays."""
    table = link_table(design, load_catalog())
    fields = [[s[i] for s in table.shapes] for i in (0, 2, 3)]

    def records(side: EndArrays) -> list[CageEnd]:
        device = list(map(table.devices.__getitem__, side.device.tolist()))
        cage = side.cage.tolist()
        ff, vendor, lanes = (list(map(f.__getitem__, side.shape.tolist())) for f in fields)
        rows = zip(
            device,
            cage,
            side.slot.tolist(),
            ff,
            side.ports_per_cage.tolist(),
            vendor,
            lanes,
            zip(device, cage, strict=True),
            strict=True,
        )
        return list(map(tuple.__new__, repeat(CageEnd), rows))

    return dict(zip(table.ids, zip(records(table.a), records(table.b), strict=True), strict=True))


@pytest.mark.parametrize("name", DESIGNS)
def test_link_ends_are_the_records_of_the_table(name: str) -> None:
    design = laid_out(name)
    got = _link_ends(design, load_catalog())
    want = records_walk(design)
    assert got == want
    assert list(got) == list(want)
    pairs = zip(got.values(), want.values(), strict=True)
    assert all(
        type(e) is CageEnd and tuple(e) == tuple(w)
        for g, h in pairs
        for e, w in zip(g, h, strict=True)
    )


@pytest.mark.parametrize("name", DESIGNS)
def test_link_protocols_are_the_walk(name: str) -> None:
    """Each link's protocol: its b end's switch model's, else its a end's, else none."""
    design, catalog = laid_out(name), load_catalog()
    switches = design.switch_by_id()

    def walk(link: Link) -> str:
        for device in (link.b_device, link.a_device):
            sw = switches.get(device)
            if sw is not None:
                return catalog.switch(sw.model).protocol
        return ""

    got = _link_protocols(design, catalog)
    assert list(got.items()) == [(lk.id, walk(lk)) for lk in design.links]
