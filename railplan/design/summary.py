"""The plan summary: the stable JSON object `railplan plan --json` prints for a design."""

from __future__ import annotations

from typing import Any

from railplan.design import Design


def plan_summary(design: Design) -> dict[str, Any]:
    """Counts per tier and kind (integers, 0 where absent) plus the sizing that produced them."""
    links = design.link_counts()
    return {
        "name": design.name,
        "topology": design.topology,
        "gpus": design.gpus,
        "nodes": len(design.nodes),
        "gpus_per_node": design.shape.gpus,
        "nic_ports_per_node": design.shape.ports,
        "port_speed_gbps": design.shape.port_speed_gbps,
        "planes": design.planes,
        "tiers": design.sizing.tiers,
        "switch_model": design.sizing.switch_model,
        "radix": design.sizing.radix,
        "switches": design.switch_counts(),
        "links": {
            "node_leaf": links["node_leaf"],
            "leaf_spine": links["leaf_spine"],
            "spine_core": links["spine_core"],
            "leaf_leaf": links["leaf_leaf"],
        },
        "lower_bound_switches": design.sizing.lower_bound_switches,
        "oversubscription": design.sizing.oversubscription,
        "su_nodes": design.sizing.su_nodes,
        "scalable_units": design.sizing.sus,
        "pods": design.sizing.pods,
        "whole_su": design.sizing.whole_su,
        "routing": design.routing.policy,
    }
