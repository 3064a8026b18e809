"""`railplan plan`: plan a fabric, lay it out and bill it; print the summary, write design.json."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import OBJECTIVES, JsonFlag, design_command, out_folder, print_json
from railplan.errors import SpecError
from railplan.render.atomic import write_set

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource


@app.command("plan")
@design_command
def plan_cmd(
    src: "DesignSource",
    json_out: JsonFlag = False,
    out_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("-o", "--out", help="Write design.json and spec.yaml into this directory."),
    ] = None,
    layout: Annotated[
        bool,
        typer.Option(
            "--layout/--no-layout",
            help="Place switches, cable every link and bill it (--no-layout: topology only).",
        ),
    ] = True,
    objective: Annotated[
        str, typer.Option("--objective", help="What CP-SAT minimises: cost, power or length.")
    ] = "cost",
    time_limit: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(
            "--time-limit",
            help="CP-SAT placement budget in deterministic seconds (machine-independent work "
            "units, not wall time; default: the spec's layout.placement.deterministic_time_s).",
        ),
    ] = None,
    naive: Annotated[
        bool,
        typer.Option("--naive", help="First-fit switch placement from the row end, no solver."),
    ] = False,
) -> None:
    """Plan the fabric for a cluster: switch and link counts, and (with layout) its bill."""
    if objective not in OBJECTIVES:
        raise SpecError(f"--objective {objective!r}: use one of {', '.join(OBJECTIVES)}")
    out_folder(out_dir, "-o")
    from railplan.cli.finish_beside import finished_beside
    from railplan.cli.progress import stages
    from railplan.design.io import design_json_chunks, release_beside, rows_text_beside
    from railplan.pipeline.build import plan_json
    from railplan.spec import spec_to_yaml

    try:
        with stages("plan") as say:
            built = src.built(
                layout=layout,
                objective=objective,
                time_limit_s=time_limit,
                progress=say,
                method="naive" if naive else "cp-sat",
                deferred=out_dir is not None,
                # design.json's links are known before the layout: a child encodes them meanwhile
                on_topology=(lambda topo: rows_text_beside(topo.links)) if out_dir else None,
            )
            design = built.design
            if out_dir is None:
                summary = plan_json(built)
            else:
                if say is not None:
                    say("checking and billing the design while design.json is written")
                # design.json is written a block of rows at a time by a thread while the next
                # block is encoded (``atomic.write_set`` of pieces): never one 185 MB string;
                # meanwhile a child checks and bills the design, and nothing moves into place
                # before its check passed
                bill = finished_beside(built)
                files = {
                    "design.json": design_json_chunks(design),
                    "spec.yaml": spec_to_yaml(src.spec()),
                }
                write_set(out_dir, files, before_commit=bill)
                summary = plan_json(built, bill())  # the answer the commit waited for
    finally:  # a child still encoding links no design.json took is waited for
        release_beside()
    if json_out:
        print_json(summary)
    else:
        from railplan.cli.show import plan_table, print_table

        print_table(plan_table(summary))
    if out_dir is not None:
        typer.echo(f"wrote {out_dir / 'design.json'} and {out_dir / 'spec.yaml'}", err=True)
