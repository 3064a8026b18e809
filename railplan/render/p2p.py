"""NVIDIA Cable Validation Tool point-to-point (P2P) sheets of the cabled fabric.

``render`` writes the P2P file's columns as the tool's manual documents them (NVIDIA UFM Cable
Validation Tool, "P2P File"): ``A-Node Name``, ``A-Type`` (``Host`` or ``Switch``), ``A-Port``,
``Z-Node Name``, ``Z-Type``, ``Z-Port``, with each end's rack and U in front (the manual's
examples carry ``Rack`` and ``U`` columns). Port names follow the manual: on InfiniBand a host
port is its HCA number (1 -> mlx5_0 P1, 2 -> mlx5_1 P1, ...) and a switch port is its cage
number, ``cage/split`` on a split cage (``1/2``); on Ethernet a switch port is ``swp<cage>`` or
``swp<cage>s<split>`` (splits counted from 0, as in the manual's ``swp1s0``) and a host port
``rail<n>`` for the node's n-th fabric port. The tool reads columns by header name, so their
order does not matter to it.

``render_links`` writes the Links sheet of the tool's newer P2P workbook (A-Node, A-Port, Z-Node,
Z-Port, Protocol, the shuffle-cable columns, A-Module-PN, Z-Module-PN, Source-Ref); module part
numbers come from the catalog, and a cable with built-in ends (DAC, ACC, AEC, AOC) gives its own
part number at both ends.
"""

from __future__ import annotations

from railplan.catalog import Catalog
from railplan.design import Design, Switch
from railplan.render.cables_csv import CableEnd, schedule, to_csv

COLUMNS = (
    "A-Rack",
    "A-U",
    "A-Node Name",
    "A-Type",
    "A-Port",
    "Z-Rack",
    "Z-U",
    "Z-Node Name",
    "Z-Type",
    "Z-Port",
)
LINKS_COLUMNS = (
    "A-Node",
    "A-Port",
    "Z-Node",
    "Z-Port",
    "Protocol",
    "Shuffle-ID",
    "A-Connector",
    "A-MPO-Connector",
    "Z-Connector",
    "Z-MPO-Connector",
    "A-Module-PN",
    "Z-Module-PN",
    "Source-Ref",
)


def _protocol(design: Design, catalog: Catalog) -> str:
    model = catalog.switches.get(design.sizing.switch_model)
    return "ib" if model is not None and model.protocol == "infiniband" else "ethernet"


def port_label(sw: Switch | None, port: int, protocol: str) -> tuple[str, str]:
    """(A-Type or Z-Type, the port as the Cable Validation Tool names it) of one cable end."""
    if sw is None:
        return "Host", str(port + 1) if protocol == "ib" else f"rail{port + 1}"
    cage, slot, per_cage = sw.cage_of(port)
    if protocol == "ib":
        return "Switch", f"{cage + 1}/{slot + 1}" if per_cage > 1 else str(cage + 1)
    return "Switch", f"swp{cage + 1}s{slot}" if per_cage > 1 else f"swp{cage + 1}"


def render(design: Design, catalog: Catalog) -> str:
    """The P2P sheet as CSV text, one row per cable in schedule order (rack by rack)."""
    protocol = _protocol(design, catalog)
    switches = design.switch_by_id()
    rows = []
    for row in schedule(design):
        cells: list[object] = []
        for end, port in ((row.a, row.link.a_port), (row.b, row.link.b_port)):
            kind, name = port_label(switches.get(end.device), port, protocol)
            cells += [end.rack, end.u, end.device, kind, name]
        rows.append(tuple(cells))
    return to_csv(COLUMNS, rows)


def module_pn(catalog: Catalog, transceiver: str, cable: str) -> str:
    """Part number at one end: the transceiver's, else the built-in cable's; ids if none."""
    if transceiver:
        t = catalog.transceivers.get(transceiver)
        return (t.part_number or t.id) if t else transceiver
    part = catalog.cables.get(cable)
    return (part.part_number or part.id) if part else cable


def render_links(design: Design, catalog: Catalog) -> str:
    """The Links sheet as CSV text, one row per cable in schedule order."""
    protocol = _protocol(design, catalog)
    rows = []
    for n, row in enumerate(schedule(design), start=1):
        c = row.cable
        a: CableEnd = row.a
        rows.append(
            (
                a.device,
                a.port,
                row.b.device,
                row.b.port,
                protocol,
                "",
                "",
                "",
                "",
                "",
                module_pn(catalog, c.transceiver_a, c.media),
                module_pn(catalog, c.transceiver_b, c.media),
                n,
            )
        )
    return to_csv(LINKS_COLUMNS, rows)
