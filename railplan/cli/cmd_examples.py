"""`railplan examples [DIR]`: copy the bundled examples out of the installed package."""

from pathlib import Path
from typing import Annotated

import typer

from railplan.cli.app import app
from railplan.errors import OutputError


def bundled_examples() -> dict[str, bytes]:
    """Every bundled example file, {path under examples/: bytes}, in a fixed order.

    The wheel ships the repository's examples/ folder inside the package (railplan/examples
    links to it in a clone, as railplan/catalogs does to catalogs/): specs, the field example's
    captures and results, and the user catalog.
    """
    from importlib.resources import files

    root = files("railplan") / "examples"
    out: dict[str, bytes] = {}

    def walk(node: object, rel: str) -> None:
        for child in sorted(node.iterdir(), key=lambda c: c.name):  # type: ignore[attr-defined]
            if child.name == "__pycache__" or child.name.startswith("."):
                continue
            path = f"{rel}/{child.name}"
            if child.is_dir():
                walk(child, path)
            else:
                out[path] = child.read_bytes()

    if not root.is_dir():
        raise OutputError("this railplan was installed without its examples; reinstall it")
    walk(root, "examples")
    return out


@app.command("examples")
def examples_cmd(
    folder: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="Folder to copy into (default: here); the examples land in DIR/examples/.",
            show_default=False,
        ),
    ] = Path("."),
) -> None:
    """Copy the bundled examples (specs, field captures, a user catalog) into DIR/examples/.

    Every command of the README and the docs names files under examples/, so they run from DIR.
    """
    from railplan.render.atomic import write_set

    target = folder / "examples"
    if target.exists() or target.is_symlink():
        raise OutputError(
            f"{target} already exists; pick another DIR (railplan examples NEW_DIR) or remove it"
        )
    if folder.exists() and not folder.is_dir():
        raise OutputError(f"{folder} is a file, not a folder; pick a folder for DIR")
    files = bundled_examples()
    write_set(folder, files)
    specs = sum(1 for rel in files if rel.count("/") == 1 and rel.endswith(".yaml"))
    typer.echo(
        f"wrote {target}/ ({len(files)} files: {specs} specs, field/ captures and results, "
        f"user-catalog/); try: cd {folder} && railplan plan examples/h100-1k.yaml",
        err=True,
    )
