"""`railplan recommend`: the cheapest design meeting the requirements, its frontier and why."""

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from railplan.cli.app import app
from railplan.cli.common import JsonFlag, design_command, out_folder, print_json
from railplan.errors import SpecError
from railplan.render.atomic import write_set

if TYPE_CHECKING:
    from railplan.pipeline.source import DesignSource

RequireFlag = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option(
        "--require",
        metavar="KEY=VALUE",
        help="A requirement (repeatable): pairs_full, alltoall, pd, worst_failure (0..1), "
        "grow_to (GPUs), max_power_w, max_hops, protocol (infiniband|ethernet), vendors "
        "(comma list), budget_usd. Default: pairs_full=1, alltoall=0.9.",
    ),
]
WorkersFlag = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option("--workers", min=1, max=64, help="Processes that evaluate candidates."),
]


@app.command("recommend")
@design_command
def recommend_cmd(
    src: "DesignSource",
    require: RequireFlag = None,
    json_out: JsonFlag = False,
    out_dir: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "-o", "--out", help="Write the recommended design.json and spec.yaml (as plan -o)."
        ),
    ] = None,
    workers: WorkersFlag = None,
) -> None:
    """What should I buy? The cheapest design that meets the requirements, and the frontier."""
    out_folder(out_dir, "-o")
    src.advisor = None  # the search is this command's own answer
    if src.is_design_file():
        raise SpecError("recommend searches from a spec or flags; a design.json is already planned")
    from railplan.advise import parse_requires, recommend
    from railplan.advise.explain import recommendation_json

    say = (lambda msg: typer.echo(f"railplan: {msg}", err=True)) if sys.stderr.isatty() else None
    spec = src.spec()
    rec = recommend(
        spec, src.catalog(), parse_requires(require or []), workers=workers, progress=say
    )
    data = recommendation_json(rec)
    if out_dir is not None and rec.recommended is not None:
        from railplan.design import design_to_json
        from railplan.pipeline.build import build
        from railplan.spec import spec_to_yaml

        chosen = rec.spec(spec)
        design = build(chosen, src.catalog()).design
        write_set(
            out_dir, {"design.json": design_to_json(design), "spec.yaml": spec_to_yaml(chosen)}
        )
    if json_out:
        print_json(data)
    else:
        show(data)
        if out_dir is not None and rec.recommended is not None:
            typer.echo(f"wrote {out_dir / 'design.json'} and {out_dir / 'spec.yaml'}")
    if rec.recommended is None:
        raise typer.Exit(1)


def show(data: dict[str, Any]) -> None:
    """The answer for people: why, the frontier table, the rejected by family."""
    for line in data["why"]:
        typer.echo(line)
    req = ", ".join(f"{k}={v}" for k, v in data["requirements"].items())
    given = data["requirements_given"]
    typer.echo(
        f"requirements: {req}" + (f" (stated: {', '.join(given)})" if given else " (defaults)")
    )
    typer.echo("frontier (no other design is cheaper and as good in every traffic figure):")
    rows = [("design", "cost", "power", "switches", "pairs", "a2a", "PD", "hops", "why not")]
    for item in data["frontier"]:
        f = item["figures"]
        rows.append(
            (
                item["design"] + (" *" if item["recommended"] else ""),
                f"${item['cost_usd']:,.0f}",
                f"{item['power_w'] / 1000:,.1f} kW",
                str(item["switches"].get("total", "")),
                f"{f['pairs_full']:.1%}",
                f"{f['alltoall']:.3f}",
                f"{f['pd']:.3f}",
                str(f["max_hops"]),
                "recommended" if item["recommended"] else item["reason"],
            )
        )
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]) - 1)]
    for r in rows:
        typer.echo(
            "  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + "  " + r[-1]
        )
    by_family: dict[str, list[dict[str, Any]]] = {}
    for r in data["rejected"]:
        by_family.setdefault(r["family"], []).append(r)
    typer.echo("rejected:")
    for group in by_family.values():
        first = group[0]
        more = f" (and {len(group) - 1} more)" if len(group) > 1 else ""
        typer.echo(f"  {first['design'] or first['model']}: {first['reason']}{more}")
    s = data["search"]
    typer.echo(
        f"search: {s['candidates']} candidates, {s['bounded']} bounded in closed form, "
        f"{s['evaluated']} evaluated, {s['pruned']} pruned by their bound"
    )
