"""`railplan grow BEFORE [AFTER]`: the change from one size to the next, or through the phases."""

import itertools
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, out_folder, print_json
from railplan.errors import SpecError
from railplan.render.atomic import write_set

if TYPE_CHECKING:
    from railplan.change.grow import Growth


def _phase_flags(values: list[str]) -> list[tuple[str, int]]:
    out = []
    for raw in values:
        name, sep, gpus = raw.partition("=")
        if not sep or not name or not gpus.strip().isdigit():
            raise SpecError(f"--phase {raw!r}: give NAME=GPUS, e.g. --phase su2=512")
        out.append((name.strip(), int(gpus)))
    return out


@app.command("grow")
def grow_cmd(
    before: Annotated[
        Path,
        typer.Argument(
            help="The installed design (spec .yaml or design .json), or a spec with phases."
        ),
    ],
    after: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Argument(
            help="The design to grow into (spec .yaml or design .json).", show_default=False
        ),
    ] = None,
    phase: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--phase", metavar="NAME=GPUS", help="A phase (repeatable), smallest first."),
    ] = None,
    out: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "-o", "--out", help="Write the delta bill, moves, delta sheets and tests here."
        ),
    ] = None,
    buy_later: Annotated[
        bool,
        typer.Option(
            "--buy-later/--no-buy-later",
            help="With phases: also plan each phase on its own and count the moves it costs.",
        ),
    ] = True,
    json_out: JsonFlag = False,
    catalog_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--catalog", help="A folder of catalog YAML that extends the bundled one."),
    ] = None,
) -> None:
    """Delta bill, move list in technician order, delta cabling sheet and delta test plan."""
    from railplan.pipeline.source import DesignSource

    out_folder(out, "--out")
    src = DesignSource(before, [], catalog_dir)
    catalog = src.catalog()
    if after is None:
        _phased(src, _phase_flags(phase or []) or None, out, buy_later, json_out)
        return
    if phase:
        raise SpecError("--phase plans phases of one spec; give BEFORE alone, without AFTER")
    from railplan.change.grow import grow

    dst = DesignSource(after, [], catalog_dir, _catalog=catalog)
    g = grow(src.built().design, dst.built().design, catalog, after_spec=dst.spec())
    if out is not None:
        from railplan.render.change_report import growth_files

        write_set(out, growth_files(g))
    if json_out:
        from railplan.render.change_report import growth_json

        print_json(growth_json(g))
    else:
        _show(g)


def _phased(
    src: Any, flags: list[tuple[str, int]] | None, out: Path | None, buy_later: bool, json_out: bool
) -> None:
    from railplan.change.grow import grow_phases
    from railplan.change.preinstall import choices
    from railplan.cli.show import print_table, rows_table
    from railplan.render.change_report import CHOICE_HEADER, choice_rows, growth_files, growth_json

    if src.is_design_file():
        raise SpecError("grow with phases plans from a spec: give the spec .yaml")
    catalog = src.catalog()
    phased = grow_phases(src.spec(), catalog, flags)
    alone, moves = ({}, {}) if not buy_later else _buy_later(src.spec(), catalog, phased)
    picked = choices(phased, catalog, alone, moves)
    if out is not None:
        files: dict[str, str] = {}
        for g in phased.steps:
            files.update(growth_files(g, picked, prefix=f"{g.before.name}-to-{g.after.name}/"))
        write_set(out, files)
    if json_out:
        print_json(
            {
                "phases": [{"name": p.name, "gpus": p.gpus} for p in phased.plan.phases],
                "steps": [growth_json(g) for g in phased.steps],
                "pre_install": [
                    {
                        "phase": c.phase,
                        "item": c.item,
                        "pre_install": c.pre_install,
                        "pre_install_usd": c.pre_install_usd,
                        "buy_later": c.buy_later,
                        "buy_later_usd": c.buy_later_usd,
                        "moves_pre_install": c.moves_pre_install,
                        "moves_buy_later": c.moves_buy_later,
                        "moves_lower_bound": c.moves_lower_bound,
                    }
                    for c in picked
                ],
            }
        )
        return
    for g in phased.steps:
        _show(g)
    if picked:
        print_table(
            rows_table("Day-one pre-install or buy later", CHOICE_HEADER, choice_rows(picked))
        )


def _buy_later(
    spec: Any, catalog: Any, phased: Any
) -> tuple[dict[str, Any], dict[str, tuple[int, int]]]:
    """Each phase planned alone, and what growing it into the next phase cut would move."""
    from railplan.change.align import align
    from railplan.pipeline.build import build
    from railplan.spec.load import spec_from_dict, spec_to_dict

    alone: dict[str, Any] = {}
    moves: dict[str, tuple[int, int]] = {}
    phases = phased.plan.phases
    for ph, nxt in itertools.pairwise(phases):
        raw = spec_to_dict(spec)
        raw["cluster"]["gpus"] = ph.gpus
        raw.pop("phases", None)
        raw["name"] = ph.name
        design = build(spec_from_dict(raw, f"phase {ph.name}"), catalog).design
        alone[ph.name] = design
        al = align(design, nxt.design)
        moves[ph.name] = (al.moves, al.lower_bound_moves)
    return alone, moves


def _show(g: "Growth") -> None:
    from railplan.cli.show import print_table, rows_table
    from railplan.render.change_report import BILL_COLUMNS, bill_rows

    d = g.change
    title = f"{d.before} ({g.before.gpus} GPUs) -> {d.after} ({g.after.gpus} GPUs): delta bill"
    print_table(rows_table(title, BILL_COLUMNS[:6], [r[:6] for r in bill_rows(d.lines)]))
    if d.moves:
        rows = [
            [str(k), m.cable, f"{m.from_device} {m.from_port}", f"{m.to_device} {m.to_port}"]
            for k, m in enumerate(d.moves[:50], 1)
        ]
        print_table(rows_table("moves, in technician order", ["step", "cable", "from", "to"], rows))
        if len(d.moves) > 50:
            typer.echo(f"... {len(d.moves) - 50} more moves in moves.csv (-o DIR)")
    typer.echo(
        f"{d.before} -> {d.after}: {len(d.kept)} links kept, {len(d.added)} added, "
        f"{len(d.moves)} moved, {len(d.removed)} removed; installed cables moved or removed "
        f"{g.moved} (lower bound {g.lower_bound}, gap {g.gap}); "
        f"{len(g.tests.links)} link checks, {len(g.tests.pairs)} pair tests; "
        f"bought ${d.cost_usd:,.0f}"
    )
    for note in g.notes:
        typer.echo(f"note: {note}")
