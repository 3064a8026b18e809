"""`railplan topology`: the fabric for the schedulers: Slurm topology, Kubernetes labels, Kueue, NCCL."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import NamesPath, design_command, out_file
from railplan.errors import SpecError
from railplan.render.atomic import write_atomic

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource

#: the formats (railplan.render.scheduler_files.FORMATS, which loads the renderers; a test
#: keeps the two equal)
FORMATS = (
    "slurm-tree",
    "slurm-block",
    "slurm-yaml",
    "k8s-labels",
    "k8s-kubectl",
    "kueue",
    "nccl",
)


@app.command("topology")
@design_command
def topology_cmd(
    src: "DesignSource",
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="slurm-tree (topology.conf), slurm-block (topology/block), slurm-yaml "
            "(topology.yaml), k8s-labels (YAML), k8s-kubectl (script), kueue (Topology) or nccl "
            "(environment).",
        ),
    ] = "slurm-tree",
    out: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs a runtime type
        typer.Option("-o", "--out", help="Output file (a folder: the format's default name)."),
    ] = None,
    from_asbuilt: Annotated[
        Optional[list[Path]],  # noqa: UP045
        typer.Option(
            "--from-asbuilt",
            metavar="CAPTURE",
            help="Build from the as-built cabling instead: an ibnetdiscover or iblinkinfo "
            "file, or LLDP files or folders (repeatable); differences from the plan are "
            "reported and exit 1.",
        ),
    ] = None,
    names: NamesPath = None,
    label_keys: Annotated[
        str,
        typer.Option(
            "--label-keys",
            help="railplan (<prefix><level>) or topograph (fabric.topograph.run/tier-N).",
        ),
    ] = "railplan",
    label_prefix: Annotated[
        str, typer.Option("--label-prefix", help="Prefix of the railplan label keys.")
    ] = "railplan/",
) -> None:
    """Write the fabric's structure for Slurm, Kubernetes/Kueue or NCCL, from the plan or as built."""
    if fmt not in FORMATS:
        raise SpecError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    if out is not None and not out.is_dir():
        out_file(out, "-o")
    if names is not None and not from_asbuilt:
        raise SpecError("--names maps the names in as-built captures; give it with --from-asbuilt")
    from railplan.render import scheduler_files
    from railplan.render.k8s_labels import check_options

    check_options(label_keys, label_prefix)

    catalog = src.catalog()
    if not from_asbuilt:
        h = scheduler_files.handoff(
            src.design(), catalog, label_keys=label_keys, label_prefix=label_prefix
        )
        _emit(scheduler_files.render(fmt, h), out, fmt)
        return
    from railplan.field.asbuilt_topology import check_topology, split_captures

    design = src.built().design
    lldp, ibnet, iblink = split_captures(from_asbuilt)
    result = check_topology(design, lldp, ibnet, iblink, names)
    origin = "as built (" + ", ".join(p.name for p in from_asbuilt) + ")"
    h = scheduler_files.handoff(
        design, catalog, result.as_built, origin=origin, label_keys=label_keys,
        label_prefix=label_prefix,
    )  # fmt: skip
    _emit(scheduler_files.render(fmt, h), out, fmt)
    for kind, where, what in result.summary_rows():
        typer.echo(f"{kind}: {where}: {what}", err=True)
    typer.echo(result.summary_line(), err=True)
    for warning in result.cabling.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if not result.ok:
        raise typer.Exit(1)


def _emit(text: str, out: Path | None, fmt: str) -> None:
    from railplan.render.scheduler_files import FORMATS as FILES

    if out is None:
        typer.echo(text, nl=False)
        return
    target = out / FILES[fmt][0] if out.is_dir() else out
    write_atomic(target, text)
    typer.echo(f"wrote {target}", err=True)
