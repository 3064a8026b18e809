"""`railplan schema`: the JSON Schema of spec files, for editor completion."""

import json

import typer

from railplan.cli.app import app
from railplan.spec import spec_json_schema


@app.command("schema")
def schema_cmd() -> None:
    """Print the JSON Schema of the spec file format."""
    typer.echo(json.dumps(spec_json_schema(), indent=2))
