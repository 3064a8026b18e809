"""The cluster spec: its fields (pydantic) and how a YAML file with overrides becomes one."""

from __future__ import annotations

from railplan.spec.load import (
    apply_overrides,
    load_spec,
    spec_from_dict,
    spec_json_schema,
    spec_to_dict,
    spec_to_yaml,
)
from railplan.spec.schema import (
    ROUTING_POLICIES,
    TOPOLOGIES,
    U_HEIGHT_M,
    ClusterSpec,
    FabricSpec,
    FatTreeSpec,
    LayoutSpec,
    MatrixSpec,
    PlacementRulesSpec,
    RoutingSpec,
    Spec,
    TraySpec,
)

__all__ = [
    "ROUTING_POLICIES",
    "TOPOLOGIES",
    "U_HEIGHT_M",
    "ClusterSpec",
    "FabricSpec",
    "FatTreeSpec",
    "LayoutSpec",
    "MatrixSpec",
    "PlacementRulesSpec",
    "RoutingSpec",
    "Spec",
    "TraySpec",
    "apply_overrides",
    "load_spec",
    "spec_from_dict",
    "spec_json_schema",
    "spec_to_dict",
    "spec_to_yaml",
]
