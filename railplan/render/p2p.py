"""NVIDIA-style point-to-point (P2P) cabling sheet: the Links sheet of the Cable Validation Tool.

Columns as NVIDIA documents them for the P2P file's Links sheet: A-Node, A-Port, Z-Node,
Z-Port, Protocol (ib/ethernet), the shuffle-cable columns (left empty: railplan plans no shuffle
cables), A-Module-PN, Z-Module-PN and Source-Ref (the cable's number in the schedule). Module
part numbers come from the catalog; a cable with built-in ends (DAC, ACC, AEC, AOC) gives its
own part number at both ends.
"""

from __future__ import annotations

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.render.cables_csv import schedule, to_csv

COLUMNS = (
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


def module_pn(catalog: Catalog, transceiver: str, cable: str) -> str:
    """Part number at one end: the transceiver's, else the built-in cable's; ids if none."""
    if transceiver:
        t = catalog.transceivers.get(transceiver)
        return (t.part_number or t.id) if t else transceiver
    part = catalog.cables.get(cable)
    return (part.part_number or part.id) if part else cable


def render(design: Design, catalog: Catalog) -> str:
    """The Links sheet as CSV text, one row per cable in schedule order."""
    model = catalog.switches.get(design.sizing.switch_model)
    protocol = "ib" if model is not None and model.protocol == "infiniband" else "ethernet"
    rows = []
    for n, row in enumerate(schedule(design), start=1):
        c = row.cable
        rows.append(
            (
                row.a.device,
                row.a.port,
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
    return to_csv(COLUMNS, rows)
