"""Topology generators: one closed-form construction per family, keyed by topology id."""

from __future__ import annotations

from collections.abc import Callable

from railplan.catalog import SwitchModel
from railplan.design import Design, NodeShape
from railplan.spec import Spec
from railplan.topology.fat_tree import fat_tree
from railplan.topology.matrix import matrix
from railplan.topology.roft import rail_only, roft

Generator = Callable[[Spec, NodeShape, SwitchModel], Design]

GENERATORS: dict[str, Generator] = {
    "roft": roft,
    "rail-only": rail_only,
    "matrix": matrix,
    "fat-tree": fat_tree,
}
