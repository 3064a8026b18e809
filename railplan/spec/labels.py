"""Cable-end label templates: named fields and bounded widths only, never Python's full format().

``layout.label_template`` is user text. ``str.format`` on it would allow attribute and index
access (``{rack.__class__}``) and any width (``{rack:999999999}`` allocates a gigabyte), so a
template is parsed once into literal text and fields, each field checked against a small
grammar: ``{name}`` or ``{name:spec}`` with ``spec`` = ``[[fill]align][0][width][d|s]``, width
at most ``MAX_WIDTH``; no conversions (``!r``), no positional fields, no nested fields.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

#: fields a label may use, and whether each is a number (u, plane, rail) or text
FIELDS = {
    "rack": str,
    "u": int,
    "device": str,
    "port": str,
    "cable": str,
    "link": str,
    "plane": int,
    "rail": int,
}
MAX_WIDTH = 32
MAX_TEMPLATE = 200
_SPEC = re.compile(r"^(?:[^{}]?[<>^=])?0?(?P<width>\d+)?(?P<type>[ds])?$")
_SAMPLE = {
    "rack": "R0101",
    "u": 1,
    "device": "LF0",
    "port": "P1",
    "cable": "C00001",
    "link": "NL000001",
    "plane": 0,
    "rail": 0,
}
_USE = f"use fields {', '.join(FIELDS)}, e.g. {{rack}}-U{{u:02d}}-{{device}}-{{port}}"


@dataclass(frozen=True)
class LabelTemplate:
    """A parsed template: (literal text, field name or '', format spec) pieces."""

    text: str
    pieces: tuple[tuple[str, str, str], ...]

    def render(self, **values: object) -> str:
        """The label for one cable end; ``values`` holds every field in ``FIELDS``."""
        out = []
        for literal, name, spec in self.pieces:
            out.append(literal)
            if name:
                out.append(format(values[name], spec))
        return "".join(out)


def _field(name: str | None, spec: str, conversion: str | None) -> str:
    """Check one ``{...}`` field; returns the problem, or '' when it is fine."""
    if not name:
        return "fields must be named ({} and {0} are not allowed)"
    if name not in FIELDS:
        if "." in name or "[" in name:
            return f"{{{name}}} uses attribute or index access, which labels do not allow"
        return f"{{{name}}} is not a label field"
    if conversion:
        return f"{{{name}!{conversion}}}: conversions are not allowed"
    m = _SPEC.match(spec)
    if m is None:
        return f"{{{name}:{spec}}}: only fill, alignment, 0, a width and d or s are allowed"
    width = m.group("width") or ""
    if len(width) > 3 or (width and int(width) > MAX_WIDTH):
        return f"{{{name}:{spec}}}: a width over {MAX_WIDTH} characters does not fit a label"
    kind = m.group("type")
    if kind == "d" and FIELDS[name] is not int:
        return f"{{{name}:{spec}}}: {name} is text, so 'd' (a number format) does not apply"
    return ""


def parse_label_template(text: str) -> LabelTemplate:
    """Parse and check a template; raises ValueError with one sentence naming the problem."""
    if len(text) > MAX_TEMPLATE:
        raise ValueError(f"is {len(text)} characters long; keep it under {MAX_TEMPLATE}")
    pieces = []
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"is not a valid template ({exc}); {_USE}") from None
    for literal, name, spec, conversion in parsed:
        if name is None:
            pieces.append((literal, "", ""))
            continue
        problem = _field(name, spec or "", conversion)
        if problem:
            raise ValueError(f"{problem}; {_USE}")
        pieces.append((literal, name, spec or ""))
    template = LabelTemplate(text, tuple(pieces))
    try:
        template.render(**_SAMPLE)
    except ValueError as exc:
        raise ValueError(f"is not a valid template ({exc}); {_USE}") from None
    return template
