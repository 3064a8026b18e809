"""The column-by-column serializer and loader agree with the row-by-row reference, bytes and errors."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from railplan import design_from_json, design_to_json
from railplan.design import io, validation
from railplan.design.types import Cable, Link, Rack, Switch
from railplan.errors import DesignFileError

DESIGNS = sorted((Path(__file__).resolve().parent.parent / "designs").glob("*/design.json"))


def _slow(text: str) -> object:
    """The loader with both shortcuts switched off (the rows read from the text, the columns
    checked whole): every row through pydantic."""
    saved, saved_text = validation._fast_doc, io.design_from_written
    validation._fast_doc = lambda data: None  # type: ignore[assignment]
    io.design_from_written = lambda text: None  # type: ignore[assignment]
    try:
        return design_from_json(text)
    finally:
        validation._fast_doc, io.design_from_written = saved, saved_text


def _outcome(text: str) -> object:
    try:
        return design_from_json(text)
    except DesignFileError as exc:
        return ("error", str(exc))


def _slow_outcome(text: str) -> object:
    try:
        return _slow(text)
    except DesignFileError as exc:
        return ("error", str(exc))


def _reference_text(design: object) -> str:
    """design_to_json with every row list written by ``json.dumps`` row by row."""
    saved = io._rows_text
    io._rows_text = lambda items: ",\n".join(io._lines(items))  # type: ignore[assignment]
    try:
        return design_to_json(design)  # type: ignore[arg-type]
    finally:
        io._rows_text = saved


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_bundled_designs_load_and_write_as_the_row_by_row_code(path: Path) -> None:
    text = path.read_text()
    design = design_from_json(text)
    assert validation._fast_doc(json.loads(text)) is not None  # the shortcut was taken
    assert design == _slow(text)
    assert design_to_json(design) == text
    assert _reference_text(design) == text


def test_sparse_fields_and_odd_values_are_written_as_json_dumps_writes_them() -> None:
    switches = (
        Switch("s1", "m", "leaf", 0, 64, 400, 1),
        Switch(
            "s2",
            "m",
            "leaf",
            1,
            64,
            400,
            2,
            up_from_port=32,
            up_speed_gbps=800,
            up_ports_per_cage=1,
        ),
        Switch("s3", "m", "spine", 0, 64, 400, 1, group='g\u00e9"\\\n', rail=3),
    )
    racks = (
        Rack("r1", 0, 0, "compute", 0.1 + 0.2, -0.0, 42),
        Rack("r2", 0, 1, "network", 1e-7, 12345678.9, 48),
        Rack("r3", 0, 2, "network", 3, math.inf, 48),  # an int and an infinity in float fields
    )
    for items in (switches, racks):
        assert io._rows_text(items) == ",\n".join(io._lines(items))


_row_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.lists(st.integers(0, 3), max_size=3),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    table=st.sampled_from(["links", "cables", "switches", "racks", "nodes", "placements"]),
    row=st.integers(0, 10_000),
    action=st.sampled_from(["set", "drop", "add"]),
    field_pick=st.integers(0, 20),
    value=_row_values,
)
def test_a_changed_row_gets_the_same_answer_both_ways(table, row, action, field_pick, value):
    """One field of one row changed, dropped or added: the shortcut and the row check agree,
    on the Design or on every word of the refusal."""
    data = _BASE_DATA()
    rows = data[table]
    target = rows[row % len(rows)]
    names = sorted(target)
    name = names[field_pick % len(names)]
    if action == "set":
        target[name] = value
    elif action == "drop":
        del target[name]
    else:
        target[f"extra_{field_pick}"] = value
    text = json.dumps(data, allow_nan=True)
    assert _outcome(text) == _slow_outcome(text)


def test_ints_where_floats_go_and_bools_where_ints_go_take_the_row_check() -> None:
    data = _BASE_DATA()
    data["cables"][0]["length_m"] = int(data["cables"][0]["length_m"])
    data["links"][0]["a_port"] = True
    text = json.dumps(data)
    assert validation._fast_doc(json.loads(text)) is None
    assert _outcome(text) == _slow_outcome(text)


def test_columns_build_the_same_objects_as_the_dataclass_init() -> None:
    from railplan.design import row_columns

    rows = [
        {
            "id": "L1",
            "kind": "node-leaf",
            "a_device": "n1",
            "a_port": 0,
            "b_device": "s1",
            "b_port": 3,
            "rate_gbps": 400,
            "plane": 0,
        },
        {
            "id": "L2",
            "kind": "node-leaf",
            "a_device": "n2",
            "a_port": 1,
            "b_device": "s1",
            "b_port": 4,
            "rate_gbps": 400,
            "plane": 1,
            "rail": 2,
        },
    ]
    assert row_columns.built(Link, rows) == tuple(Link(**r) for r in rows)
    cables = [
        {
            "id": "C1",
            "link_id": "L1",
            "media": "m",
            "transceiver_a": "",
            "transceiver_b": "",
            "length_m": 2.5,
            "label_a": "a",
            "label_b": "b",
            "colour": "blue",
        }
    ]
    assert row_columns.built(Cable, cables) == (Cable(**cables[0]),)


def _base_text() -> str:
    return next(p for p in DESIGNS if p.parent.name == "layout-64gpu-tray-graph").read_text()


_BASE = json.loads(_base_text())


def _BASE_DATA() -> dict:  # a fresh copy of the base design's parsed JSON
    return copy.deepcopy(_BASE)
