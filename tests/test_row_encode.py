"""Rows encoded by msgspec (``design/row_encode.py``) are ``json.dumps``'s bytes, or left to it:
on every bundled design, on hostile text and numbers, and on random floats of the range where
the two are taken to agree."""

from __future__ import annotations

import dataclasses
import json
import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.design import Cable, Design, Rack
from railplan.design.io import SPARSE, _lines, _rows_text, design_to_json
from railplan.design.row_encode import encode_rows
from tests.test_link_arrays import DESIGNS, laid_out

LISTS = ("cables", "links", "placements", "racks", "segments", "panels", "devices")


def reference(items: tuple[object, ...]) -> str:
    return ",\n".join(_lines(items))


@pytest.mark.parametrize("name", DESIGNS)
def test_every_row_list_of_the_examples(name: str) -> None:
    design = laid_out(name)
    for key in LISTS:
        items = getattr(design, key)
        if not items:
            continue
        fast = encode_rows(items, type(items[0]), SPARSE)
        assert fast is not None, key  # plain ASCII rows: msgspec writes them
        assert fast == reference(items)


def test_types_with_sparse_fields_are_left_to_json() -> None:
    design = laid_out("seed001-64gpu")
    for items in (design.switches, design.nodes):
        assert encode_rows(items, type(items[0]), SPARSE) is None
        assert _rows_text(items) == reference(items)


_TEXT = st.lists(
    st.sampled_from(["a", '"', "\\", "\x00", "\x1f", "\x7f", "é", "},{", "{", "}", "/"]),
    max_size=6,
).map("".join)
_NUMBER = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1e-4, max_value=1e16, exclude_max=True),
    st.sampled_from([0.0, -0.0, 1e-5, 0.0001, 1e15, 1e16, 3.0, 12.5]),
    st.integers(min_value=0, max_value=10**6),
)


@settings(max_examples=300)
@given(st.lists(st.tuples(_TEXT, _TEXT, _NUMBER), min_size=1, max_size=5))
def test_hostile_text_and_numbers_give_json_bytes(rows: list[tuple[str, str, float]]) -> None:
    base = laid_out("seed001-64gpu").cables[0]
    items = tuple(dataclasses.replace(base, label_a=a, label_b=b, length_m=n) for a, b, n in rows)
    assert _rows_text(items) == reference(items)


@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=4))
def test_rack_coordinates_give_json_bytes(xs: list[float]) -> None:
    rack = laid_out("seed001-64gpu").racks[0]
    items = tuple(dataclasses.replace(rack, x_m=x, y_m=-x) for x in xs)
    assert _rows_text(items) == reference(items)


def test_floats_in_the_fixed_range_are_written_as_repr() -> None:
    """Where ``row_encode`` lets msgspec write floats, its digits are ``repr``'s."""
    encode = msgspec.json.Encoder().encode
    rnd = random.Random(34)
    for _ in range(100_000):
        value = rnd.choice((1, -1)) * 10 ** rnd.uniform(-4, 16)
        if 1e-4 <= abs(value) < 1e16:
            assert encode(value).decode() == float.__repr__(value) == json.dumps(value)


def test_the_whole_file_is_the_same_with_msgspec_off(monkeypatch: pytest.MonkeyPatch) -> None:
    design: Design = laid_out("plant")
    fast = design_to_json(design)
    import railplan.design.io as io_module

    monkeypatch.setattr(io_module, "encode_rows", lambda *_: None)
    assert design_to_json(design) == fast


def test_row_types_qualify_by_their_annotations() -> None:
    assert encode_rows((), Cable, SPARSE) is None  # nothing to write
    rack = Rack("r1", 0, 0, "compute", 1.5, 0.0, 42)
    assert encode_rows((rack,), Rack, SPARSE) == reference((rack,))
