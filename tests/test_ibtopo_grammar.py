"""The .topo export parses with the documented IBDM topology-file grammar.

The parser below is written from ibutils' ``ibdm-topo-file`` manual page and the regular
expressions of its reader (``IBFabric::parseTopology`` in ibdm/Fabric.cpp): a system line
``TYPE NAME [CFG: ...]`` (no ``/``), indented port lines ``PORT -> RTYPE RNAME RPORT``, blank
lines ending a section, ``#`` comment lines; anything else is a line the reader ignores with a
warning, which we count as a failure. The arrow's optional ``-<w>x-`` width and ``-<s>G-`` lane
speed follow NVIDIA's own topo files (UFM's example ``P2 -4x-50G-> HCA_mlx5_3 host mlx5_0/P1``),
which use lane speeds newer than the ibdm 1.5 list (2.5/5/10G). ``IBDM15_PORT`` is the real
reader's own pattern, copied from the strings of Debian's ibutils 1.5.7 ``libibdm.so``: the
``ibdm-1.5`` dialect must match it on every port line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from railplan import load_spec, plan
from railplan.render import ibtopo

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SYSTEM = re.compile(r"^[ \t]*([^/ \t]+)[ \t]+([^/ \t]+)[ \t]*( CFG:(.*))?$")
PORT = re.compile(
    r"^[ \t]+([^ \t]+)[ \t]+-((1|2|4|8|12)[xX]-)?(([0-9.]+)G-)?[>]"
    r"[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]*$"
)
#: the port-line pattern of ibutils 1.5.7's reader (libibdm.so.1.5.7), as POSIX ERE
IBDM15_PORT = re.compile(
    r"^[ \t]+([^ \t]+)[ \t]+-((1|4|8|12)[xX]-)?((2.5|5|10)G-)?[>]"
    r"[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]*$"
)
COMMENT = re.compile(r"^[ \t]*#")
EMPTY = re.compile(r"^[ \t]*$")


def parse_topo(
    text: str, port: re.Pattern[str] = PORT
) -> tuple[dict[str, str], list[tuple[str, ...]]]:
    """(system name -> type, cables (type, name, port, width, speed, rtype, rname, rport))."""
    systems: dict[str, str] = {}
    cables: list[tuple[str, ...]] = []
    current: tuple[str, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if COMMENT.match(line):
            continue
        if m := SYSTEM.match(line):
            current = (m[1], m[2])
            assert systems.setdefault(m[2], m[1]) == m[1], f"line {number}: {m[2]} retyped"
            continue
        if m := port.match(line):
            assert current is not None, f"line {number}: a port line outside a system"
            cables.append((*current, m[1], m[3] or "4", m[5] or "", m[6], m[7], m[8]))
            continue
        if EMPTY.match(line):
            current = None
            continue
        raise AssertionError(f"line {number}: the reader would ignore {line!r}")
    return systems, cables


def test_the_parser_reads_the_documented_examples() -> None:
    manual = (
        "MTS2400 S-1\n   P1 -> MT23108 H-1 P1\n   P2 -> MT23108 H-1 P2\n   P24 -> MT23108 H-2 P1\n"
    )
    systems, cables = parse_topo(manual)
    assert systems == {"S-1": "MTS2400"} and len(cables) == 3
    nvidia = "MQM8700 sw-ufm-hdr01\n   P2 -4x-50G-> HCA_mlx5_3 swx-ufm3-04 mlx5_0/P1\n"
    assert parse_topo(nvidia)[1] == [
        ("MQM8700", "sw-ufm-hdr01", "P2", "4", "50", "HCA_mlx5_3", "swx-ufm3-04", "mlx5_0/P1")
    ]
    with pytest.raises(AssertionError, match="would ignore"):
        parse_topo("MQM8700 sw1\nP2 -4x-50G-> MQM8700 sw2 P1\n")  # a port line not indented


@pytest.mark.parametrize("example", ["h100-1k", "h100-16k-3tier"])
def test_every_link_reads_back_from_the_topo_file(catalog, example: str) -> None:
    design = plan(load_spec(EXAMPLES / f"{example}.yaml"), catalog)
    systems, cables = parse_topo(ibtopo.render(design, catalog))
    switches = design.switch_by_id()
    hca = f"HCA_mlx5_{design.shape.ports}"
    assert {systems[s.id] for s in design.switches} == {"MQM9700"}
    assert len(systems) == len(design.switches)  # hosts appear only as remote ends

    def end(device: str, port: int) -> tuple[str, str, str]:
        if device in switches:
            return ("MQM9700", device, f"P{port + 1}")
        return (hca, device, f"mlx5_{port}/P1")

    want = set()
    for lk in design.links:
        a, b = end(lk.a_device, lk.a_port), end(lk.b_device, lk.b_port)
        for near, far in ((a, b), (b, a)):
            if near[1] in switches:
                want.add((*near, "4", "100", *far))
    assert len(cables) == len(want) and set(cables) == want


@pytest.mark.parametrize("example", ["h100-1k", "superpod-h100-4su"])
def test_the_ibdm_dialect_matches_the_real_readers_pattern(catalog, example: str) -> None:
    design = plan(load_spec(EXAMPLES / f"{example}.yaml"), catalog)
    old = ibtopo.render(design, catalog, "ibdm-1.5")
    systems, cables = parse_topo(old, IBDM15_PORT)
    sw = design.switch_by_id()
    assert len(cables) == sum((lk.a_device in sw) + (lk.b_device in sw) for lk in design.links)
    assert {c[4] for c in cables} == {""}  # no lane speed: IBDM takes it from the IBNL
    with pytest.raises(AssertionError, match="would ignore"):
        parse_topo(ibtopo.render(design, catalog), IBDM15_PORT)  # the UFM dialect's -100G-
    ibnl = ibtopo.ibnl_files(design, catalog)
    wanted = set(systems.values()) | {c[5] for c in cables}
    assert set(ibnl) == {f"{kind}.ibnl" for kind in wanted}
    for name, text in ibnl.items():
        assert text.startswith(f"TOPSYSTEM {name.removesuffix('.ibnl')}\n")
