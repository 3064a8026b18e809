"""`railplan asbuilt`: compare LLDP / InfiniBand discovery dumps with the planned cabling."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, NamesPath, ReportPath, design_command, emit_report
from railplan.errors import SpecError

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource


@app.command("asbuilt")
@design_command
def asbuilt_cmd(
    src: "DesignSource",
    lldp: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--lldp", metavar="PATH", help="LLDP output: a file or a folder of files (repeatable)."
        ),
    ] = None,
    ibnetdiscover: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--ibnetdiscover", help="ibnetdiscover output file."),
    ] = None,
    iblinkinfo: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--iblinkinfo", help="iblinkinfo output file."),
    ] = None,
    names: NamesPath = None,
    json_out: JsonFlag = False,
    report: ReportPath = None,
    since: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--since",
            metavar="OLD_CAPTURE",
            help="An earlier capture's LLDP file or folder (repeatable): also report what "
            "changed since (moved, swapped, added, removed cables).",
        ),
    ] = None,
    since_ibnetdiscover: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--since-ibnetdiscover", help="An earlier capture's ibnetdiscover output."),
    ] = None,
    min_verified: Annotated[
        float,
        typer.Option(
            "--min-verified",
            metavar="PERCENT",
            help="Exit 1 when the captures cover fewer than PERCENT of the planned links "
            "(default 100: a link no capture covers is a failure).",
        ),
    ] = 100.0,
) -> None:
    """Check the as-built cabling against the plan; exit 1 when anything needs fixing or the
    captures verify fewer planned links than --min-verified."""
    from railplan.cli.show import print_table, rows_table
    from railplan.field.asbuilt import check_asbuilt
    from railplan.field.common import bounded_captures
    from railplan.safe_text import visible

    if not 0 <= min_verified <= 100:  # also refuses nan
        raise SpecError(f"--min-verified {min_verified:g}: give a percentage from 0 to 100")
    design = src.built().design
    with bounded_captures(2 * len(design.links) + len(design.nodes) + len(design.switches)):
        result = check_asbuilt(
            design,
            lldp=lldp or [],
            ibnetdiscover=ibnetdiscover,
            iblinkinfo=iblinkinfo,
            names=names,
        )
        drift = None
        if since or since_ibnetdiscover:
            from railplan.cli.drift_out import since_drift

            drift = since_drift(
                design, names, lldp or [], ibnetdiscover, iblinkinfo, since, since_ibnetdiscover
            )
    emit_report(result, json_out and drift is None, report)
    if drift is not None:
        from railplan.cli.drift_out import show_drift

        show_drift(result, drift, json_out, report)
    if not json_out:
        rows = result.summary_rows()
        print_table(rows_table(f"{design.name}: as-built check", result.summary_header, rows))
        typer.echo(visible(result.summary_line()))
        for warning in result.warnings:
            typer.echo(visible(f"warning: {warning}"), err=True)
        if result.dropped:
            typer.echo(visible(f"warning: {result.dropped}"), err=True)
    short = result.coverage_failure(min_verified / 100)
    if short:
        typer.echo(visible(f"asbuilt: {short}"), err=True)
    if not result.ok or short:
        raise typer.Exit(1)
