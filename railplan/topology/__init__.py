"""Topology generators: one closed-form construction per family, keyed by topology id."""

from __future__ import annotations

from collections.abc import Callable

from railplan.catalog import SwitchModel
from railplan.design import Design, NodeShape
from railplan.spec import Spec
from railplan.topology.fat_tree import fat_tree
from railplan.topology.matrix import matrix
from railplan.topology.rail_only import rail_only
from railplan.topology.roft import roft
from railplan.topology.single_switch import single_switch
from railplan.topology.tiers import TierModels

#: a family's construction: the spec, the node shape and one switch model (or one per tier)
Generator = Callable[[Spec, NodeShape, SwitchModel | TierModels], Design]

GENERATORS: dict[str, Generator] = {
    "roft": roft,
    "rail-only": rail_only,
    "matrix": matrix,
    "fat-tree": fat_tree,
    "single-switch": single_switch,
}
