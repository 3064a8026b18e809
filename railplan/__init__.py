"""railplan: plan, bill, analyze and document the back-end network of GPU clusters.

The public API is re-exported here and loaded on first use (PEP 562), so ``import railplan``
and the command line start without loading what a command does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from railplan.version import __version__

if TYPE_CHECKING:
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

#: where each public name lives
_EXPORTS = {
    **dict.fromkeys(("Catalog", "load_catalog"), "railplan.catalog"),
    **dict.fromkeys(
        (
            "Cable",
            "Design",
            "Link",
            "Node",
            "NodeShape",
            "Placement",
            "Rack",
            "Routing",
            "Sizing",
            "Switch",
            "design_from_json",
            "design_to_json",
        ),
        "railplan.design",
    ),
    **dict.fromkeys(
        ("CatalogError", "DesignFileError", "InfeasibleError", "RailplanError", "SpecError"),
        "railplan.errors",
    ),
    "plan": "railplan.pipeline.plan",
    **dict.fromkeys(("Spec", "load_spec", "spec_from_dict"), "railplan.spec"),
    "check": "railplan.validate",
}

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'railplan' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
