"""The parts catalog: switches, NICs, nodes, transceivers, cables and panels, with sources."""

from __future__ import annotations

from railplan.catalog.load import default_catalog_dir, load_catalog, parse_catalog
from railplan.catalog.parts import (
    CAGE_ACCEPTS,
    CONNECTORS,
    FORM_FACTOR_GBPS,
    FORM_FACTORS,
    LENGTH_EPS_M,
    PROTOCOLS,
    SOURCE_KINDS,
    Cable,
    Cassette,
    Catalog,
    NicModel,
    NodeModel,
    Panel,
    PortMode,
    Sourced,
    SwitchModel,
    Transceiver,
    cage_accepts,
)

__all__ = [
    "CAGE_ACCEPTS",
    "CONNECTORS",
    "FORM_FACTORS",
    "FORM_FACTOR_GBPS",
    "LENGTH_EPS_M",
    "PROTOCOLS",
    "SOURCE_KINDS",
    "Cable",
    "Cassette",
    "Catalog",
    "NicModel",
    "NodeModel",
    "Panel",
    "PortMode",
    "Sourced",
    "SwitchModel",
    "Transceiver",
    "cage_accepts",
    "default_catalog_dir",
    "load_catalog",
    "parse_catalog",
]
