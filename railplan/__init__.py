"""railplan: plan, bill, analyze and document the back-end network of GPU clusters."""

from __future__ import annotations

from railplan.catalog import Catalog, load_catalog
from railplan.design import (
    Cable,
    Design,
    Link,
    Node,
    NodeShape,
    Placement,
    Rack,
    Routing,
    Sizing,
    Switch,
    design_from_json,
    design_to_json,
)
from railplan.errors import (
    CatalogError,
    DesignFileError,
    InfeasibleError,
    RailplanError,
    SpecError,
)
from railplan.pipeline.plan import plan
from railplan.spec import Spec, load_spec, spec_from_dict
from railplan.validate import check
from railplan.version import __version__

__all__ = [
    "Cable",
    "Catalog",
    "CatalogError",
    "Design",
    "DesignFileError",
    "InfeasibleError",
    "Link",
    "Node",
    "NodeShape",
    "Placement",
    "Rack",
    "RailplanError",
    "Routing",
    "Sizing",
    "Spec",
    "SpecError",
    "Switch",
    "__version__",
    "check",
    "design_from_json",
    "design_to_json",
    "load_catalog",
    "load_spec",
    "plan",
    "spec_from_dict",
]
