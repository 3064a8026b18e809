"""`railplan schema`: the JSON Schema of spec files, for editor completion."""

import json

import typer

from railplan.cli.app import app


@app.command("schema")
def schema_cmd(
    design: bool = typer.Option(
        False, "--design", help="The schema of a design.json instead of a spec file."
    ),
) -> None:
    """Print the JSON Schema of the spec file format (or, with --design, of design.json)."""
    if design:
        from railplan.design.validation import design_json_schema

        typer.echo(json.dumps(design_json_schema(), indent=2))
        return
    from railplan.spec import spec_json_schema

    typer.echo(json.dumps(spec_json_schema(), indent=2))
