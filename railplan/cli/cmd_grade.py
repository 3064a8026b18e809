"""`railplan grade`: grade acceptance-test results against the plan and name the fault."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, NamesPath, ReportPath, design_command, emit_report
from railplan.errors import FieldInputError

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource


@app.command("grade")
@design_command
def grade_cmd(
    src: "DesignSource",
    results: Annotated[
        Path,
        typer.Option("--results", "-r", help="Folder of test outputs (as the scripts write it)."),
    ],
    expectations: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--expectations", help="Expectations JSON/YAML (default: the plan's own)."),
    ] = None,
    names: NamesPath = None,
    devices: Annotated[
        Optional[str],  # noqa: UP045 - typer needs a runtime type
        typer.Option(
            "--devices",
            help="RDMA device per node port, as given to testplan --devices (default mlx5_<port>).",
        ),
    ] = None,
    json_out: JsonFlag = False,
    report: ReportPath = None,
) -> None:
    """Grade test results against the plan's thresholds; exit 1 when a test fails."""
    from railplan.cli.common import device_names
    from railplan.cli.show import print_table, rows_table
    from railplan.field.common import bounded_captures
    from railplan.field.grade import grade, load_expectations
    from railplan.safe_text import visible

    rdma_devices = device_names(devices)
    design = src.built().design
    wanted = load_expectations(expectations) if expectations is not None else None
    with bounded_captures(2 * len(design.links) + len(design.nodes) + len(design.switches)):
        result = grade(design, wanted, results, names=names, devices=rdma_devices)
    if result.results and all(r.status == "missing" for r in result.results):
        others = f" ({len(result.unmatched)} other file(s))" if result.unmatched else ""
        raise FieldInputError(
            f"--results {results}: holds no output of this design's test plan{others}; give the "
            "results/ folder the generated scripts (scripts/run_all.sh) write"
        )
    emit_report(result, json_out, report)
    if not json_out:
        rows = [row for row in result.summary_rows() if row[-1] != "pass"]
        print_table(rows_table(f"{design.name}: graded results", result.summary_header, rows))
        counts = ", ".join(f"{n} {status}" for status, n in result.counts().items() if n)
        typer.echo(visible(f"{len(result.results)} checks: {counts}"))
        for rail in result.rails:
            typer.echo(visible(f"rail fault: {rail.message}"))
        d = result.diagnosis
        for fault in d.node_faults:
            typer.echo(visible(f"node fault: {fault.message}"))
        for suspect in d.suspects[:10]:
            typer.echo(
                visible(
                    f"fabric suspect: {suspect.label} ({suspect.a} - {suspect.b}), "
                    f"on {suspect.slow_pairs} slow pair(s)"
                )
            )
        if len(d.suspects) > 10:
            typer.echo(f"... {len(d.suspects) - 10} more fabric suspects (see --json or --report)")
        for test in d.next_tests:
            typer.echo(visible(f"next test: {test}"))
    if not result.ok:
        raise typer.Exit(1)
