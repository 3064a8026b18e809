"""`railplan sheets`: cabling sheets PDF (cover, topology, racks, cable tables, BOM) and labels."""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import design_command, out_file, out_folder, revision_option
from railplan.errors import SpecError
from railplan.render.atomic import write_atomic, write_set

if TYPE_CHECKING:
    from railplan.design import Design
    from railplan.pipeline.source import DesignSource
    from railplan.render.pdf_common import Progress

PAGE_SIZES = ("a4", "letter")
#: label stocks (railplan.render.pdf_labels.LABEL_GRIDS, read there only when printing; a test
#: keeps the two equal)
LABEL_STOCKS = ("avery-5160", "avery-l7159", "avery-l7654")


def _say(message: str) -> None:
    typer.echo(message, err=True)


def cabled_design(src: "DesignSource", naive: bool = False) -> "Design":
    """The source's design with racks and cables: a design.json as is, else laid out now."""
    if src.is_design_file() and not src.design().cables:
        _say(f"note: {src.source} has no cables; laying it out from its spec")
    from railplan.cli.progress import stages

    with stages("layout") as say:
        built = src.built(progress=say, method="naive" if naive else "cp-sat")
    report = built.placement
    if report is not None:
        _say(f"layout: {report.method}, {report.status}; {report.cables} cables")
    return built.design


def _stage(update: Callable[[int, int], None] | None) -> "Progress | None":
    """Adapt the CLI bar's ``(done, total)`` to the renderers' ``(stage, done, total)``."""
    if update is None:
        return None
    bar = update

    def report(_stage: str, done: int, total: int) -> None:
        bar(done, total)

    return report


@app.command("sheets")
@design_command
def sheets_cmd(
    src: "DesignSource",
    out_dir: Annotated[
        Path, typer.Option("-o", "--out", help="Directory for sheets.pdf and labels.pdf.")
    ] = Path("."),
    revision: Annotated[
        str, typer.Option("--revision", help="Revision printed on every page.")
    ] = "draft",
    page_size: Annotated[str, typer.Option("--page-size", help="a4 or letter.")] = "a4",
    labels: Annotated[
        str,
        typer.Option("--labels", help=f"Label stock: {', '.join(LABEL_STOCKS)}, or none."),
    ] = "avery-l7654",
    naive: Annotated[
        bool, typer.Option("--naive", help="Lay out with first-fit placement (no solver).")
    ] = False,
    design_out: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs a runtime type
        typer.Option("--design-out", help="Also write the cabled design.json here."),
    ] = None,
    figure: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs a runtime type
        typer.Option(
            "--figure",
            help="Also write the sheets' topology figure alone here (.svg or .pdf; .png with "
            "rlPyCairo installed).",
        ),
    ] = None,
) -> None:
    """Write the cabling sheets (sheets.pdf) and the cable end labels (labels.pdf)."""
    from railplan.render.drawing_files import check_format

    figure_kind = check_format(figure, "--figure") if figure is not None else ""
    out_file(figure, "--figure")
    if page_size not in PAGE_SIZES:
        raise SpecError(f"--page-size {page_size!r}: use a4 or letter")
    if labels != "none" and labels not in LABEL_STOCKS:
        raise SpecError(f"--labels {labels!r}: use one of {', '.join(LABEL_STOCKS)}, none")
    out_folder(out_dir, "-o")
    out_file(design_out, "--design-out")
    revision_option(revision)
    from railplan.cli.progress import progress_bar
    from railplan.physical.bom import bom as build_bom
    from railplan.render.pdf_sheets import render_labels, render_sheets
    from railplan.testplan import design_hash

    design = cabled_design(src, naive)
    if design_out is not None:
        from railplan.design import design_to_json

        write_atomic(design_out, design_to_json(design))
    digest = design_hash(design)
    labelled = None
    if labels != "none":  # drawn by a child on the other core while the sheets are drawn here
        from railplan.forked import in_child
        from railplan.render.sheet_rows import cable_rows

        cable_rows(design)  # made once, before the fork: the child and the sheets share them
        labelled = in_child(lambda: render_labels(design, labels, revision, digest))
    bom = build_bom(design, src.catalog())
    with progress_bar("sheets") as bar:
        pdf, pages = render_sheets(design, bom, revision, digest, page_size, _stage(bar))
    files = {"sheets.pdf": pdf}
    if labelled is not None:
        files["labels.pdf"], lpages = labelled()
    write_set(out_dir, files)
    _say(f"wrote {out_dir / 'sheets.pdf'} ({pages} pages, {len(design.cables):,} cables)")
    if labels != "none":
        _say(f"wrote {out_dir / 'labels.pdf'} ({lpages} pages of {labels})")
    if figure is not None:
        from railplan.render.drawing_files import drawing_bytes
        from railplan.render.pdf_topology import figure_drawing

        write_atomic(figure, drawing_bytes(figure_drawing(design), figure_kind))
        _say(f"wrote {figure} (topology figure, plane 0)")
