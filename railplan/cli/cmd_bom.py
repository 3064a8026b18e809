"""`railplan bom`: the bill purchasing opens (.xlsx, .csv or .json) with spares, TCO, sources."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from railplan.cli.app import app
from railplan.cli.common import design_command, out_file
from railplan.errors import SpecError
from railplan.render.atomic import write_atomic

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource

SUFFIXES = (".xlsx", ".csv", ".json")


@app.command("bom")
@design_command
def bom_cmd(
    src: "DesignSource",
    out: Annotated[
        Path,
        typer.Option(
            "-o",
            "--out",
            help="Bill file: .xlsx (sheets bill, spares, tco, sources), .csv (the bill sheet) "
            "or .json (every table).",
        ),
    ],
) -> None:
    """Write the bill of materials with price ranges, spares, TCO and every price's source."""
    suffix = out.suffix.lower()
    if suffix not in SUFFIXES:
        raise SpecError(f"-o {out}: name a .xlsx, .csv or .json file")
    out_file(out, "-o")
    from railplan.render import bom_files

    say = (lambda msg: typer.echo(msg, err=True)) if sys.stderr.isatty() else None
    built = src.built(progress=say)
    if built.bom is None:
        raise SpecError("the design has no bill; lay it out first (railplan plan)")
    tables = bom_files.tables(built.bom, src.catalog(), src.spec())
    data: str | bytes = bom_files.FORMATS[suffix](tables)  # type: ignore[assignment]
    write_atomic(out, data)
    typer.echo(
        f"wrote {out}: {len(tables.bill)} bill lines, {len(tables.spares)} spares lines",
        err=True,
    )
