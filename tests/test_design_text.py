"""Row lists read straight from a design.json's text agree with parsing it and the row check:
the same Design, byte for byte when written again, or the same refusal word for word."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from railplan import design_from_json, design_to_json
from railplan.design import io, row_text, validation
from railplan.design.types import Cable, Device, Link, Node, Rack, Switch
from railplan.errors import DesignFileError
from railplan.pipeline.source import read_design

DESIGNS = sorted((Path(__file__).resolve().parent.parent / "designs").glob("*/design.json"))
_OPTIONAL = frozenset(io.SPARSE)


def _slow(text: str) -> object:
    """``json.loads`` and the row-by-row check: no shortcut at all."""
    saved = validation._fast_doc
    validation._fast_doc = lambda data: None  # type: ignore[assignment]
    try:
        return io.design_from_dict(json.loads(text))
    finally:
        validation._fast_doc = saved


def _outcome(load: typing.Callable[[str], object], text: str) -> object:
    try:
        design = load(text)
    except DesignFileError as exc:
        return ("error", str(exc))
    except json.JSONDecodeError as exc:  # not JSON: design_from_json lets json's error through
        return ("not json", str(exc))
    return ("design", design, design_to_json(design))  # type: ignore[arg-type]


@pytest.mark.parametrize("path", DESIGNS, ids=lambda p: p.parent.name)
def test_bundled_designs_are_read_from_their_text(path: Path) -> None:
    text = path.read_text()
    design = io.design_from_written(text)
    assert design is not None  # every list of every bundled design was read from the text
    assert design == _slow(text)
    assert design_to_json(design) == text
    assert read_design(path) == design


def test_every_row_type_has_a_text_reader() -> None:
    for key, owner in validation._LISTS.items():
        assert row_text.row_reader(owner, validation._field_type, _OPTIONAL) is not None, key


# -- each field's pattern against the pydantic type it was derived from -------------------

_FIELDS = [
    (owner, f.name) for owner in validation._LISTS.values() for f in dataclasses.fields(owner)
]
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.integers(-3, 70_000),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-200_000, 200_000),
    st.text(max_size=8),
    st.text(alphabet='abcXYZ019._-/ "\\\x00\x1f\x7f\u00e9\u2028', max_size=90),
    st.sampled_from(["node-leaf", "leaf", "spine", "compute", "", "a" * 80, "a" * 81]),
    st.text(alphabet="ab", min_size=995, max_size=1005),
)
#: a JSON token: a value as json.dumps writes it (escapes or not), or a number as typed
_tokens = st.one_of(
    st.builds(lambda v, a: json.dumps(v, ensure_ascii=a), _values, st.booleans()),
    st.sampled_from(["1e400", "-0", "-0.0", "1E5", "01", "1.", ".5", "1e+2", "2.50", "-1e-7"]),
)


@settings(max_examples=800, deadline=None)
@given(field=st.sampled_from(_FIELDS), token=_tokens)
def test_a_field_pattern_takes_only_what_the_strict_check_takes_unchanged(
    field: tuple[type, str], token: str
) -> None:
    owner, name = field
    hint = typing.get_type_hints(owner)[name]
    kind = validation._field_type(owner, name, hint)
    rule = row_text.field_rule(kind)
    assert rule is not None
    match = re.fullmatch(rule.pattern, token)
    if match is None:
        return  # not read here: the file goes to json.loads and the row check
    fast = rule.convert(match.group(1)) if rule.convert else match.group(1)
    if rule.low is not None and not rule.low <= fast <= rule.high:
        return  # out of bounds: not read here either
    parsed = json.loads(token)
    assert type(fast) is type(parsed) and fast == parsed, token
    TypeAdapter(kind).validate_python(parsed, strict=True)  # the row check takes it
    assert hint is not float or type(parsed) is float


def test_what_the_writer_writes_for_each_kind_of_field_is_read_here() -> None:
    samples = {str: "p0-leaf-su01-r0", int: 1, float: 2.5, bool: True}
    for owner, name in _FIELDS:
        hint = typing.get_type_hints(owner)[name]
        rule = row_text.field_rule(validation._field_type(owner, name, hint))
        assert rule is not None
        kind = validation._field_type(owner, name, hint)
        literal = typing.get_origin(kind) is typing.Literal
        value = typing.get_args(kind)[0] if literal else samples[hint]
        if (owner, name) == (Rack, "height_u"):
            value = 42
        if rule.low is not None and not rule.low <= value <= rule.high:
            value = rule.low
        assert re.fullmatch(rule.pattern, json.dumps(value)), (owner.__name__, name)


# -- whole files changed as text: the same outcome as parsing and the row check -------------


def _base_text() -> str:
    return next(p for p in DESIGNS if p.parent.name == "layout-64gpu-tray-graph").read_text()


_BASE = _base_text()
_LINES = _BASE.split("\n")
_ROW_LINES = [i for i, line in enumerate(_LINES) if line.startswith("{") and line != "{"]
_TOKEN = re.compile(r'"[a-z_]+":(?:"[^"]*"|[^,}]+)')
_pieces = st.one_of(
    st.sampled_from(
        [
            '"x"',
            "1",
            "-1",
            "1.5",
            "1e3",
            "true",
            "null",
            "[]",
            "{}",
            '"a\\u0062"',
            '"\\n"',
            '"é"',
            "NaN",
            "Infinity",
            "1" * 50,
            " ",
            "",
            ",",
            "\n",
            '"spare":true',
            '"rail":2',
            '"id":"dup"',
        ]
    ),
    st.text(alphabet='{}[],:" \n\\\t0123456789abcefilnrstu-.', max_size=6),
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    line=st.sampled_from(_ROW_LINES),
    token=st.integers(0, 20),
    action=st.sampled_from(["replace-value", "drop", "insert", "swap", "line", "raw"]),
    piece=_pieces,
    at=st.integers(0, 400),
)
def test_a_row_changed_as_text_gets_the_same_answer_as_parsing_it(
    line: int, token: int, action: str, piece: str, at: int
) -> None:
    lines = list(_LINES)
    row = lines[line]
    members = list(_TOKEN.finditer(row))
    member = members[token % len(members)]
    if action == "replace-value":
        key = member.group(0).split(":", 1)[0]
        row = row[: member.start()] + key + ":" + piece + row[member.end() :]
    elif action == "drop":
        cut = row[: member.start()] + row[member.end() :]
        row = cut.replace(",,", ",").replace("{,", "{").replace(",}", "}")
    elif action == "insert":
        row = row[: member.end()] + "," + piece + row[member.end() :]
    elif action == "swap":
        other = members[(token + 1) % len(members)]
        first, second = sorted((member, other), key=lambda m: m.start())
        row = (
            row[: first.start()]
            + second.group(0)
            + row[first.end() : second.start()]
            + first.group(0)
            + row[second.end() :]
        )
    elif action == "line":
        lines.insert(line + 1, piece)
    else:
        row = row[: at % (len(row) + 1)] + piece + row[at % (len(row) + 1) :]
    lines[line] = row
    text = "\n".join(lines)
    assert _outcome(design_from_json, text) == _outcome(_slow, text)


@pytest.mark.parametrize(
    "change",
    [
        ('"format":1,', '"format":1,\n"format":1,'),  # a duplicate key
        ('"format":1,', '"format" : 1 ,'),  # spaces: still one object
        ('"format":1,', '"format":2,'),
        ('"planes":1,', '"planes":1e400,'),
        ('"planes":1,', '"planes":NaN,'),
        ("\n}\n", "\n}\n}\n"),
        ("\n}\n", "\n}\n   \t\n"),
        ("\n]", "\n,]"),
        ("\n]", ",\n]"),
        ('"links":[\n', '"links":[\n\n'),
        ('"links":[\n', '"links":\n[\n'),
        ('"links":[\n', '"links":[\n{},\n'),
        ('"links":[\n', '"links":[\n{"a_device":"n"},\n'),
        ('"racks":[\n', '"links":[],\n"racks":[\n'),  # a second links list
    ],
)
def test_the_document_around_the_rows_is_read_as_json_reads_it(change: tuple[str, str]) -> None:
    old, new = change
    assert old in _BASE
    text = _BASE.replace(old, new, 1)
    assert _outcome(design_from_json, text) == _outcome(_slow, text)


def test_rows_beyond_the_largest_design_and_bad_pairs_are_refused_as_before() -> None:
    data = json.loads(_BASE)
    switch = next(i for i, s in enumerate(data["switches"]) if "up_from_port" not in s)
    line = json.dumps(data["switches"][switch], sort_keys=True, separators=(",", ":"))
    bad = line[:-1] + ',"up_from_port":8}'
    bad = json.dumps(
        dict(json.loads(bad)), sort_keys=True, separators=(",", ":")
    )  # keys in the written order: this list is read from the text
    text = _BASE.replace(line, bad, 1)
    assert text != _BASE
    outcome = _outcome(design_from_json, text)
    assert outcome == _outcome(_slow, text)
    assert outcome[0] == "error" and "up_from_port: 8 needs up_ports_per_cage" in outcome[1]


def test_sparse_fields_left_out_take_their_defaults_and_given_ones_are_read() -> None:
    reader = row_text.row_reader(Node, validation._field_type, _OPTIONAL)
    assert reader is not None
    text = (
        '{"id":"n1","index":0,"pod":0,"rack":0,"su":0},\n'
        '{"id":"n2","index":1,"pod":0,"rack":0,"spare":true,"su":0},\n'
        '{"id":"n3","index":2,"pod":0,"rack":0,"spare":false,"su":0}'
    )
    columns = row_text.read_rows(text, 0, len(text), reader)
    assert columns is not None
    assert list(columns["spare"]) == [False, True, False]
    assert list(columns["id"]) == ["n1", "n2", "n3"]
    switch = row_text.row_reader(Switch, validation._field_type, _OPTIONAL)
    assert switch is not None and row_text.read_rows(text, 0, len(text), switch) is None


def test_bounds_come_from_the_row_check_types() -> None:
    rules = {
        (owner, name): row_text.field_rule(
            validation._field_type(owner, name, typing.get_type_hints(owner)[name])
        )
        for owner, name in [
            (Link, "a_port"),
            (Rack, "height_u"),
            (Cable, "length_m"),
            (Device, "ports"),
        ]
    }
    assert (rules[(Link, "a_port")].low, rules[(Link, "a_port")].high) == (0, 4095)
    assert (rules[(Rack, "height_u")].low, rules[(Rack, "height_u")].high) == (8, 60)
    assert rules[(Cable, "length_m")].high == 100_000.0
    assert rules[(Device, "ports")].low == 1


@pytest.mark.parametrize(
    "middle", ["", "x", "{}", '{"id":"n9"}', " " + '{"id":"n2","index":1,"pod":0,"rack":0,"su":0}']
)
def test_a_line_that_is_not_a_row_is_not_read_here(middle: str) -> None:
    reader = row_text.row_reader(Node, validation._field_type, _OPTIONAL)
    assert reader is not None
    row = '{"id":"n1","index":0,"pod":0,"rack":0,"su":0}'
    text = f"{row},\n{middle},\n{row}"
    assert row_text.read_rows(text, 0, len(text), reader) is None
    whole = f"{row},\n{row}"
    assert row_text.read_rows(whole, 0, len(whole), reader) is not None
