"""Rich tables for people: the plan summary and the compare table.

Every cell and title goes through ``railplan.safe_text.markup``: a name from a capture or a
design file is shown as written, never run as Rich markup or a terminal escape.
"""

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from railplan.safe_text import markup


def _add(table: Table, *cells: object) -> None:
    table.add_row(*(markup(c) for c in cells))


def plan_table(summary: dict[str, Any]) -> Table:
    s = summary
    table = Table(
        title=markup(f"{s['name']}: {s['topology']} fabric"),
        show_header=False,
        title_justify="left",
    )
    table.add_column("what", style="bold")
    table.add_column("value")
    spares = s.get("spare_nodes", 0)
    active = s["nodes"] - spares
    cluster = f"{s['gpus']} GPUs = {active} nodes x {s['gpus_per_node']} GPUs"
    _add(table, "cluster", cluster + (f", plus {spares} spare nodes" if spares else ""))
    _add(table, "NIC ports", f"{s['nic_ports_per_node']} per node at {s['port_speed_gbps']}G")
    _add(
        table,
        "fabric",
        f"{s['tiers']} tier(s), {s['planes']} plane(s), {s['oversubscription']} oversubscription",
    )
    tiers = s.get("tier_sizing") or []
    if tiers:
        for t in tiers:
            top = t["role"] == ("spine" if s["tiers"] == 2 else "core")
            up = f", {t['up_ports']} x {t['up_gbps']}G " if t["up_ports"] else ""
            up += ("held for a core tier" if top else "up") if up else ""
            _add(
                table,
                t["role"],
                f"{t['model']}: {t['down_ports']} x {t['down_gbps']}G down{up}, "
                f"{t['oversubscription']}",
            )
    else:
        _add(
            table, "switch", f"{s['switch_model']} ({s['radix']} ports at {s['port_speed_gbps']}G)"
        )
    sw = s["switches"]
    _add(
        table,
        "switches",
        f"{sw['total']} total: {sw['leaf']} leaf, {sw['spine']} spine, {sw['core']} core "
        f"(lower bound {s['lower_bound_switches']})",
    )
    ln = s["links"]
    parts = [f"{ln['node_leaf']} node-leaf"]
    parts += [
        f"{ln[k]} {k.replace('_', '-')}"
        for k in ("leaf_spine", "spine_core", "leaf_leaf", "device_leaf")
        if ln.get(k)
    ]
    _add(table, "links", ", ".join(parts))
    if s.get("scalable_units"):
        _add(table, "scalable units", f"{s['scalable_units']} of {s['su_nodes']} nodes")
    if s.get("pods"):
        _add(table, "pods", str(s["pods"]))
    if s.get("nvlink_domains"):
        dom = s["nvlink_domains"]
        _add(
            table,
            "NVLink domains",
            f"{dom['domains']} of {dom['nodes_per_domain']} nodes, one rack each",
        )
    if s.get("spine_groups"):
        _add(table, "spine groups", f"{s['spine_groups']} per plane, by rail")
    _add(table, "routing", s["routing"])
    totals = s.get("totals")
    if totals:
        _add(
            table,
            "bill",
            f"${totals['cost_usd']:,.0f}, {totals['power_w'] / 1000:,.1f} kW, "
            f"{totals['transceivers']} transceivers, {totals['cables']} cables",
        )
    return table


def print_table(table: Table) -> None:
    Console(soft_wrap=False, emoji=False).print(table)  # no :code: from a name


def rows_table(title: str, header: Sequence[str], rows: Sequence[Sequence[str]]) -> Table:
    table = Table(title=markup(title), title_justify="left")
    for column in header:
        table.add_column(markup(column))
    for row in rows:
        _add(table, *row)
    return table
