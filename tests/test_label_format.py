"""Cabling renders labels with ``str.format_map`` on a checked template: the same text as
``LabelTemplate.render`` for every template the grammar admits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.spec.labels import FIELDS, parse_label_template

_LITERAL = st.lists(
    st.sampled_from(list("ABC-_/. 0129")) | st.just("{{") | st.just("}}"), max_size=6
).map("".join)


@st.composite
def _template(draw: st.DrawFn) -> str:
    out = []
    for _ in range(draw(st.integers(1, 5))):
        out.append(draw(_LITERAL))
        name = draw(st.sampled_from(sorted(FIELDS)))
        fill = draw(st.sampled_from(["", "*", "0", "-"]))
        align = draw(st.sampled_from(["", "<", ">", "^"])) if fill else ""
        if fill and not align:
            fill = ""
        zero = draw(st.sampled_from(["", "0"])) if not fill else ""
        width = draw(st.sampled_from(["", "1", "3", "8"]))
        kind = draw(st.sampled_from(["", "d"] if FIELDS[name] is int else ["", "s"]))
        spec = f"{fill}{align}{zero}{width}{kind}"
        out.append("{" + name + (":" + spec if spec else "") + "}")
    out.append(draw(_LITERAL))
    return "".join(out)


@settings(max_examples=300, deadline=None)
@given(
    _template(),
    st.text(alphabet="R0123456789", min_size=1, max_size=6),
    st.integers(1, 52),
    st.integers(0, 7),
)
def test_format_map_renders_what_render_does(text: str, rack: str, u: int, rail: int) -> None:
    try:
        template = parse_label_template(text)
    except ValueError:
        return  # the grammar refused it: cabling never sees it
    values = {
        "rack": rack,
        "u": u,
        "device": "P0-LF-SU2-R0",
        "port": "P9/2",
        "cable": "C00017",
        "link": "NL000042",
        "plane": 1,
        "rail": rail,
    }
    assert template.text.format_map(values) == template.render(**values)


def test_escaped_braces_and_widths_render_alike() -> None:
    template = parse_label_template("{{{rack}}}-U{u:02d}-{device:>8}-{port:*<5s}")
    values = {"rack": "R1", "u": 3, "device": "N4", "port": "P1", "cable": "", "link": ""}
    values |= {"plane": 0, "rail": 0}
    assert (
        template.text.format_map(values) == template.render(**values) == "{R1}-U03-      N4-P1***"
    )
