"""`railplan diff A B`: what differs between two designs (switches, links, cables, ports, bill)."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, print_json


@app.command("diff")
def diff_cmd(
    a: Annotated[Path, typer.Argument(help="Design A: a spec .yaml or a design .json.")],
    b: Annotated[Path, typer.Argument(help="Design B: a spec .yaml or a design .json.")],
    json_out: JsonFlag = False,
    catalog_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--catalog", help="A folder of catalog YAML that extends the bundled one."),
    ] = None,
) -> None:
    """Compare two designs link by link: what a change review reads; exit 1 when they differ."""
    from railplan.change.diff import diff
    from railplan.cli.show import print_table, rows_table
    from railplan.pipeline.source import DesignSource
    from railplan.render.change_report import diff_rows, diff_summary

    src_a = DesignSource(a, [], catalog_dir)
    src_b = DesignSource(b, [], catalog_dir, _catalog=src_a.catalog())
    built_a, built_b = src_a.built(), src_b.built()
    result = diff(built_a.design, built_b.design, src_a.catalog(), built_a.bom, built_b.bom)
    if json_out:
        print_json(result.to_json())
    else:
        rows = diff_rows(result)
        if rows:
            print_table(rows_table(f"{result.a} -> {result.b}", ["what", "which", "A", "B"], rows))
        typer.echo(diff_summary(result))
    if not result.identical:
        raise typer.Exit(1)
