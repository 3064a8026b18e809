"""What every design-taking command shares: spec file, design.json or quick flags, as a DesignSource.

Imports stay light (typer and the standard library): a command loads the library when it runs,
so ``railplan --help`` starts in a blink.
"""

import functools
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from railplan.errors import OutputError, SpecError
from railplan.identifiers import ID_RULE, REVISION_RULE, is_id, is_revision, shown
from railplan.render.atomic import name_fits, refuse_special, write_atomic
from railplan.safe_text import visible

__all__ = ["write_atomic"]

#: what the placement may minimise (railplan.physical.costers.OBJECTIVES, which loads numpy;
#: a test keeps the two equal)
OBJECTIVES = ("cost", "power", "length")

QUICK = "Quick flags (no spec file needed; with a spec they override it)"
#: largest --seed analyze takes (the seed feeds numpy's generators)
MAX_SEED = 2**32 - 1
#: most RDMA devices a node can list (--devices)
MAX_DEVICES = 256
#: --quiet: no progress display on stderr (railplan/cli/progress.py reads it)
QUIET = False

QuietFlag = Annotated[
    bool,
    typer.Option(
        "-q", "--quiet", help="No progress display on stderr (it shows only on a terminal)."
    ),
]

SOURCE_PARAMS: list[tuple[str, Any]] = [
    (
        "source",
        Annotated[
            Optional[Path],  # noqa: UP045 - typer needs a runtime type
            typer.Argument(
                help="A spec .yaml or a design .json; omit it to describe the cluster with flags.",
                show_default=False,
            ),
        ],
    ),
    (
        "gpus",
        Annotated[int | None, typer.Option("--gpus", help="Total GPUs.", rich_help_panel=QUICK)],
    ),
    (
        "node",
        Annotated[
            Optional[str],  # noqa: UP045
            typer.Option("--node", help="Node model id (e.g. dgx-h100).", rich_help_panel=QUICK),
        ],
    ),
    (
        "switch",
        Annotated[
            Optional[list[str]],  # noqa: UP045
            typer.Option(
                "--switch",
                metavar="ID",
                help="Allowed switch model id (repeatable).",
                rich_help_panel=QUICK,
            ),
        ],
    ),
    (
        "topology",
        Annotated[
            Optional[str],  # noqa: UP045
            typer.Option(
                "--topology",
                help="roft, rail-only, matrix, fat-tree or single-switch (default: the spec's; "
                "auto takes the recommendation).",
                rich_help_panel=QUICK,
            ),
        ],
    ),
    (
        "oversubscription",
        Annotated[
            Optional[str],  # noqa: UP045
            typer.Option(
                "--oversubscription", help="Leaf down:up, e.g. 1:1 or 3:1.", rich_help_panel=QUICK
            ),
        ],
    ),
    (
        "planes",
        Annotated[
            int | None, typer.Option("--planes", help="Fabric planes.", rich_help_panel=QUICK)
        ],
    ),
    (
        "set_",
        Annotated[
            Optional[list[str]],  # noqa: UP045
            typer.Option(
                "--set",
                metavar="PATH=VALUE",
                help="Override any spec field: path=value (e.g. fabric.whole_su=false).",
                rich_help_panel=QUICK,
            ),
        ],
    ),
    (
        "catalog_dir",
        Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option(
                "--catalog",
                help="A folder of catalog YAML that extends and overrides the bundled one by id.",
            ),
        ],
    ),
]


JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object on stdout.")]
ReportPath = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--report", help="Also write a printable Markdown report here."),
]
NamesPath = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--names", help="Name map (YAML/JSON) from site names to design names."),
]


def flag_overrides(
    gpus: int | None = None,
    node: str | None = None,
    switch: list[str] | None = None,
    topology: str | None = None,
    oversubscription: str | None = None,
    planes: int | None = None,
    set_: list[str] | None = None,
) -> list[str]:
    """The quick flags as spec overrides (``path=value``), then the ``--set`` ones."""
    pairs = [
        ("cluster.gpus", gpus),
        ("cluster.node", node),
        ("fabric.switches", json.dumps(switch) if switch else None),
        ("fabric.topology", topology),
        ("fabric.oversubscription", json.dumps(oversubscription) if oversubscription else None),
        ("fabric.planes", planes),
    ]
    return [f"{k}={v}" for k, v in pairs if v is not None] + list(set_ or [])


def design_command(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the shared source argument and quick flags; it receives ``src``."""
    own = [p for p in inspect.signature(func).parameters.values() if p.name != "src"]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ann)
        for name, ann in SOURCE_PARAMS
    ]
    quiet = inspect.Parameter(
        "quiet", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=QuietFlag
    )

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        from railplan.pipeline.source import DesignSource

        global QUIET
        QUIET = bool(kwargs.pop("quiet", False))
        given = {name: kwargs.pop(name) for name, _ in SOURCE_PARAMS}
        source, catalog_dir = given.pop("source"), given.pop("catalog_dir")
        src = DesignSource(source, flag_overrides(**given), catalog_dir, advisor=advised_spec)
        note_overrides(catalog_dir)
        return func(src=src, **kwargs)

    own_params = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own]
    params = [*shared[:1], *own_params, *shared[1:], quiet]
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def advised_spec(spec: Any, catalog: Any) -> Any:
    """``fabric.topology: auto`` as ``railplan recommend`` answers it (said on stderr); the
    field rule (single switch where it fits, else ROFT) when no candidate meets the
    requirements."""
    from railplan.advise import recommend
    from railplan.errors import InfeasibleError, RailplanError

    try:
        rec = recommend(spec, catalog)
    except InfeasibleError:
        raise  # no candidate holds the cluster by the closed-form ceiling: the advisor says so
    except RailplanError:
        return spec  # nothing to search: planning the spec says what is wrong
    if rec.recommended is None and not rec.evaluated:
        return spec  # no candidate holds the cluster: planning the spec names the limit
    if rec.recommended is None:
        typer.echo(
            "railplan: note: topology auto: no candidate meets the requirements "
            "(railplan recommend says why); planning the field rule instead: a single switch "
            "where the cluster fits one, else ROFT",
            err=True,
        )
        return spec
    best = rec.recommended
    typer.echo(
        f"railplan: note: topology auto: planning the recommendation, {best.candidate.label} "
        f"(${best.cost_usd:,.0f}, the cheapest of {rec.stats['candidates']} candidates meeting "
        "the requirements; railplan recommend shows why, --topology roft plans a ROFT)",
        err=True,
    )
    return rec.spec(spec)


def note_overrides(catalog_dir: Path | None) -> None:
    """Say on stderr which bundled catalog entries the user's catalog folder replaced."""
    from railplan.catalog import load_catalog_layers, user_catalog_dir

    if user_catalog_dir(catalog_dir) is None:
        return
    for line in load_catalog_layers(catalog_dir).overrides:
        typer.echo(visible(f"railplan: note: {line}"), err=True)


def print_json(obj: Any) -> None:
    """Exactly one JSON object on stdout."""
    typer.echo(json.dumps(obj, indent=2, sort_keys=False))


def emit_report(report: Any, json_out: bool, markdown: Path | None) -> None:
    """Write the Markdown report if asked, print the JSON if asked; exit 1 unless ``report.ok``."""
    if markdown is not None:
        from railplan.render.field_report import report_markdown

        write_atomic(markdown, report_markdown(report))
    if json_out:
        print_json(report.to_json())


# -- option checks that run before any planning --------------------------------------------


def _fits(path: Path, flag: str) -> None:
    """A path whose every name a file system takes (a name over 255 bytes is refused)."""
    try:
        name_fits(path)
    except OutputError as exc:
        raise SpecError(f"{flag} {exc}") from None


def out_folder(path: Path | None, flag: str) -> None:
    """An output folder option: refuse a path that is an existing file (or under one)."""
    if path is None:
        return
    _fits(path, flag)
    for part in (path, *path.parents):
        if part.exists():
            if not part.is_dir():
                raise SpecError(f"{flag} {path}: {part} is a file, not a folder; give a folder")
            return


def out_file(path: Path | None, flag: str) -> None:
    """An output file option: refuse a folder, or a path below an existing file."""
    if path is None:
        return
    _fits(path, flag)
    if path.is_dir():
        raise SpecError(f"{flag} {path}: is a folder; give a file name")
    try:
        refuse_special(path)
    except OutputError as exc:
        raise SpecError(f"{flag} {exc}") from None
    out_folder(path.parent, flag)


def revision_option(revision: str) -> str:
    """--revision: printed on handouts and in script headers, so plain text only."""
    if not is_revision(revision):
        raise SpecError(f"--revision {shown(revision)}: use {REVISION_RULE} characters")
    return revision


def device_names(devices: str | None) -> tuple[str, ...]:
    """--devices: comma-separated RDMA device names (mlx5_0,...), each a safe name."""
    if devices is None:
        return ()
    names = tuple(d.strip() for d in devices.split(","))
    if not any(names) or len(names) > MAX_DEVICES:
        raise SpecError(
            f"--devices {shown(devices)}: list one RDMA device per node port, e.g. mlx5_0,mlx5_1"
        )
    for name in names:
        if not is_id(name):
            raise SpecError(
                f"--devices: {shown(name)} is not a device name; use {ID_RULE} characters"
            )
    return names
