"""`railplan tui [SPEC]`: the terminal UI over the same library calls as the other commands."""

from pathlib import Path
from typing import Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import note_overrides


@app.command("tui")
def tui_cmd(
    spec: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs a runtime type
        typer.Argument(
            help="A spec .yaml or a design .json to start from; omit it for a 1,024-GPU example.",
            show_default=False,
        ),
    ] = None,
    catalog_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--catalog",
            help="A folder of catalog YAML that extends and overrides the bundled one by id.",
        ),
    ] = None,
) -> None:
    """Capture a cluster, compare topologies and export the handouts in a terminal UI."""
    from railplan.catalog import load_catalog
    from railplan.tui.app import run  # textual loads only for this command
    from railplan.tui.exports import read_spec

    catalog = load_catalog(catalog_dir)
    note_overrides(catalog_dir)
    loaded = read_spec(spec) if spec is not None else None
    run(loaded, catalog, spec if spec is not None and spec.suffix.lower() != ".json" else None)
