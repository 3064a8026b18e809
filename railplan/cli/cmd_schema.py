"""`railplan schema`: the JSON Schema of spec files, for editor completion."""

import json

import typer

from railplan.cli.app import app


@app.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema of the spec file format."""
    from railplan.spec import spec_json_schema

    typer.echo(json.dumps(spec_json_schema(), indent=2))
