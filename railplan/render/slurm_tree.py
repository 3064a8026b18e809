"""Slurm ``topology.conf`` for the topology/tree plugin: one SwitchName line per node group.

The format is Slurm's (``doc/man/man5/topology.conf.5``, parsed by
``src/plugins/topology/tree/switch_record.c``): ``SwitchName=`` names a switch (at most 64
characters), ``Nodes=`` the nodes of a leaf switch and ``Switches=`` the children of a higher
one, both as hostlist expressions; a switch has nodes or switches, never both, and a node sits
under one leaf switch only ("Multiple leaf switches contain nodes" is a warning). A Slurm
"switch" here is a group of the design's switches (``design.hierarchy``): the leaf level is the
group of nodes that share every leaf (an SU's rail leaves, a rack's ToRs) or, on a Matrix, a
stripe set spread over the B leaves, so a job fills one group before it takes nodes under
another, and so before it crosses a spine.
"""

from __future__ import annotations

from railplan.design.hierarchy import Hierarchy
from railplan.render.hostlist import compress

#: Slurm's limit on a switch name (switch_record.c: "SwitchName (%s) must be shorter than")
MAX_SWITCH_NAME = 64


def header(h: Hierarchy, origin: str, what: str) -> list[str]:
    """The comment lines every Slurm file starts with: what, for which design, from where."""
    lines = [
        f"# {what}",
        f"# design {h.design} ({h.topology}), {origin}; written by railplan",
    ]
    for lv in h.levels:
        lines.append(f"#   {lv.name}: {len(lv.groups)} x {lv.what}")
    if h.unattached:
        lines.append(f"# on no switch (left out): {compress(h.unattached)}")
    return lines


def render(h: Hierarchy, origin: str = "from the plan") -> str:
    """``topology.conf`` text for TopologyPlugin=topology/tree."""
    lines = header(h, origin, "Slurm topology.conf for TopologyPlugin=topology/tree")
    for i, lv in enumerate(h.levels):
        lines.append(f"# level {i + 1}: {lv.name}")
        for g in lv.groups:
            if len(g.name) > MAX_SWITCH_NAME:  # pragma: no cover - names are short by design
                raise ValueError(f"switch name {g.name!r} is longer than {MAX_SWITCH_NAME}")
            if i == 0:
                lines.append(f"SwitchName={g.name} Nodes={compress(g.nodes)}")
            else:
                lines.append(f"SwitchName={g.name} Switches={compress(g.children)}")
    return "\n".join(lines) + "\n"
