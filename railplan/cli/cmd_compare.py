"""`railplan compare`: every topology family for the same cluster, side by side."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, design_command, out_file, print_json

if TYPE_CHECKING:
    from rich.table import Table

    from railplan.pipeline.source import DesignSource


def compare_table(designs: list[dict[str, Any]]) -> "Table":
    from rich.table import Table

    table = Table(title="Topology comparison", title_justify="left")
    table.add_column("", style="bold")
    for d in designs:
        table.add_column(d["topology"], justify="right")
    rows: list[tuple[str, Any]] = [
        ("switch model", lambda d: d["switch_model"]),
        ("tiers", lambda d: d["tiers"]),
        ("leaf switches", lambda d: d["switches"]["leaf"]),
        ("spine switches", lambda d: d["switches"]["spine"]),
        ("core switches", lambda d: d["switches"]["core"]),
        ("switches total", lambda d: d["switches"]["total"]),
        ("lower bound", lambda d: d["lower_bound_switches"]),
        ("NIC links", lambda d: d["links"]["node_leaf"]),
        ("switch-switch links", lambda d: d["inter_switch_links"]),
        ("max switch hops", lambda d: d["max_hops"]),
        ("routing", lambda d: d["routing"]),
    ]
    if designs and "totals" in designs[0]:
        rows += [
            ("transceivers", lambda d: d["totals"]["transceivers"]),
            ("cables", lambda d: d["totals"]["cables"]),
            ("cost (USD)", lambda d: f"{d['totals']['cost_usd']:,.0f}"),
            ("cost range (M)", _cost_range),
            ("TCO (M)", _tco),
            ("power typical (kW)", lambda d: f"{d['totals']['power_w'] / 1000:,.1f}"),
        ]
    if designs and "vs_roft" in designs[-1]:
        rows += [
            ("switches vs roft", lambda d: _delta(d, "switches")),
            ("transceivers vs roft", lambda d: _delta(d, "transceivers")),
            ("cost vs roft (USD)", lambda d: _delta(d, "cost_usd")),
            ("cheaper than roft", _p_cheaper),
        ]
    if designs and "traffic" in designs[0]:
        rows += [
            ("NIC", _nic),
            ("pairs at full rate", lambda d: _pct(d, "pairs", "fraction_full")),
            ("pairs at half or less", lambda d: _pct(d, "pairs", "fraction_half_or_less")),
            ("pair mean bandwidth", lambda d: _num(d, "pairs", "mean")),
            ("all-to-all pace", lambda d: _num(d, "alltoall", "collective_fraction")),
            ("PD pace", lambda d: _num(d, "pd", "collective_fraction")),
        ]
        if "worst_failure" in designs[0]["traffic"]:
            rows.append(("a2a, worst failure", _worst))
    for label, get in rows:
        table.add_row(label, *(str(get(d)) for d in designs))
    return table


def _delta(d: dict[str, Any], key: str) -> str:
    v = d.get("vs_roft", {}).get(key)
    return "-" if v is None else f"{v:+,.0f}"


def _cost_range(d: dict[str, Any]) -> str:
    c = d.get("cost_usd")
    return "-" if c is None else f"{c['low'] / 1e6:.2f}-{c['high'] / 1e6:.2f}"


def _tco(d: dict[str, Any]) -> str:
    t = d.get("tco_usd")
    return "-" if t is None else f"{t['total']['typical'] / 1e6:.2f}/{t['years']}y"


def _p_cheaper(d: dict[str, Any]) -> str:
    p = d.get("vs_roft", {}).get("p_cheaper")
    return "-" if p is None or d["topology"] == "roft" else f"{p:.0%}"


def sensitivity_lines(designs: list[dict[str, Any]]) -> list[str]:
    """One line per family against ROFT: its saving's 5-95% range over the price draws and
    the prices that range moves with most."""
    out = []
    for d in designs:
        vs = d.get("vs_roft", {})
        r = vs.get("saving_range")
        if d["topology"] == "roft" or r is None:
            continue
        line = (
            f"{d['topology']} vs roft: cheaper in {vs['p_cheaper']:.0%} of price draws, saving "
            f"USD {r['low'] / 1e6:+.2f} to {r['high'] / 1e6:+.2f} M (5th-95th percentile)"
        )
        parts = [p for p in vs.get("sensitive_parts", []) if p["variance_share"] >= 0.01]
        if parts:
            named = ", ".join(f"{p['part']} ({p['variance_share']:.0%})" for p in parts)
            line += f"; it moves most with the price of {named}"
        out.append(line)
    return out


def _nic(d: dict[str, Any]) -> str:
    t = d["traffic"]
    rate = t["line_rate_gbps"]
    if t["bonding"] == "bond" and rate["nic"] != rate["port"]:
        return f"{rate['nic']:g}G bond"
    return f"{rate['nic']:g}G"


def _worst(d: dict[str, Any]) -> str:
    w = d["traffic"].get("worst_failure")
    return "-" if not w else f"{w['collective_fraction']:.2f}"


def failure_lines(designs: list[dict[str, Any]]) -> list[str]:
    """One line per family: which single failure the worst-failure row is."""
    out = []
    for d in designs:
        w = d.get("traffic", {}).get("worst_failure")
        if w:
            cut = f", cuts off {w['cut_off_nodes']} node(s)" if w["cut_off_nodes"] else ""
            out.append(
                f"{d['topology']}: worst single failure {w['failed']} ({w['what']}{cut}): "
                f"all-to-all pace {w['before']:.2f} -> {w['collective_fraction']:.2f}"
            )
    return out


def _pct(d: dict[str, Any], test: str, key: str) -> str:
    t = d["traffic"].get(test)
    return "-" if t is None else f"{t[key]:.0%}"


def _num(d: dict[str, Any], test: str, key: str) -> str:
    t = d["traffic"].get(test)
    return "-" if t is None else f"{t[key]:.2f}"


@app.command("compare")
@design_command
def compare_cmd(
    src: "DesignSource",
    json_out: JsonFlag = False,
    traffic: Annotated[
        bool,
        typer.Option("--traffic/--no-traffic", help="Add pair-test, all-to-all and PD figures."),
    ] = True,
    layout: Annotated[
        bool,
        typer.Option("--layout/--no-layout", help="Lay out, cable and bill every family."),
    ] = True,
    naive: Annotated[
        bool, typer.Option("--naive", help="Bill on first-fit switch placement (no solver).")
    ] = False,
    failures: Annotated[
        bool,
        typer.Option(
            "--failures",
            help="Add the all-to-all pace after the worst single switch or link failure.",
        ),
    ] = False,
    chart: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs a runtime type
        typer.Option(
            "--chart",
            help="Also draw cost, power and traffic per family here (.svg or .pdf; .png with "
            "rlPyCairo installed).",
        ),
    ] = None,
) -> None:
    """Plan every topology family for the same cluster and compare them."""
    from railplan.errors import SpecError
    from railplan.pipeline.compare import compare, compare_json
    from railplan.render.drawing_files import check_format

    chart_kind = check_format(chart, "--chart") if chart is not None else ""
    out_file(chart, "--chart")

    if any(o.startswith("fabric.topology=") for o in src.overrides):
        raise SpecError(
            "--topology: compare plans every family (roft, matrix, fat-tree, rail-only) side by "
            "side; drop --topology (use railplan plan --topology X for one family)"
        )
    src.advisor = None  # compare plans every family; the spec's topology does not matter
    rows = compare(src.spec(), src.catalog(), layout=layout, method="naive" if naive else "cp-sat")
    result = compare_json(rows, traffic, failures, src.spec(), src.catalog())
    designs, infeasible = result["designs"], result["infeasible"]
    if chart is not None:
        from railplan.render.atomic import write_atomic
        from railplan.render.compare_chart import compare_chart
        from railplan.render.drawing_files import drawing_bytes

        write_atomic(chart, drawing_bytes(compare_chart(designs, infeasible), chart_kind))
        typer.echo(f"wrote {chart} (cost, power and traffic per family)", err=True)
    if json_out:
        print_json(result)
    else:
        if designs:
            from railplan.cli.show import print_table

            print_table(compare_table(designs))
            for line in failure_lines(designs) + sensitivity_lines(designs):
                typer.echo(line)
        for item in infeasible:
            typer.echo(f"{item['topology']}: not possible: {item['reason']}")
