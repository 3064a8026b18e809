"""`railplan analyze`: route a traffic pattern, share links max-min, report per-pair bandwidth."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import (
    MAX_SEED,
    JsonFlag,
    design_command,
    out_file,
    print_json,
    write_atomic,
)

#: pair tests a flag may ask for: partners per node (the largest design's nodes) and sampled
#: node pairs (the pairs of 4,096 nodes), so a flag cannot ask for more work than the design holds
MAX_PARTNERS = 65_536
MAX_SAMPLE = 4096 * 4095 // 2

if TYPE_CHECKING:
    from rich.table import Table

    from railplan.pipeline.source import DesignSource


def _rate(data: dict[str, Any]) -> str:
    rate = data["line_rate_gbps"]
    if data.get("bonding") == "bond" and rate["nic"] != rate["port"]:
        return f"{rate['nic']:g}G NIC, {rate['nic'] / rate['port']:g} x {rate['port']:g}G bonded"
    return f"{rate['nic']:g}G NIC port"


def _figures(f: dict[str, Any]) -> str:
    pace = f["collective_fraction"]
    text = f"full {f['fraction_full']:.1%}, mean {f['mean']:.2f}, min {f['min']:.2f}"
    return text + ("" if pace is None else f", pace {pace:.2f}")


def _failure_rows(table: "Table", fail: dict[str, Any]) -> None:
    table.add_row(
        "failed",
        f"{', '.join(fail['failed'])}: {fail['links_removed']} link(s), "
        f"{fail['switches_removed']} switch(es), {fail['nic_ports_down']} NIC port(s) down",
    )
    table.add_row("before", _figures(fail["before"]))
    table.add_row("after", _figures(fail["after"]))
    table.add_row(
        "pairs",
        f"{fail['pairs_slower']} slower, {fail['pairs_faster']} faster, "
        f"{fail['pairs_disconnected']} disconnected",
    )
    if fail["cut_off_nodes"]:
        shown = ", ".join(fail["cut_off_node_list"][:8])
        more = fail["cut_off_nodes"] - min(8, len(fail["cut_off_node_list"]))
        table.add_row(
            "cut off", f"{fail['cut_off_nodes']} node(s): {shown}" + (f" +{more}" if more else "")
        )


def report_table(data: dict[str, Any]) -> "Table":
    from rich.table import Table

    bw = data["bandwidth"]
    table = Table(
        title=f"{data['design']}: {data['pattern']} under {data['routing']} routing",
        show_header=False,
        title_justify="left",
    )
    table.add_column("what", style="bold")
    table.add_column("value")
    table.add_row("flows", f"{data['flows']} ({data['flows_per_nic']} per NIC connection)")
    table.add_row("node pairs", str(data["pairs"]))
    table.add_row("at full rate", f"{data['fraction_full']:.1%} of pairs (>= 0.99 of line rate)")
    table.add_row("at half or less", f"{data['fraction_half_or_less']:.1%} of pairs")
    table.add_row(
        "per-pair bandwidth",
        f"min {bw['min']:.2f}  p10 {bw['p10']:.2f}  median {bw['median']:.2f}  "
        f"mean {bw['mean']:.2f}  max {bw['max']:.2f}  (fraction of the {_rate(data)})",
    )
    if data.get("collective_fraction") is not None:
        table.add_row("collective pace", f"{data['collective_fraction']:.2f} (slowest flow)")
    if data.get("disconnected_pairs"):
        table.add_row("disconnected", f"{data['disconnected_pairs']} pair(s) (no route)")
    slow = data.get("slow_nodes")
    if slow:
        table.add_row(
            "slow nodes",
            f"{slow['every_partner']} slow with every partner (node fault?), "
            f"{slow['some_partners']} slow with some (fabric collisions)",
        )
    if data.get("failure"):
        _failure_rows(table, data["failure"])
    for i, hot in enumerate(data["hottest_links"][:5]):
        table.add_row("hottest links" if i == 0 else "", _hot_text(hot))
    for note in data.get("notes", []):
        table.add_row("note", note)
    return table


def _hot_text(hot: dict[str, Any]) -> str:
    parts = [f"{k}={v}" for k, v in hot.items() if k != "flows_on_link" and not isinstance(v, list)]
    return ", ".join(parts)


@app.command("analyze")
@design_command
def analyze_cmd(
    src: "DesignSource",
    pattern: Annotated[
        str, typer.Option("--pattern", "-p", help="pairs, ring, alltoall, pd or permutation.")
    ] = "pairs",
    routing: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--routing", help="ecmp, dmodk, deterministic or adaptive (default: the design's)."
        ),
    ] = None,
    flows_per_nic: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--flows-per-nic",
            metavar="N",
            help="Flows (QPs) per NIC connection = channels x QPs, 1 to 64 (default: one per "
            "NIC port, 2 on a bonded dual-port NIC).",
            min=1,
            max=64,
        ),
    ] = None,
    seed: Annotated[
        int,
        typer.Option(
            "--seed",
            metavar="N",
            help="Seed for QP numbers, samples, permutations.",
            min=0,
            max=MAX_SEED,
        ),
    ] = 0,
    partners: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--partners",
            metavar="K",
            help="pairs: test each node against K partners.",
            min=1,
            max=MAX_PARTNERS,
        ),
    ] = None,
    sample: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--sample",
            metavar="M",
            help="pairs: test a random sample of this many node pairs.",
            min=1,
            max=MAX_SAMPLE,
        ),
    ] = None,
    placement: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--placement",
            help="pd: spread (default; prefill and decode share every leaf group), split or "
            "interleave.",
        ),
    ] = None,
    mapping: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--mapping", help="pd: all (every prefill to every decode, default) or one."),
    ] = None,
    fail: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--fail",
            metavar="ID",
            help="Take this link or switch out first (repeatable) and report what the "
            "pattern loses.",
        ),
    ] = None,
    hash_model: Annotated[
        str, typer.Option("--hash", help="ECMP hash: crc32 (5-tuple) or random (uniform).")
    ] = "crc32",
    json_out: JsonFlag = False,
    csv_out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--csv", help="Write one row per node pair to this CSV file."),
    ] = None,
) -> None:
    """Predict the bandwidth every node pair gets for a traffic pattern on a design."""
    from railplan.cli.progress import progress_bar
    from railplan.traffic.collisions import analyze, check_options
    from railplan.traffic.failures import what_if
    from railplan.traffic.flows import PatternError
    from railplan.traffic.routing import POLICIES, RoutingError

    out_file(csv_out, "--csv")
    if (placement or mapping) and pattern != "pd":
        raise PatternError("--placement and --mapping place prefill and decode: use --pattern pd")
    options: dict[str, Any] = {}
    for key, value in (("sample", sample), ("rule", placement), ("mapping", mapping)):
        if value is not None:
            options[key] = value
    check_options(pattern, hash_model, partners, options)  # bad flags refused before planning
    if routing is not None and routing not in POLICIES:
        raise RoutingError(f"routing {routing!r} is not a policy; use {', '.join(POLICIES)}")
    nodes = src.stated_node_count() if partners is not None else None
    if partners is not None and nodes is not None and not 1 <= partners <= nodes - 1:
        # known from the spec: refused before the planner (or the advisor) runs and speaks
        raise PatternError(f"partners: give 1..{nodes - 1} partners per node for {nodes} nodes")
    design = src.design()
    kwargs: dict[str, Any] = dict(
        routing=routing,
        flows_per_nic=flows_per_nic,
        seed=seed,
        partners=partners,
        hash=hash_model,
        **options,
    )
    with progress_bar(f"{pattern} on {design.name}") as progress:
        if fail:
            report = what_if(design, fail, pattern, **kwargs)
        else:
            report = analyze(design, pattern=pattern, progress=progress, **kwargs)
    data = report.to_json()
    data.pop("seconds", None)  # keep the output byte-identical run to run
    if csv_out is not None:
        from railplan.safe_text import to_csv

        rows = report.pair_rows()
        header = list(rows[0]) if rows else ["node_a", "node_b"]
        write_atomic(csv_out, to_csv(header, [[row[k] for k in header] for row in rows]))
    if json_out:
        print_json(data)
    else:
        from railplan.cli.show import print_table

        print_table(report_table(data))
