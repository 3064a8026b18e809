"""The one safe path for outside text into a spreadsheet cell, a terminal line or a report.

Names from captures (LLDP system names, ``ibnetdiscover`` node descriptions, result file
names), label templates, site names and catalog vendors are other people's text. Each
destination has one function here, and every writer uses it:

- ``cell``: a CSV or spreadsheet cell. A text cell that a spreadsheet would run as a formula
  (``=``, ``+``, ``-``, ``@`` or their fullwidth forms ``＝ ＋ － ＠``, after any prefix of
  spaces, tabs, line breaks, no-break or zero-width spaces) gets a leading ``'`` (OWASP, "CSV
  Injection"); plain numbers pass. ``to_csv`` quotes every cell holding a comma, a quote, a
  CR or an LF (Python's csv module leaves a lone CR unquoted when lines end in LF).
- ``visible``: a terminal line. Control characters (C0, DEL, C1, the bidirectional overrides
  and isolates) are shown as ``\\x1b``-style escapes, so no ESC or OSC sequence reaches the
  terminal; ``markup`` does that and escapes Rich markup (``[link=...]``, ``[/x]``).
- ``markdown``: a Markdown/HTML report. HTML's special characters become entities and
  Markdown's punctuation is backslash-escaped, so no tag, link or ``javascript:`` URL is made
  from a name.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Sequence

#: a cell starting with one of these (after the prefix below) is a formula to Excel,
#: LibreOffice and Google Sheets; the fullwidth forms are folded to them by some of them
FORMULA_CHARS = "=+-@\uff1d\uff0b\uff0d\uff20"
#: kept for callers of the first neutraliser (``render.cables_csv.FORMULA_STARTS``)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
#: what a spreadsheet skips before it looks for a formula: white space of any kind,
#: zero-width characters and control characters
_PREFIX = re.compile(r"[\s\u00a0\u180e\u200b-\u200f\u2028-\u202f\u205f-\u206f\ufeff\x00-\x1f\x7f]*")
_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_QUOTE_IF = re.compile(r'[,"\r\n]')
#: in LF-joined cells: one that is empty or starts with anything but an ASCII letter or digit
#: (those cells alone may need the formula guard), and a character that asks for quotes
_UNSAFE_START = re.compile(r"\n(?![A-Za-z0-9])")
_SAFE_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_QUOTE_IN_LINE = re.compile(r'[,"\r]')


def cell(value: object) -> object:
    """``value`` as a safe spreadsheet cell: a text that would start a formula gets ``'``."""
    if not isinstance(value, str) or _NUMBER.match(value):
        return value
    start = _PREFIX.match(value)
    rest = value[start.end() :] if start else value
    if (rest and rest[0] in FORMULA_CHARS) or value.startswith(("\t", "\r", "\n")):
        return "'" + value
    return value


#: the first name of ``cell`` (``render.cables_csv.neutralise``)
neutralise = cell


def _csv_field(value: object) -> str:
    text = "" if value is None else str(cell(value))
    if _QUOTE_IF.search(text):
        return '"' + text.replace('"', '""') + '"'
    return text


def to_csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text (header first, lines ending in LF): every cell through ``cell``, and every
    cell with a comma, a quote, a CR or an LF quoted (RFC 4180)."""
    rows = list(rows)
    if len(header) > 1 and all(len(row) == len(header) for row in rows):
        return _columns_csv(header, rows)
    buf = io.StringIO()
    for row in (header, *rows):
        line = ",".join(_csv_field(v) for v in row)
        buf.write(line if line or len(row) != 1 else '""')
        buf.write("\n")
    return buf.getvalue()


def column_pieces(
    header: Sequence[str], columns: Sequence[Sequence[object]], block: int = 16_384
) -> Iterator[str]:
    """``to_csv`` of rows given as columns (as many as the header, two or more, all of one
    length), in pieces: the header line, then ``block`` rows at a time, each block's cells
    made column by column when it is asked for (a writer can write one while the next is
    made). Joined, the same text: a cell depends on its own value only."""
    if len(header) < 2 or len(columns) != len(header):
        raise ValueError("column_pieces: one column per header name, two or more")
    rows = len(columns[0])
    if any(len(column) != rows for column in columns):
        raise ValueError("column_pieces: columns of different lengths")
    yield to_csv(header, ())
    for start in range(0, rows, block):
        fields = [_column_fields(column[start : start + block]) for column in columns]
        yield "\n".join(map(",".join, zip(*fields, strict=True))) + "\n"


#: values a memo may key on: a float is not one (0.0 and -0.0 are equal keys, a NaN is no key)
_NUMBERS = frozenset((int, bool))
_MEMO_KINDS = frozenset((str, int, bool, type(None)))


def _column_fields(column: Sequence[object]) -> list[str]:
    """``_csv_field`` of every value of a column: a column of plain names (each starting with an
    ASCII letter or digit, none with a comma, quote or line break) as it is, else each distinct
    value worked out once."""
    kinds = set(map(type, column))
    if kinds == {int}:
        return list(map(int.__repr__, column))  # a number is no formula and needs no quotes
    if kinds == {str}:
        joined = "\n".join(column)  # type: ignore[arg-type]
        if (
            joined.count("\n") == len(column) - 1
            and joined[:1] in _SAFE_START
            and not _UNSAFE_START.search(joined)
            and not _QUOTE_IN_LINE.search(joined)
        ):
            return list(column)  # type: ignore[arg-type]  # every value its own cell
    if not kinds <= _MEMO_KINDS or len(kinds & _NUMBERS) > 1:
        return list(map(_csv_field, column))  # 1 and True: equal keys, different cells
    memo = {value: _csv_field(value) for value in set(column)}
    return list(map(memo.__getitem__, column))


def _columns_csv(header: Sequence[str], rows: list[Sequence[object]]) -> str:
    """``to_csv`` of rows as wide as the header (two cells or more, so no line is empty),
    column by column: the same text, each distinct cell value neutralised and quoted once."""
    columns = [_column_fields(column) for column in zip(*rows, strict=True)] if rows else []
    lines = [",".join(map(_csv_field, header)), *map(",".join, zip(*columns, strict=True))]
    return "\n".join(lines) + "\n"


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: object) -> str:
    """``text`` for a terminal: every control character shown as an escape, none sent."""
    return _CONTROL.sub(_shown, str(text))


def markup(text: object) -> str:
    """``text`` for a Rich renderable: control characters shown and Rich markup escaped."""
    shown = visible(text)
    pieces: list[str] = []
    position = 0
    for match in _TAG.finditer(shown):
        pieces.append(_PLAIN_OPEN.sub(r"\\\g<0>", shown[position : match.start()]))
        pieces.append(match.group(1) * 2 + "\\" + match.group(2))
        position = match.end()
    pieces.append(_PLAIN_OPEN.sub(r"\\\g<0>", shown[position:]))
    return "".join(pieces)


#: how Rich's ``rich.markup.render`` reads a string: a tag-like ``[...]`` with the backslashes
#: before it (its ``RE_TAGS``) is a tag, an odd run of backslashes before it escapes the tag
#: and each pair is one literal backslash; in the plain text between tags every ``\\[`` becomes
#: ``[``. So a tag gets its backslashes doubled and one more, and a plain ``[`` that follows a
#: backslash gets one more backslash. (``rich.markup.escape`` also doubles a trailing
#: backslash, which a cell printed alone would show twice, so it is not used.)
_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?\])")
_PLAIN_OPEN = re.compile(r"(?<=\\)\[")

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#!|~])")


def markdown(text: object) -> str:
    """``text`` for a Markdown (or HTML) report: one line, no tag, link or emphasis made."""
    flat = visible(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    flat = _MARKDOWN.sub(r"\\\1", flat)
    return "".join(_HTML.get(ch, ch) for ch in flat)
