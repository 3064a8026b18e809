"""The cable schedule made column by column: the same bytes as the row-by-row schedule it
replaced (kept here as the oracle), on every bundled design, the fibre plant's pieces, any
cable order, and ties the sort must break by cable id."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan import design_from_json
from railplan.design import Design, Placement, PlantSegment
from railplan.render import cables_csv
from railplan.render.cables_csv import (
    CableEnd,
    ScheduleRow,
    _panel_end,
    _port_namer,
    _schedule_order,
    schedule,
)
from railplan.safe_text import column_pieces, to_csv

DESIGNS = sorted((Path(__file__).resolve().parent.parent / "designs").glob("*/design.json"))


def oracle_rows(design: Design, ordered: list[ScheduleRow]) -> Iterator[tuple[object, ...]]:
    """The schedule's CSV rows as the row-by-row renderer made them (one per cable leg)."""
    pieces: dict[str, list[PlantSegment]] = {}
    for seg in design.segments:
        pieces.setdefault(seg.link_id, []).append(seg)
    where: dict[str, Placement] = {p.device: p for p in design.placements}
    for row in ordered:
        c, lk = row.cable, row.link
        rail = lk.rail if lk.rail >= 0 else ""
        tail = (lk.plane, rail)
        chain = sorted(pieces.get(lk.id, []), key=lambda s: s.seq)
        if not chain:
            yield (c.id, row.a.rack, row.a.u, row.a.device, row.a.port, row.b.rack, row.b.u,
                   row.b.device, row.b.port, c.media, c.transceiver_a, c.transceiver_b,
                   f"{c.length_m:g}", *tail, c.label_a, c.label_b, c.colour, lk.id, lk.kind,
                   c.physical, c.leg, "")  # fmt: skip
            continue
        for seg in chain:
            first, last = seg.seq == 1, seg.seq == len(chain)
            a: CableEnd = row.a if first else _panel_end(seg.a_device, seg.a_port, where)
            b: CableEnd = row.b if last else _panel_end(seg.b_device, seg.b_port, where)
            yield (c.id, a.rack, a.u, a.device, a.port, b.rack, b.u, b.device, b.port, seg.part,
                   c.transceiver_a if first else "", c.transceiver_b if last else "",
                   f"{seg.length_m:g}", *tail, c.label_a if first else f"{a.device} {a.port}",
                   c.label_b if last else f"{b.device} {b.port}", c.colour, lk.id, lk.kind,
                   seg.physical, seg.leg, f"{seg.seq}/{len(chain)}")  # fmt: skip


def oracle_schedule(design: Design) -> list[ScheduleRow]:
    """The schedule as the row-by-row code ordered it: a sort of key tuples (rack row and
    position, top U first, device, port, cable id)."""
    links = {lk.id: lk for lk in design.links}
    where = {p.device: p for p in design.placements}
    order = {r.id: (r.row, r.position) for r in design.racks}
    name = _port_namer(design)
    keyed = []
    for cable in design.cables:
        link = links[cable.link_id]
        pa, pb = where[link.a_device], where[link.b_device]
        a = CableEnd(pa.rack, pa.u, link.a_device, name(link.a_device, link.a_port))
        b = CableEnd(pb.rack, pb.u, link.b_device, name(link.b_device, link.b_port))
        key = (order.get(pa.rack, (0, 0)), -pa.u, link.a_device, link.a_port, cable.id)
        keyed.append((key, ScheduleRow(cable, link, a, b)))
    keyed.sort(key=lambda kv: kv[0])
    return [row for _, row in keyed]


def oracle(design: Design) -> str:
    ordered = oracle_schedule(design)
    assert schedule(design) == ordered  # the rows the other exports read, in the same order
    return to_csv(cables_csv.COLUMNS, list(oracle_rows(design, ordered)))


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_every_bundled_design_schedules_as_before(path: Path) -> None:
    design = design_from_json(path.read_text())
    if design.cables:
        assert cables_csv.render(design) == oracle(design)


def test_the_fibre_plant_pieces_and_a_shuffled_cable_list_schedule_as_before() -> None:
    from tests.test_plant import planted

    design = planted().design
    assert design.segments  # links through the plant: one row per piece
    assert cables_csv.render(design) == oracle(design)
    cables = list(design.cables)
    random.Random(7).shuffle(cables)
    shuffled = dataclasses.replace(design, cables=tuple(cables))
    # the order is the rack's, not the list's; the port names are the same whoever is met first
    assert cables_csv.render(shuffled) == oracle(shuffled) == oracle(design)


def test_cables_on_one_port_go_in_cable_id_order() -> None:
    design = design_from_json(DESIGNS[0].read_text())
    first = design.cables[0]
    twins = [dataclasses.replace(first, id=f"{first.id}-{tag}") for tag in ("z", "b", "m")]
    tied = dataclasses.replace(design, cables=(*twins, *design.cables))
    text = cables_csv.render(tied)
    assert text == oracle(tied)
    ids = [line.split(",", 1)[0] for line in text.splitlines()[1:]]
    assert [i for i in ids if i.startswith(first.id)] == sorted(t.id for t in [first, *twins])


_keys = st.lists(
    st.tuples(
        st.sampled_from(["r1", "r2", "r3", "nowhere"]),
        st.integers(1, 4),
        st.sampled_from(["sw-b", "sw-a", "node10", "node9"]),
        st.integers(0, 3),
        st.sampled_from(["C1", "C10", "C2", "A", "a"]),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(keys=_keys)
def test_the_order_is_the_key_tuples_sort(keys: list[tuple[str, int, str, int, str]]) -> None:
    order = {"r1": (2, 1), "r2": (1, 5), "r3": (1, 2)}  # a rack not listed sorts as (0, 0)
    racks, us, devices, ports, ids = ([key[i] for key in keys] for i in range(5))
    tuples = [
        (order.get(r, (0, 0)), -u, d, p, i)
        for r, u, d, p, i in zip(racks, us, devices, ports, ids, strict=True)
    ]
    expected = sorted(range(len(keys)), key=tuples.__getitem__)
    assert _schedule_order(order, racks, us, devices, ports, ids) == expected


_cells = st.one_of(
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.text(alphabet='ab=+-@,"\n\r\t é0', max_size=5),
)


@settings(max_examples=200, deadline=None)
@given(
    width=st.integers(2, 4),
    height=st.integers(0, 12),
    cells=st.lists(_cells, min_size=48, max_size=48),
    block=st.integers(1, 5),
)
def test_column_pieces_join_to_to_csv(
    width: int, height: int, cells: list[object], block: int
) -> None:
    header = [f"h{i}" for i in range(width)]
    rows = [[cells[(r * width + c) % len(cells)] for c in range(width)] for r in range(height)]
    columns = [[row[c] for row in rows] for c in range(width)]
    pieces = list(column_pieces(header, columns, block))
    assert "".join(pieces) == to_csv(header, rows)
    assert len(pieces) == 1 + -(-height // block)


def test_column_pieces_refuses_ragged_or_narrow_columns() -> None:
    with pytest.raises(ValueError, match="different lengths"):
        list(column_pieces(["a", "b"], [[1, 2], [1]]))
    with pytest.raises(ValueError, match="two or more"):
        list(column_pieces(["a"], [[1]]))
