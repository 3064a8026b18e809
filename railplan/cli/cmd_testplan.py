"""`railplan testplan`: the acceptance test plan as PDF, YAML, JSON, text and runnable scripts."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from railplan.cli.app import app
from railplan.cli.cmd_sheets import PAGE_SIZES, _say, _stage, cabled_design
from railplan.cli.common import design_command, device_names, out_folder, revision_option
from railplan.errors import SpecError
from railplan.render.atomic import write_set

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource


@app.command("testplan")
@design_command
def testplan_cmd(
    src: "DesignSource",
    out_dir: Annotated[
        Path,
        typer.Option("-o", "--out", help="Directory for testplan.pdf/.yaml/.json and scripts/."),
    ] = Path("."),
    revision: Annotated[
        str, typer.Option("--revision", help="Revision printed on every page.")
    ] = "draft",
    partners: Annotated[
        Optional[int],  # noqa: UP045 - None: 2, or fewer on a small design
        typer.Option(
            "--partners",
            metavar="N",
            help="Distinct pair-test partners per node (at most the other nodes, up to 1024).",
            min=1,
            max=1024,
        ),
    ] = None,
    devices: Annotated[
        Optional[str],  # noqa: UP045 - typer needs a runtime type
        typer.Option(
            "--devices", help="RDMA device per node port, comma-separated (default mlx5_<port>)."
        ),
    ] = None,
    gid_index: Annotated[
        int,
        typer.Option(
            "--gid-index", metavar="N", help="RoCE GID index of every device.", min=0, max=255
        ),
    ] = 3,
    mtu: Annotated[
        int,
        typer.Option("--mtu", metavar="BYTES", help="Expected active MTU.", min=256, max=65_535),
    ] = 4096,
    priority: Annotated[
        int,
        typer.Option(
            "--priority", metavar="0-7", help="Lossless (PFC/ECN) priority.", min=0, max=7
        ),
    ] = 3,
    ladder: Annotated[
        bool,
        typer.Option(
            "--ladder",
            help="Add the scale ladder: node, pair, rail, SU, pod, fabric x 4 collectives.",
        ),
    ] = False,
    burnin_s: Annotated[
        int,
        typer.Option(
            "--burnin-s",
            metavar="SECONDS",
            help="Add a burn-in of this many seconds (ib_write_bw on every port; 0: none).",
            min=0,
            max=7 * 86_400,
        ),
    ] = 0,
    burnin_load: Annotated[
        float,
        typer.Option(
            "--burnin-load",
            metavar="SHARE",
            help="Each burn-in stream's share of line rate (1: unlimited).",
            min=0.05,
            max=1.0,
        ),
    ] = 1.0,
    dcgm: Annotated[
        bool,
        typer.Option(
            "--dcgm", help="Add DCGM diagnostics: dcgmi diag -r 1 per node, -r 3 with burn-in."
        ),
    ] = False,
    page_size: Annotated[str, typer.Option("--page-size", help="a4 or letter.")] = "a4",
    naive: Annotated[
        bool, typer.Option("--naive", help="Lay out with first-fit placement (no solver).")
    ] = False,
) -> None:
    """Write the acceptance test plan: testplan.pdf, .yaml, .json, .txt and scripts/."""
    if page_size not in PAGE_SIZES:
        raise SpecError(f"--page-size {page_size!r}: use a4 or letter")
    out_folder(out_dir, "-o")
    revision_option(revision)
    names = device_names(devices)
    from railplan.cli.progress import progress_bar
    from railplan.render.pdf_testplan import render_testplan
    from railplan.render.scripts import executable, render_scripts
    from railplan.render.testplan_data import plan_to_json, plan_to_text, plan_to_yaml
    from railplan.testplan import TestPlanOptions, build_testplan

    design = cabled_design(src, naive)
    if partners is not None and partners > max(1, len(design.nodes) - 1):
        raise SpecError(
            f"--partners {partners}: {design.name} has {len(design.nodes)} nodes, so each has "
            f"at most {max(1, len(design.nodes) - 1)} partner(s); give fewer"
        )
    options = TestPlanOptions(
        partners=2 if partners is None else partners,
        devices=names,
        gid_index=gid_index,
        mtu=mtu,
        lossless_priority=priority,
        revision=revision,
        ladder=ladder,
        burnin_s=burnin_s,
        burnin_load=burnin_load,
        dcgm=dcgm,
    )
    with progress_bar("test plan") as bar:
        plan = build_testplan(design, src.catalog(), options, _stage(bar))
    with progress_bar("testplan.pdf") as bar:
        pdf, pages = render_testplan(plan, page_size, _stage(bar))
    files = render_scripts(plan, design)
    outputs: dict[str, str | bytes] = {
        "testplan.pdf": pdf,
        "testplan.yaml": plan_to_yaml(plan),
        "testplan.json": plan_to_json(plan),
        "testplan.txt": plan_to_text(plan),
    }
    outputs.update({f"scripts/{name}": text for name, text in files.items()})
    write_set(out_dir, outputs, mode=lambda rel: 0o755 if executable(rel) else 0)
    c = plan.coverage
    _say(
        f"wrote {out_dir / 'testplan.pdf'} ({pages} pages), testplan.yaml/.json/.txt and "
        f"{len(files)} files in {out_dir / 'scripts'}"
    )
    _say(
        f"coverage: {c.covered_links}/{c.inter_switch_links} switch-to-switch links, "
        f"{c.nodes_paired}/{c.nodes} nodes in {c.pairs} pairs ({c.rounds} rounds)"
    )
