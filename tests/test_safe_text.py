"""The one safe text path: no CSV or spreadsheet cell starts a formula, no control byte or Rich
markup reaches the terminal, no tag or link reaches a Markdown report (hypothesis over any text)."""

from __future__ import annotations

import csv
import io
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from railplan.render import cables_csv
from railplan.safe_text import FORMULA_CHARS, cell, markdown, markup, to_csv, visible

#: what a spreadsheet may skip before it reads a formula
_SKIPPED = re.compile(
    r"[\s\u00a0\u180e\u200b-\u200f\u2028-\u202f\u205f-\u206f\ufeff\x00-\x1f\x7f]*"
)
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
#: text built to hit the rules: formula starts, white space of every kind, CR/LF, markup
HOSTILE = st.lists(
    st.sampled_from(
        [
            *"=+-@\uff1d\uff0b\uff0d\uff20 \t\r\n\u00a0\u200b\u3000\ufeff\x1b\x07\x9b[]/()<>\"',|`*_!#:",
            *("a", "1", "link=https://evil.example/", "script", "javascript:", "cmd"),
        ]
    ),
    max_size=30,
).map("".join) | st.text(max_size=40)


def starts_formula(text: str) -> bool:
    rest = text[_SKIPPED.match(text).end() :]  # type: ignore[union-attr]
    return bool(rest) and rest[0] in FORMULA_CHARS and not _NUMBER.match(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(HOSTILE, min_size=1, max_size=4), min_size=1, max_size=4))
def test_no_cell_starts_a_formula_and_the_csv_reads_back(rows: list[list[str]]) -> None:
    width = max(len(r) for r in rows)
    rows = [r + [""] * (width - len(r)) for r in rows]
    text = to_csv([f"h{i}" for i in range(width)], rows)
    back = list(csv.reader(io.StringIO(text, newline="")))
    assert back[1:] == [[str(cell(v)) for v in r] for r in rows]  # CR/LF quoted: cells intact
    for row in back[1:]:
        for value in row:
            assert not starts_formula(value) or value.startswith("'"), value
            assert not value.startswith(("\t", "\r", "\n")), value
    # a CR never stands outside a quoted cell, where a reader could take it as a row's end
    # and what follows as a new row (a formula); inside quotes it is the cell's own text
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted  # a doubled quote toggles twice: still inside
        elif ch == "\r":
            assert quoted, repr(text)


def test_the_issue_cells_are_neutralised() -> None:
    for bad in ("\r=1+1", " =x", "\u00a0=x", "\uff1dcmd", "\n@SUM(1)", "\u200b+1", "\t=1"):
        assert str(cell(bad)).startswith("'"), bad
    assert cell("-5") == "-5" and cell("3.5") == "3.5" and cell(7) == 7
    assert cables_csv.neutralise is cell and cables_csv.to_csv is to_csv  # #27 imports these
    assert to_csv(["a"], [["x\ry"]]) == 'a\n"x\ry"\n'


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_no_control_byte_or_markup_reaches_the_terminal(text: str) -> None:
    shown = visible(text)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", shown)
    assert _printed(markup(text)) == shown  # never a MarkupError, never a link or style
    assert "\x1b" not in _printed(markup(text))


def _printed(rich_markup: str) -> str:
    """What the CLI's tables print for a cell (railplan/cli/show.py: emoji codes off)."""
    console = Console(file=io.StringIO(), width=400, color_system=None, soft_wrap=True, emoji=False)
    console.print(rich_markup, end="")
    return console.file.getvalue()  # type: ignore[attr-defined]


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet="\\[]/ab#@:", max_size=12))
def test_backslashes_and_brackets_print_as_written(text: str) -> None:
    # Rich reads a tag after an odd run of backslashes as escaped, each pair as one backslash,
    # and "\\[" as "[" in plain text: every mix of them prints as written ('\\[' did not)
    assert _printed(markup(text)) == text


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_no_tag_or_link_reaches_a_report(text: str) -> None:
    out = markdown(text)
    assert "<" not in out and ">" not in out and "\n" not in out and "\r" not in out
    assert not re.search(r"(?<!\\)[\[\]()|`*_]", out)  # every Markdown mark escaped
    assert not re.search(r"[\x00-\x1f\x7f-\x9f]", out)
