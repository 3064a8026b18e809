"""Annualized failure rates: a catalog part's own ``afr`` when it has one, else its family's.

No public fleet statistics per part family were found, so every default is an estimate (a
fraction of the installed parts replaced per year) and says so; a catalog entry's ``afr:
{value, source}`` (an operator's own RMA history) replaces it. Passive housings (panels and
adapter plates) are taken not to fail.
"""

from __future__ import annotations

from railplan.catalog import Catalog, Sourced
from railplan.costs.priced import CABLE_KINDS
from railplan.physical.bom import BomLine

_NO_FIGURE = "no public fleet figure per part family found; set afr in the catalog"
#: family -> annualized failure rate (fraction per year) with its source
AFR_DEFAULTS: dict[str, Sourced] = {
    "switch": Sourced(value=0.02, source=f"estimate: fixed 1-2U data-center switch; {_NO_FIGURE}"),
    "nic": Sourced(value=0.01, source=f"estimate: PCIe network adapter; {_NO_FIGURE}"),
    "transceiver": Sourced(
        value=0.02, source=f"estimate: pluggable optical module (lasers, DSP); {_NO_FIGURE}"
    ),
    "dac": Sourced(value=0.005, source=f"estimate: passive copper cable; {_NO_FIGURE}"),
    "acc": Sourced(value=0.01, source=f"estimate: active copper cable; {_NO_FIGURE}"),
    "aec": Sourced(value=0.01, source=f"estimate: active electrical cable; {_NO_FIGURE}"),
    "aoc": Sourced(value=0.02, source=f"estimate: active optical cable; {_NO_FIGURE}"),
    "fibre": Sourced(
        value=0.005, source=f"estimate: fibre cord, mostly damage in moves; {_NO_FIGURE}"
    ),
    "trunk": Sourced(value=0.002, source=f"estimate: fibre trunk in trays; {_NO_FIGURE}"),
    "passive": Sourced(value=0.0, source="standard: passive housing, no failure modelled"),
}


def afr_of(line: BomLine, catalog: Catalog) -> Sourced:
    """The annualized failure rate of a bill line's part."""
    own: Sourced | None = None
    family = "passive"
    if line.kind == "switch":
        own, family = catalog.switch(line.part).afr, "switch"
    elif line.kind == "nic":
        own, family = catalog.nic(line.part).afr, "nic"
    elif line.kind == "transceiver":
        own, family = catalog.transceivers[line.part].afr, "transceiver"
    elif line.kind in CABLE_KINDS:
        cable = catalog.cables[line.part]
        own, family = cable.afr, cable.kind
    return own if own is not None else AFR_DEFAULTS[family]
