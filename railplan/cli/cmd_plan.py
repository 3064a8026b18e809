"""`railplan plan`: plan a fabric, print its summary, optionally write design.json and spec.yaml."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import DesignSource, design_command, print_json, write_atomic
from railplan.cli.show import plan_table, print_table
from railplan.model import design_to_json
from railplan.spec import spec_to_yaml
from railplan.summary import plan_summary


@app.command("plan")
@design_command
def plan_cmd(
    src: DesignSource,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print one JSON object on stdout.")
    ] = False,
    out_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("-o", "--out", help="Write design.json and spec.yaml into this directory."),
    ] = None,
) -> None:
    """Plan the fabric for a cluster and show switch and link counts."""
    design = src.design()
    summary = plan_summary(design)
    if out_dir is not None:
        write_atomic(out_dir / "design.json", design_to_json(design))
        write_atomic(out_dir / "spec.yaml", spec_to_yaml(src.spec()))
    if json_out:
        print_json(summary)
    else:
        print_table(plan_table(summary))
        if out_dir is not None:
            typer.echo(f"wrote {out_dir / 'design.json'} and {out_dir / 'spec.yaml'}")
