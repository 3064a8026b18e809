"""`railplan cables`: lay out racks, place switches, cable every link; write the schedule or exports."""

import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import OBJECTIVES, design_command, out_file, out_folder
from railplan.errors import SpecError
from railplan.render.atomic import write_atomic, write_set

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource

FORMATS = ("csv", "netbox", "p2p", "p2p-links", "ibtopo", "dot", "ibdm", "ibsim")
DEFAULT_NAMES = {
    "csv": "cables.csv",
    "p2p": "p2p.csv",
    "p2p-links": "p2p-links.csv",
    "ibtopo": "fabric.topo",
    "dot": "fabric.dot",
    "ibsim": "fabric.net",
}


def _say(message: str) -> None:
    typer.echo(message, err=True)


@app.command("cables")
@design_command
def cables_cmd(
    src: "DesignSource",
    out: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs a runtime type
        typer.Option(
            "-o",
            "--out",
            help="Output file (a directory for --format netbox, or to use the default name).",
        ),
    ] = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="csv (cable schedule), netbox, p2p, p2p-links, ibtopo, ibdm (a folder: the "
            ".topo as ibutils 1.5 IBDM reads it and its IBNL system files), ibsim (ibsim's "
            "network file) or dot (dot skips the "
            "layout: it draws the wiring).",
        ),
    ] = "csv",
    objective: Annotated[
        str, typer.Option("--objective", help="Placement objective: cost, power or length.")
    ] = "cost",
    time_limit: Annotated[
        Optional[float],  # noqa: UP045
        typer.Option(
            "--time-limit",
            help="CP-SAT placement budget in deterministic seconds (default: the spec's).",
        ),
    ] = None,
    naive: Annotated[
        bool, typer.Option("--naive", help="First-fit placement from the row end, no solver.")
    ] = False,
    site: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--site", help="NetBox site name (default: the design name)."),
    ] = None,
    netbox_site: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--netbox-site",
            metavar="NAME",
            help="NetBox site NAME, and device names scoped to it (node0001.<name as a slug>) "
            "so several designs import into one NetBox.",
        ),
    ] = None,
    design_out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--design-out", help="Also write the cabled design.json here."),
    ] = None,
    stdout: Annotated[
        bool,
        typer.Option(
            "--stdout", help="Print the file on stdout even when it is a terminal (no -o)."
        ),
    ] = False,
) -> None:
    """Compute rack layout, switch placement and every cable; write a schedule or an export."""
    if fmt not in FORMATS:
        raise SpecError(f"--format {fmt!r}: use one of {', '.join(FORMATS)}")
    if objective not in OBJECTIVES:
        raise SpecError(f"--objective {objective!r}: use one of {', '.join(OBJECTIVES)}")
    if fmt in ("netbox", "ibdm"):
        if out is None:
            raise SpecError(f"--format {fmt} writes several files; give a directory with -o DIR")
        out_folder(out, "-o")
    elif out is not None and not out.is_dir():
        out_file(out, "-o")
    elif out is None and not stdout and sys.stdout.isatty():
        raise SpecError(
            f"--format {fmt} writes a file: give -o FILE (e.g. -o {DEFAULT_NAMES[fmt]}), or "
            "--stdout to print it on this terminal"
        )
    out_file(design_out, "--design-out")
    if netbox_site is not None and site is not None:
        raise SpecError(
            "give --netbox-site or --site, not both (--netbox-site also names the site)"
        )
    from railplan.design.io import design_json_chunks
    from railplan.render import cables_csv, dot, ibsim_net, ibtopo, netbox, p2p

    if fmt == "dot" and design_out is None:  # the drawing needs the wiring only: no layout
        _emit(dot.render(src.design()), out, fmt)
        return

    from railplan.cli.finish_beside import finished_beside
    from railplan.cli.progress import stages

    with stages("cables") as say:
        built = src.built(
            objective=objective,
            time_limit_s=time_limit,
            progress=say,
            method="naive" if naive else "cp-sat",
            relayout=naive or time_limit is not None,
            bill=False,  # the cabling only: the bill is `railplan bom`'s
            deferred=True,
        )
    # a child checks the laid-out design while the outputs are made; none is moved into
    # place (nor printed) before the check passed
    checked = finished_beside(built, bill=False)
    design, catalog, report = built.design, src.catalog(), built.placement
    if report is not None:
        gap = f", gap {report.gap:.1%} ({report.bound_kind})" if report.gap == report.gap else ""
        _say(
            f"placement: {report.method}, {report.status}{gap}; {report.cables} cables, "
            f"media ${report.cable_cost_usd:,.0f}, {report.cable_power_w:,.0f} W"
        )
    if design_out is not None:
        write_atomic(design_out, design_json_chunks(design), checked)
    if fmt == "netbox":
        assert out is not None
        scoped = netbox_site is not None
        write_set(
            out, netbox.render(design, catalog, netbox_site or site, scoped), before_commit=checked
        )
        _say(f"wrote racks.csv, devices.csv, interfaces.csv and cables.csv into {out}")
        return
    if fmt == "ibdm":
        assert out is not None
        files = {"fabric.topo": ibtopo.render(design, catalog, "ibdm-1.5")}
        files |= {f"ibnl/{n}": t for n, t in ibtopo.ibnl_files(design, catalog).items()}
        write_set(out, files, before_commit=checked)
        _say(f"wrote fabric.topo and ibnl/ into {out} (IBDM_IBNL_PATH={out}/ibnl:<IBDM's own>)")
        return
    if fmt == "csv":  # rows written as they are made: the schedule is never one string
        _emit(cables_csv.render_pieces(design), out, fmt, checked)
        return
    text = {
        "p2p": lambda: p2p.render(design, catalog),
        "p2p-links": lambda: p2p.render_links(design, catalog),
        "ibtopo": lambda: ibtopo.render(design, catalog),
        "dot": lambda: dot.render(design),
        "ibsim": lambda: ibsim_net.render(design, catalog),
    }[fmt]()
    _emit(text, out, fmt, checked)


def _emit(
    text: "str | Iterable[str]",
    out: Path | None,
    fmt: str,
    checked: Callable[[], object] | None = None,
) -> None:
    """Print ``text`` or write it to ``out``, once ``checked`` (the design's check) passed."""
    if out is None:
        if checked is not None:
            checked()
        for piece in [text] if isinstance(text, str) else text:
            typer.echo(piece, nl=False)
        return
    target = out / DEFAULT_NAMES[fmt] if out.is_dir() else out
    write_atomic(target, text, checked)
    _say(f"wrote {target}")
