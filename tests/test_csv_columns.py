"""The column-by-column CSV writer gives the text of the cell-by-cell one, on any cells."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from railplan import safe_text


def _reference(header, rows) -> str:
    """``to_csv`` as it was: every cell through ``_csv_field``, row by row."""
    buf = io.StringIO()
    for row in (header, *rows):
        line = ",".join(safe_text._csv_field(v) for v in row)
        buf.write(line if line or len(row) != 1 else '""')
        buf.write("\n")
    return buf.getvalue()


_cells = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        [
            "",
            "a",
            "A1",
            "0",
            "-1",
            "+x",
            "=1+1",
            " =x",
            "a,b",
            'q"',
            "x\ny",
            "\rz",
            "\uff1dx",
            "\u200b=x",
            "1e5",
            "P2/2",
            "é",
            "R0101-U26-N4-nic0",
        ]
    ),
    st.text(max_size=6),
)


@settings(max_examples=300, deadline=None)
@given(width=st.integers(1, 4), data=st.data())
def test_columns_write_what_cells_write(width, data):
    header = data.draw(st.lists(st.text(max_size=4), min_size=width, max_size=width))
    column_kind = st.sampled_from(["mixed", "names", "ints"])
    kinds = data.draw(st.lists(column_kind, min_size=width, max_size=width))

    def cell_of(kind):
        if kind == "names":
            return st.from_regex(r"[A-Za-z0-9][A-Za-z0-9/_.-]{0,6}", fullmatch=True)
        return st.integers(-3, 3) if kind == "ints" else _cells

    row = st.tuples(*(cell_of(k) for k in kinds))
    rows = data.draw(st.lists(row, max_size=8))
    assert safe_text.to_csv(header, rows) == _reference(header, rows)


def test_a_ragged_table_is_written_row_by_row():
    rows = [("a", 1), ("b",), ("=c", 2, 3)]
    assert safe_text.to_csv(("x", "y"), rows) == _reference(("x", "y"), rows)
