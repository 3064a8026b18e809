"""Slurm ``topology.yaml`` (newer releases): the tree and the block topology in one file.

The keys are those of Slurm's data parser (``src/plugins/data_parser/v0.0.45/parsers.c``,
``TOPOLOGY_CONF``, ``TOPOLOGY_TREE_CONFIG``, ``SWITCH_CONFIG``, ``TOPOLOGY_BLOCK_CONFIG``,
``BLOCK_CONFIG``) and ``topology.yaml(5)``: a list of topologies, each with ``topology`` (its
name, first), ``cluster_default`` and one of ``tree`` (``switches``: ``switch``, ``children``,
``nodes``) or ``block`` (``block_sizes``, ``blocks``: ``block``, ``nodes``). The tree is the
cluster default; a partition picks the block one with ``Topology=block``.
"""

from __future__ import annotations

from typing import Any

import yaml

from railplan.design.hierarchy import Hierarchy
from railplan.render.hostlist import compress
from railplan.render.slurm_block import block_sizes, ordered_blocks
from railplan.render.slurm_tree import header


def document(h: Hierarchy) -> list[dict[str, Any]]:
    """The topology.yaml content as plain data."""
    switches: list[dict[str, Any]] = []
    for i, lv in enumerate(h.levels):
        for g in lv.groups:
            if i == 0:
                switches.append({"switch": g.name, "nodes": compress(g.nodes)})
            else:
                switches.append({"switch": g.name, "children": compress(g.children)})
    sizes, _ = block_sizes(h)
    blocks = [{"block": b.name, "nodes": compress(b.nodes)} for b in ordered_blocks(h)]
    return [
        {"topology": "tree", "cluster_default": True, "tree": {"switches": switches}},
        {
            "topology": "block",
            "cluster_default": False,
            "block": {"block_sizes": sizes, "blocks": blocks},
        },
    ]


def render(h: Hierarchy, origin: str = "from the plan") -> str:
    """``topology.yaml`` text."""
    lines = header(h, origin, "Slurm topology.yaml: topology 'tree' (default) and 'block'")
    body = yaml.safe_dump(document(h), sort_keys=False, default_flow_style=False, width=4096)
    return "\n".join(lines) + "\n---\n" + body
