"""The Design (plain frozen data every stage passes on) and its lossless JSON form."""

from __future__ import annotations

from railplan.design.io import FORMAT_VERSION, design_from_dict, design_from_json, design_to_json
from railplan.design.types import (
    LINK_KINDS,
    ROLE_TIER,
    Cable,
    Design,
    Device,
    Link,
    Node,
    NodeShape,
    PatchPanel,
    Placement,
    PlantSegment,
    Rack,
    Routing,
    Sizing,
    Switch,
    TierSizing,
)

__all__ = [
    "FORMAT_VERSION",
    "LINK_KINDS",
    "ROLE_TIER",
    "Cable",
    "Design",
    "Device",
    "Link",
    "Node",
    "NodeShape",
    "PatchPanel",
    "Placement",
    "PlantSegment",
    "Rack",
    "Routing",
    "Sizing",
    "Switch",
    "TierSizing",
    "design_from_dict",
    "design_from_json",
    "design_to_json",
]
