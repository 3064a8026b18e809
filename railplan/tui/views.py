"""Text for the result panes, formatted from library results (rich text; no textual, no math)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.table import Table
from rich.text import Text

from railplan.tui.compute import Outcome
from railplan.tui.formspec import form_message

CHEAPEST_STYLE = "bold green"


def total_line(summary: dict[str, Any]) -> str:
    """``48 total (lower bound 48)``."""
    return f"{summary['switches']['total']} total (lower bound {summary['lower_bound_switches']})"


def tiers_line(summary: dict[str, Any]) -> str:
    """Switches per tier: ``leaf 32, spine 16, core 0``."""
    sw = summary["switches"]
    return f"leaf {sw['leaf']}, spine {sw['spine']}, core {sw['core']}"


def links_line(summary: dict[str, Any]) -> str:
    ln = summary["links"]
    parts = [f"{ln['node_leaf']} node-leaf"]
    parts += [
        f"{ln[k]} {k.replace('_', '-')}" for k in ("leaf_spine", "spine_core", "leaf_leaf") if ln[k]
    ]
    return ", ".join(parts)


def money(value: Any) -> str:
    return f"${float(value):,.0f}" if value is not None else "-"


def short_money(value: Any) -> str:
    if value is None:
        return "-"
    v = float(value)
    return f"${v / 1e6:.2f}M" if v >= 1e5 else f"${v / 1e3:.0f}k"


def kilowatts(value: Any) -> str:
    return f"{float(value) / 1000:,.1f} kW" if value is not None else "-"


def bill_rows(totals: dict[str, Any] | None, placement: str = "") -> list[tuple[str, str]]:
    """BOM totals: cost (and the rack layout it is on), power and part counts."""
    if not totals:
        return []
    where = f" ({placement} placement)" if placement else ""
    rows = [("cost", money(totals.get("cost_usd")) + where)]
    power = kilowatts(totals.get("power_w"))
    if totals.get("power_max_w") is not None:
        power += f" typical, {kilowatts(totals['power_max_w'])} max"
    rows.append(("power", power))
    parts = [
        f"{totals[k]:,} {k.replace('_', ' ')}"
        for k in ("switches", "transceivers", "cables", "rack_units")
        if isinstance(totals.get(k), int)
    ]
    if parts:
        rows.append(("parts", ", ".join(parts)))
    return rows


def summary_table(out: Outcome) -> Table:
    """The summary pane: cluster, fabric, switch counts per tier, links, bill, warnings."""
    table = Table(show_header=False, box=None, padding=(0, 1), expand=True)
    table.add_column("what", style="bold", no_wrap=True, width=10)
    table.add_column("value", ratio=1)
    s = out.summary
    if s is None:
        table.add_row("", Text("no design yet", style="dim"))
        return table
    if out.compare_mode:
        mark = " (recommended)" if s["topology"] == out.recommended else ""
        table.add_row("showing", Text(f"your design: {s['topology']}{mark}", style=CHEAPEST_STYLE))
    table.add_row("cluster", f"{s['gpus']} GPUs = {s['nodes']} nodes x {s['gpus_per_node']}")
    table.add_row("NIC ports", f"{s['nic_ports_per_node']}/node at {s['port_speed_gbps']}G")
    table.add_row(
        "fabric",
        f"{s['topology']}, {s['tiers']} tier(s), {s['planes']} plane(s), {s['oversubscription']}",
    )
    table.add_row("switch", f"{s['switch_model']} ({s['radix']} x {s['port_speed_gbps']}G)")
    table.add_row("switches", Text(total_line(s), style="bold"))
    table.add_row("per tier", Text(tiers_line(s), style="bold"))
    table.add_row("links", links_line(s))
    if s.get("scalable_units"):
        pods = f", {s['pods']} pod(s)" if s.get("pods") else ""
        table.add_row("SUs", f"{s['scalable_units']} of {s['su_nodes']} nodes{pods}")
    table.add_row("routing", str(s["routing"]))
    for label, text in bill_rows(out.totals, out.shown.placement if out.shown else ""):
        table.add_row(label, text)
    if out.totals is None and not out.done:
        table.add_row("bill", Text("computing...", style="dim"))
    for label, text in traffic_lines(out.collisions):
        table.add_row(label, text)
    if out.collisions is None and not out.done:
        table.add_row("traffic", Text("analyzing...", style="dim"))
    for i, note in enumerate(out.warnings):
        table.add_row("warnings" if i == 0 else "", Text(note, style="yellow"))
    return table


def _traffic(figures: dict[str, Any] | None, test: str, key: str) -> float | None:
    part = (figures or {}).get(test)
    value = part.get(key) if isinstance(part, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def collision_cells(figures: dict[str, Any] | None) -> tuple[str, str]:
    """Pairs at full rate and all-to-all pace, as ``railplan compare`` shows them."""
    full = _traffic(figures, "pairs", "fraction_full")
    pace = _traffic(figures, "alltoall", "collective_fraction")
    return (
        "-" if full is None else f"{full:.0%}",
        "-" if pace is None else f"{pace:.2f}",
    )


def traffic_lines(figures: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The collision summary of one design: pair tests and all-to-all."""
    rows = []
    full = _traffic(figures, "pairs", "fraction_full")
    if full is not None:
        half = _traffic(figures, "pairs", "fraction_half_or_less") or 0.0
        mean = _traffic(figures, "pairs", "mean") or 0.0
        rows.append(
            ("pair tests", f"{full:.0%} at full rate, {half:.0%} at half or less, mean {mean:.2f}")
        )
    pace = _traffic(figures, "alltoall", "collective_fraction")
    if pace is not None:
        nodes = (figures or {}).get("alltoall", {}).get("nodes")
        rows.append(("all-to-all", f"pace {pace:.2f} of line rate ({nodes} nodes)"))
    return rows


def _get(*keys: str) -> Callable[[dict[str, Any]], Any]:
    def get(summary: dict[str, Any]) -> Any:
        value: Any = summary
        for key in keys:
            value = value[key]
        return value

    return get


#: the compare table's rows (label, how to read it from a family's figures), as the CLI's
SUMMARY_ROWS: tuple[tuple[str, Callable[[dict[str, Any]], Any]], ...] = (
    ("switch model", _get("switch_model")),
    ("tiers", _get("tiers")),
    ("leaf", _get("switches", "leaf")),
    ("spine", _get("switches", "spine")),
    ("core", _get("switches", "core")),
    ("switches", _get("switches", "total")),
    ("lower bound", _get("lower_bound_switches")),
    ("NIC links", _get("links", "node_leaf")),
)
COMPARE_ROWS = (
    *(label for label, _ in SUMMARY_ROWS),
    "switch links",
    "max hops",
    "cost",
    "power",
    "placement",
    "pairs @ full",
    "a2a pace",
)


def compare_table(out: Outcome) -> tuple[list[tuple[str, Text]], list[list[Text]]]:
    """Families as columns (keyed by family), figures as rows; the recommended family (the
    cheapest meeting the default requirements; the cheapest until traffic is in) is marked,
    highlighted and comes first, so a narrow terminal (80 columns beside the form) shows it."""
    cheapest = out.recommended or out.cheapest
    columns = [("what", Text(""))]
    cells: list[list[str]] = [[label] for label in COMPARE_ROWS]
    for row in sorted(out.rows, key=lambda r: r.family != cheapest):
        mark = "* " if row.family == cheapest else ""
        columns.append((row.family, Text(mark + row.family)))
        if row.summary is None:
            values = ["not feasible"] + ["-"] * (len(COMPARE_ROWS) - 1)
        else:
            totals = row.totals or {}
            pair, a2a = collision_cells(row.collisions)
            values = [str(get(row.summary)) for _, get in SUMMARY_ROWS] + [
                "-" if row.inter_switch_links is None else str(row.inter_switch_links),
                "-" if row.max_hops is None else str(row.max_hops),
                short_money(totals.get("cost_usd")),
                kilowatts(totals.get("power_w")) if totals else "-",
                row.placement or "-",
                pair,
                a2a,
            ]
        for line, value in zip(cells, values, strict=True):
            line.append(value)
    styled = []
    for line in cells:
        out_line = [Text(line[0], style="bold")]
        for (family, _), value in zip(columns[1:], line[1:], strict=True):
            style = CHEAPEST_STYLE if family == cheapest else ""
            if value == "not feasible":
                style = "red"
            out_line.append(Text(value, style=style, justify="right"))
        styled.append(out_line)
    columns = [
        (key, Text(str(label), style=CHEAPEST_STYLE if key == cheapest else "bold"))
        for key, label in columns
    ]
    return columns, styled


def status_text(out: Outcome | None, pending: bool, message: str = "") -> Text:
    """The line under the results: the error in the CLI's words, or what is running."""
    error = message or (out.error if out is not None else "")
    if error:
        return Text(form_message(error), style="bold red")
    if pending:
        return Text("planning...", style="dim")
    if out is not None and not out.done:
        return Text(f"{out.stage}...", style="dim")
    return Text("ready", style="dim")
