"""Row lists decoded by msgspec are the rows the regular-expression reader builds, number for
number; a row not in the written form is not decoded, and the answer is the row check's."""

from __future__ import annotations

import dataclasses
import gc
import json
import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan import design_from_json, design_to_json
from railplan.design import io, row_columns, row_decode, row_text, validation
from railplan.pipeline.source import read_design

DESIGNS = sorted((Path(__file__).resolve().parent.parent / "designs").glob("*/design.json"))
_OPTIONAL = frozenset(io.SPARSE)


def _lists(text: str) -> list[tuple[str, int, int]]:
    """Each row list of a written design: its key, first row position and end (``\\n]``)."""
    out = []
    for match in re.finditer(r'^"([a-z]+)":\[\n\{', text, re.MULTILINE):
        start = match.end() - 1
        out.append((match.group(1), start, text.index("\n]", start)))
    return out


def test_every_row_type_is_decoded() -> None:
    for key, owner in validation._LISTS.items():
        reader = row_text.row_reader(owner, validation._field_type, _OPTIONAL)
        assert reader is not None
        assert row_decode.decoder(owner, reader) is not None, key


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_decoded_rows_are_the_rows_read_from_the_text(path: Path) -> None:
    text = path.read_text()
    lists = _lists(text)
    assert {"nodes", "links"} <= {key for key, _, _ in lists}
    for key, start, end in lists:
        owner = validation._LISTS[key]
        reader = row_text.row_reader(owner, validation._field_type, _OPTIONAL)
        assert reader is not None
        decoded = row_decode.read_objects(text, start, end, owner, reader)
        columns = row_text.read_rows(text, start, end, reader)
        assert decoded is not None and columns is not None, key
        built = row_columns.built(owner, [], columns)
        assert decoded == built, key
        assert all(type(row) is owner for row in decoded)
        for row, other in zip(decoded, built, strict=True):  # field by field, types included
            for name in (f.name for f in dataclasses.fields(owner)):
                a, b = getattr(row, name), getattr(other, name)
                assert type(a) is type(b) and a == b, (key, name)
        assert hash(decoded) == hash(built)


def test_the_column_reader_still_reads_a_type_msgspec_does_not_take(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = DESIGNS[0].read_text()
    fast = design_from_json(text)
    monkeypatch.setattr(row_decode, "decoder", lambda owner, reader: None)
    assert io.design_from_written(text) == fast
    assert design_to_json(fast) == text


#: a JSON number as ``row_text``'s float pattern takes it: digits, a fraction of up to 40
#: digits, an exponent of up to 4
_float_texts = st.builds(
    lambda sign, whole, frac, exp: sign + whole + frac + exp,
    st.sampled_from(["", "-"]),
    st.one_of(st.just("0"), st.from_regex(r"[1-9][0-9]{0,17}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,40}", fullmatch=True)),
    st.one_of(st.just(""), st.from_regex(r"[eE][-+]?[0-9]{1,4}", fullmatch=True)),
).filter(lambda t: re.fullmatch(row_text._FLOAT, t) is not None)


@settings(max_examples=1500, deadline=None)
@given(
    number=st.one_of(
        _float_texts,
        st.floats(-1e9, 1e9).map(repr),
        st.floats(allow_nan=False, allow_infinity=False).map(json.dumps),
    )
)
def test_msgspec_reads_a_float_as_python_does(number: str) -> None:
    expected = float(number)
    try:
        got = msgspec.json.decode(number, type=float)
    except msgspec.DecodeError:
        assert abs(expected) == float("inf")  # beyond a double: the bounds refuse it anyway
        return
    assert got == expected and (got != 0 or str(got) == str(expected))


@settings(max_examples=300, deadline=None)
@given(number=st.from_regex(r"-?(?:0|[1-9][0-9]{0,17})", fullmatch=True))
def test_msgspec_reads_an_integer_as_python_does(number: str) -> None:
    got = msgspec.json.decode(number, type=int)
    assert type(got) is int and got == int(number)


_LINK = (
    '{"a_device":"n0","a_port":0,"b_device":"l0","b_port":0,"id":"x","kind":"node-leaf",'
    '"plane":0,"rail":0,"rate_gbps":400}'
)


@pytest.mark.parametrize(
    "row",
    [
        _LINK.replace('"a_port":0,', '"a_port":0,"a_port":1,'),  # a duplicate key
        _LINK.replace('"plane":0,', '"plane":0,"colour":"red",'),  # an unknown key
        _LINK.replace('"rail":0,', ""),  # a field the writer always writes, left out
        _LINK.replace('"a_port":0,', '"a_port": 0,'),  # a space
        _LINK.replace('"a_device":"n0","a_port":0,', '"a_port":0,"a_device":"n0",'),  # order
        _LINK.replace('"id":"x"', '"id":"\\u0078"'),  # an escape
        _LINK.replace('"a_port":0,', '"a_port":1000000001,'),  # above the bound
        _LINK.replace('"a_port":0,', '"a_port":0.0,'),  # a float in an integer field
        _LINK.replace('"a_port":0,', '"a_port":123456789012345678901,'),  # past int64
    ],
)
def test_a_row_not_in_the_written_form_is_not_decoded(row: str) -> None:
    owner = validation._LISTS["links"]
    reader = row_text.row_reader(owner, validation._field_type, _OPTIONAL)
    assert reader is not None
    good = "[\n" + _LINK + ",\n" + _LINK + "\n]"
    assert row_decode.read_objects(good, 2, len(good) - 2, owner, reader) is not None
    text = "[\n" + _LINK + ",\n" + row + "\n]"
    assert row_decode.read_objects(text, 2, len(text) - 2, owner, reader) is None


def test_a_design_file_with_a_duplicate_key_in_a_row_reads_as_json_reads_it(
    tmp_path: Path,
) -> None:
    text = DESIGNS[0].read_text()
    first = text.index('"a_port":', text.index('"links":['))
    doubled = text[:first] + '"a_port":7,' + text[first:]  # json.loads: the last one wins
    path = tmp_path / "design.json"
    path.write_text(doubled)
    assert read_design(path) == design_from_json(doubled) == design_from_json(text)


def test_reading_leaves_the_collector_as_it_found_it() -> None:
    text = DESIGNS[0].read_text()
    assert gc.isenabled()
    design_from_json(text)
    assert gc.isenabled()
    gc.disable()
    try:
        design_from_json(text)
        assert not gc.isenabled()
    finally:
        gc.enable()
