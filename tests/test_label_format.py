"""Cabling renders labels with ``str.format_map`` on a checked template, or from per-device
label tables (``end_labeller``) when the template reads only the end's fields: both the same
text as ``LabelTemplate.render`` for every template the grammar admits."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.physical.labels import END_FIELDS, end_labeller
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


class _Spot:
    def __init__(self, rack: str, u: int) -> None:
        self.rack, self.u = rack, u


class _Ports:
    """Port names of a device with four ports (``port_of``'s table); others named on demand."""

    def table(self, device: str) -> list[str]:
        return [f"{device[:1]}{p}" for p in range(4)]

    def __call__(self, device: str, port: int) -> str:
        return self.table(device)[port] if 0 <= port < 4 else f"X{port}"


@settings(max_examples=300, deadline=None)
@given(
    _template(),
    st.text(alphabet="R0123456789", min_size=1, max_size=6),
    st.integers(1, 52),
    st.lists(st.tuples(st.sampled_from(["sw1", "node7"]), st.integers(-1, 6)), max_size=8),
)
def test_end_labeller_gives_what_render_does(
    text: str, rack: str, u: int, ends: list[tuple[str, int]]
) -> None:
    """Any number of port fields, any specs, ports beyond the device's table: the labeller's
    labels are the rendered ones; a template reading the cable or link gets no labeller."""
    try:
        template = parse_label_template(text)
    except ValueError:
        return
    names = {"sw1": "P0-LF-1", "node7": "N7"}
    where = {"sw1": _Spot(rack, u), "node7": _Spot("R0102", u + 1)}
    ports = _Ports()
    label = end_labeller(template, names, where, ports)  # type: ignore[arg-type]
    read = {name for _, name, _ in template.pieces if name}
    if not read <= END_FIELDS:
        assert label is None
        return
    assert label is not None
    for device, port in ends * 2:  # asked twice: the table built on first use answers again
        p = where[device]
        want = template.render(rack=p.rack, u=p.u, device=names[device], port=ports(device, port))
        assert label(device, port) == want


def test_end_labeller_on_the_default_template_and_ports_anywhere() -> None:
    names = {"sw1": "P0-LF-1", "node7": "N7"}
    where = {"sw1": _Spot("R0101", 3), "node7": _Spot("R0102", 40)}
    ports = _Ports()
    cases = {
        "{rack}-U{u:02d}-{device}-{port}": "R0101-U03-P0-LF-1-s2",
        "{port}/{device}@{rack}": "s2/P0-LF-1@R0101",
        "[{port:>4}]{u}": "[  s2]3",
        "{device}": "P0-LF-1",
        "{port}{port:*<3}": "s2s2*",
    }
    for text, want in cases.items():
        label = end_labeller(parse_label_template(text), names, where, ports)  # type: ignore[arg-type]
        assert label is not None
        assert label("sw1", 2) == want, text
        assert label("node7", 9) == parse_label_template(text).render(
            rack="R0102", u=40, device="N7", port="X9"
        )
