"""compare(spec): plan every topology family for one cluster and put the results side by side."""

from __future__ import annotations

from dataclasses import dataclass

from railplan.catalog import Catalog, load_catalog
from railplan.errors import InfeasibleError, SpecError
from railplan.metrics import inter_switch_links, max_hops
from railplan.model import Design
from railplan.planner import plan
from railplan.spec import Spec

FAMILIES = ("roft", "matrix", "fat-tree", "rail-only")


@dataclass(frozen=True)
class CompareRow:
    """One family's answer: a design with its derived figures, or why it cannot be built."""

    family: str
    design: Design | None
    reason: str = ""
    max_hops: int | None = None
    inter_switch_links: int | None = None

    @property
    def feasible(self) -> bool:
        return self.design is not None


def compare_family(spec: Spec, catalog: Catalog, family: str) -> CompareRow:
    """Plan ``family`` for the spec's cluster; an infeasible or invalid request gives the reason."""
    try:
        design = plan(spec, catalog, topology=family)
    except (InfeasibleError, SpecError) as exc:
        return CompareRow(family=family, design=None, reason=str(exc))
    return CompareRow(
        family=family,
        design=design,
        max_hops=max_hops(design),
        inter_switch_links=inter_switch_links(design),
    )


def compare(
    spec: Spec, catalog: Catalog | None = None, families: tuple[str, ...] = FAMILIES
) -> list[CompareRow]:
    """One row per family (roft, matrix, fat-tree, rail-only), in that order."""
    catalog = catalog or load_catalog()
    return [compare_family(spec, catalog, family) for family in families]
