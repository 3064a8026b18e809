"""`railplan catalog list|show ID`: the parts the planner can use and where each comes from."""

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, note_overrides, print_json

catalog_app = typer.Typer(
    help="List the catalog's parts (bundled, plus --catalog DIR) or show one part's fields.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(catalog_app, name="catalog")

CatalogDir = Annotated[
    Optional[Path],  # noqa: UP045 - typer needs a runtime type
    typer.Option(
        "--catalog",
        help="A folder of YAML files that extends the bundled catalog and overrides it by id.",
    ),
]


@catalog_app.command("list")
def list_cmd(catalog_dir: CatalogDir = None, json_out: JsonFlag = False) -> None:
    """List every part: section, id, name, a few figures and the file it comes from."""
    from railplan.catalog import load_catalog_layers
    from railplan.catalog.listing import catalog_rows

    note_overrides(catalog_dir)
    rows = catalog_rows(load_catalog_layers(catalog_dir))
    if json_out:
        print_json({"parts": rows})
        return
    header = ("section", "id", "about")  # then "from"; names: `catalog show ID` or --json
    widths = {h: max(len(h), *(len(r[h]) for r in rows)) for h in header}
    for line in [{h: h for h in (*header, "from")}, *rows]:
        typer.echo("  ".join([*(line[h].ljust(widths[h]) for h in header), line["from"]]))


@catalog_app.command("show")
def show_cmd(
    part_id: Annotated[str, typer.Argument(metavar="ID", help="A part id from `catalog list`.")],
    catalog_dir: CatalogDir = None,
    json_out: JsonFlag = False,
) -> None:
    """Print one part's fields (as catalog YAML) with the file it comes from."""
    import yaml

    from railplan.catalog import load_catalog_layers
    from railplan.catalog.listing import catalog_entry

    note_overrides(catalog_dir)
    found = catalog_entry(load_catalog_layers(catalog_dir), part_id)
    if json_out:
        print_json({"parts": found})
        return
    for entry in found:
        section, origin = entry.pop("section"), entry.pop("from")
        typer.echo(f"# {section} entry from {origin}")
        for key in ("price_usd", "price_per_m_usd"):
            if isinstance(entry.get(key), dict):
                typer.echo(f"# {key}: {price_line(entry[key])}")
        typer.echo(
            yaml.safe_dump({section: [entry]}, sort_keys=False, allow_unicode=True), nl=False
        )


def price_line(p: dict[str, Any]) -> str:
    """A price as one line: typical, range, kind, reference and date."""
    src = p["source"]
    when = p.get("date") or "undated"
    legacy = ", legacy form" if p.get("legacy") else ""
    return (
        f"{p['typical']:,.2f} USD typical ({p['low']:,.2f}-{p['high']:,.2f}), "
        f"{src['kind']}{legacy}, {when}: {src['ref']}"
    )
