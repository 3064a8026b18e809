"""`railplan diff A B`: what differs between two designs (switches, links, cables, ports, bill).

B may also be A as a capture shows it built (``railplan diff A --lldp ... | --ibnetdiscover ...``):
design files are re-derived from their spec, so a hand-edited cable in a design.json is refused;
the fabric itself is the legitimate second design of a change review.
"""

from pathlib import Path
from typing import Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, NamesPath, print_json
from railplan.errors import FieldInputError


@app.command("diff")
def diff_cmd(
    a: Annotated[Path, typer.Argument(help="Design A: a spec .yaml or a design .json.")],
    b: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Argument(help="Design B: a spec .yaml or a design .json (or give a capture)."),
    ] = None,
    json_out: JsonFlag = False,
    catalog_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--catalog", help="A folder of catalog YAML that extends the bundled one."),
    ] = None,
    lldp: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--lldp",
            metavar="PATH",
            help="B = A as this LLDP capture shows it cabled: a file or folder (repeatable).",
        ),
    ] = None,
    ibnetdiscover: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--ibnetdiscover", help="B = A as this ibnetdiscover output shows it."),
    ] = None,
    iblinkinfo: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--iblinkinfo", help="B = A as this iblinkinfo output shows it."),
    ] = None,
    names: NamesPath = None,
) -> None:
    """Compare two designs link by link: what a change review reads; exit 1 when they differ."""
    from railplan.change.diff import diff
    from railplan.cli.show import print_table, rows_table
    from railplan.pipeline.source import DesignSource
    from railplan.render.change_report import diff_rows, diff_summary

    captured = bool(lldp) or ibnetdiscover is not None or iblinkinfo is not None
    if (b is None) == (not captured):
        raise FieldInputError(
            "diff: give design B, or a capture of A (--lldp, --ibnetdiscover or --iblinkinfo) "
            "to compare A with itself as built, not both"
        )
    src_a = DesignSource(a, [], catalog_dir)
    built_a = src_a.built()
    if b is not None:
        built_b = DesignSource(b, [], catalog_dir, _catalog=src_a.catalog()).built()
        design_b, bom_b = built_b.design, built_b.bom
    else:
        from railplan.field.capture_design import design_as_captured
        from railplan.field.common import bounded_captures
        from railplan.field.drift import read_capture
        from railplan.field.names import NameMap

        design = built_a.design
        with bounded_captures(2 * len(design.links) + len(design.nodes) + len(design.switches)):
            capture = read_capture(
                design, NameMap.load(design, names), lldp or [], ibnetdiscover, iblinkinfo
            )
        design_b, bom_b = design_as_captured(design, capture), None
    # a capture shows ports, not parts: the bill is compared between two plans only
    bom_a = built_a.bom if bom_b is not None else None
    result = diff(built_a.design, design_b, src_a.catalog(), bom_a, bom_b)
    if json_out:
        print_json(result.to_json())
    else:
        rows = diff_rows(result)
        if rows:
            print_table(rows_table(f"{result.a} -> {result.b}", ["what", "which", "A", "B"], rows))
        typer.echo(diff_summary(result))
    if not result.identical:
        raise typer.Exit(1)
