"""The plan summary: the stable JSON object `railplan plan --json` prints for a design."""

from __future__ import annotations

from typing import Any

from railplan.design import Design


def plan_summary(design: Design) -> dict[str, Any]:
    """Counts per tier and kind (integers, 0 where absent) plus the sizing that produced them."""
    links = design.link_counts()
    out = _summary(design, links)
    # only where present, so a design without them keeps its stable summary
    if design.shape.domain_nodes > 1:
        k = design.shape.domain_nodes
        out["nvlink_domains"] = {"nodes_per_domain": k, "domains": len(design.nodes) // k}
    if design.sizing.spine_groups > 1:
        out["spine_groups"] = design.sizing.spine_groups
    return out


def _summary(design: Design, links: dict[str, int]) -> dict[str, Any]:
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
            "device_leaf": links["device_leaf"],
        },
        "switch_models": switch_models(design),
        "spare_nodes": len(design.nodes) - design.active_nodes,
        "devices": len(design.devices),
        "lower_bound_switches": design.sizing.lower_bound_switches,
        "oversubscription": design.sizing.oversubscription,
        "su_nodes": design.sizing.su_nodes,
        "scalable_units": design.sizing.sus,
        "pods": design.sizing.pods,
        "whole_su": design.sizing.whole_su,
        "routing": design.routing.policy,
        "tier_sizing": [
            {
                "role": t.role,
                "model": t.model,
                "down_gbps": t.down_gbps,
                "up_gbps": t.up_gbps,
                "down_ports": t.down_ports,
                "up_ports": t.up_ports,
                "oversubscription": t.oversubscription,
            }
            for t in design.sizing.tier_sizing
        ],
    }


def switch_models(design: Design) -> dict[str, str]:
    """The switch model of each tier ("" where the tier is absent; "a, b" if it mixes)."""
    found: dict[str, set[str]] = {"leaf": set(), "spine": set(), "core": set()}
    for sw in design.switches:
        found[("leaf", "spine", "core")[sw.tier - 1]].add(sw.model)
    return {tier: ", ".join(sorted(models)) for tier, models in found.items()}
