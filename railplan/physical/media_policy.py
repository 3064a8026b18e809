"""The spec's ``bill.media`` policy: the catalog media selection may draw from, and which links
must run on optics whatever is cheaper."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from railplan.catalog import Catalog
from railplan.errors import SpecError

POLICIES = ("cheapest", "fibre", "copper-in-rack")
#: the fibre demand of a link that must run on optics of either fibre (``media_assign.LinkRun``)
OPTICS = "optics"


class _Placed(Protocol):
    @property
    def rack(self) -> str: ...


class _Ends(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def a_device(self) -> str: ...
    @property
    def b_device(self) -> str: ...


def optics_demand(
    policy: str, links: Iterable[_Ends], where: Mapping[str, _Placed]
) -> dict[str, str]:
    """The links ``policy`` puts on optics by where their ends stand: under ``copper-in-rack``
    every link whose two ends are in different racks (copper stays inside a rack); none under
    the other policies (``fibre`` already leaves only optical parts in the catalog)."""
    if policy != "copper-in-rack":
        return {}
    return {
        link.id: OPTICS for link in links if where[link.a_device].rack != where[link.b_device].rack
    }


def catalog_for(catalog: Catalog, policy: str) -> Catalog:
    """``catalog`` as policy ``policy`` allows: ``cheapest`` every cable, ``fibre`` only the
    passive fibre parts (cords, splitters, harnesses, trunks), so every link is a module at each
    end and fibre between them, as NVIDIA's DGX SuperPOD reference bills are."""
    if policy in ("cheapest", "copper-in-rack"):  # copper-in-rack decides per link, by rack
        return catalog
    if policy == "fibre":
        cables = {k: c for k, c in catalog.cables.items() if c.optical}
        return catalog.model_copy(update={"cables": cables})
    raise SpecError(f"bill.media {policy!r} is not one of {', '.join(POLICIES)}")
