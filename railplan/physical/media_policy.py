"""The spec's ``bill.media`` policy as the catalog media selection may draw from."""

from __future__ import annotations

from railplan.catalog import Catalog
from railplan.errors import SpecError


def catalog_for(catalog: Catalog, policy: str) -> Catalog:
    """``catalog`` as policy ``policy`` allows: ``cheapest`` every cable, ``fibre`` only the
    passive fibre parts (cords, splitters, harnesses, trunks), so every link is a module at each
    end and fibre between them, as NVIDIA's DGX SuperPOD reference bills are."""
    if policy == "cheapest":
        return catalog
    if policy == "fibre":
        cables = {k: c for k, c in catalog.cables.items() if c.optical}
        return catalog.model_copy(update={"cables": cables})
    raise SpecError(f"bill.media {policy!r} is not one of cheapest, fibre")
