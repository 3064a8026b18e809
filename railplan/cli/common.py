"""What every design-taking command shares: spec file, design.json or quick flags; atomic writes."""

import functools
import inspect
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from railplan.build import Build, build
from railplan.catalog import Catalog, load_catalog
from railplan.errors import DesignFileError, SpecError
from railplan.model import Design, design_from_dict
from railplan.spec import Spec, apply_overrides, load_spec, spec_from_dict

QUICK = "Quick flags (no spec file needed; with a spec they override it)"

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
                "--switch", help="Allowed switch model id (repeatable).", rich_help_panel=QUICK
            ),
        ],
    ),
    (
        "topology",
        Annotated[
            Optional[str],  # noqa: UP045
            typer.Option(
                "--topology", help="roft, rail-only, matrix or fat-tree.", rich_help_panel=QUICK
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
                help="Override any spec field: path=value (e.g. fabric.whole_su=false).",
                rich_help_panel=QUICK,
            ),
        ],
    ),
    (
        "catalog_dir",
        Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--catalog", help="Catalog directory (default: the bundled catalogs/)."),
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


@dataclass
class DesignSource:
    """The user's answer to 'which design?': a spec file, a design.json, or quick flags."""

    source: Path | None = None
    gpus: int | None = None
    node: str | None = None
    switch: list[str] | None = None
    topology: str | None = None
    oversubscription: str | None = None
    planes: int | None = None
    set_: list[str] | None = None
    catalog_dir: Path | None = None
    _catalog: Catalog | None = field(default=None, repr=False)
    _design: Design | None = field(default=None, repr=False)

    def overrides(self) -> list[str]:
        pairs = [
            ("cluster.gpus", self.gpus),
            ("cluster.node", self.node),
            ("fabric.switches", json.dumps(self.switch) if self.switch else None),
            ("fabric.topology", self.topology),
            (
                "fabric.oversubscription",
                json.dumps(self.oversubscription) if self.oversubscription else None,
            ),
            ("fabric.planes", self.planes),
        ]
        return [f"{k}={v}" for k, v in pairs if v is not None] + list(self.set_ or [])

    def is_design_file(self) -> bool:
        return self.source is not None and self.source.suffix.lower() == ".json"

    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog(self.catalog_dir)
        return self._catalog

    def spec(self) -> Spec:
        """The resolved spec: from the file (with overrides) or from the quick flags alone."""
        if self.is_design_file():
            return spec_from_dict(self.design().spec, str(self.source))
        if self.source is not None:
            if self.source.suffix.lower() not in (".yaml", ".yml"):
                raise SpecError(f"{self.source}: give a spec .yaml or a design .json file")
            return load_spec(self.source, self.overrides())
        if self.gpus is None and not any(s.startswith("cluster.gpus=") for s in self.set_ or []):
            raise SpecError(
                "no cluster given: pass a spec file, a design.json, or --gpus with --node "
                "(e.g. railplan plan --gpus 1024 --node dgx-h100)"
            )
        data = apply_overrides({"cluster": {}}, self.overrides())
        return spec_from_dict(data, "flags")

    def design(self) -> Design:
        """The design: read from design.json, or planned from the spec (checked by plan)."""
        if self._design is None:
            if self.is_design_file():
                if self.overrides():
                    raise SpecError(
                        "quick flags and --set apply to specs; a design.json is already planned"
                    )
                self._design = read_design(self.source)  # type: ignore[arg-type]
            else:
                self._design = build(self.spec(), self.catalog(), layout=False).design
        return self._design

    def build(
        self,
        *,
        layout: bool = True,
        objective: str = "cost",
        time_limit_s: float | None = None,
        progress: Callable[[str], None] | None = None,
        naive: bool = False,
    ) -> Build:
        """The finished design with its bill: a cabled design.json is taken as it is."""
        if self.is_design_file():
            from railplan.analysis.bom import bom
            from railplan.pipeline import complete

            design = self.design()
            placement = None
            if layout and not design.cables:
                design, placement = complete(
                    design,
                    self.spec(),
                    self.catalog(),
                    objective=objective,
                    time_limit_s=time_limit_s,
                    progress=progress,
                    method="naive" if naive else "cp-sat",
                )
            bill = bom(design, self.catalog()) if design.cables else None
            return Build(design=design, bom=bill, placement=placement, switch_choice=None)
        built = build(
            self.spec(),
            self.catalog(),
            layout=layout,
            objective=objective,
            time_limit_s=time_limit_s,
            progress=progress,
            method="naive" if naive else "cp-sat",
        )
        self._design = built.design
        return built


def read_design(path: Path) -> Design:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DesignFileError(f"design file {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise DesignFileError(f"{path}: not valid JSON at line {exc.lineno}") from None
    try:
        return design_from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise DesignFileError(
            f"{path}: not a railplan design file ({exc}); write one with railplan plan -o DIR"
        ) from None


def design_command(func: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the shared source argument and quick flags; it receives ``src``."""
    own = [p for p in inspect.signature(func).parameters.values() if p.name != "src"]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ann)
        for name, ann in SOURCE_PARAMS
    ]

    @functools.wraps(func)
    def wrapper(**kwargs: Any) -> Any:
        src = DesignSource(**{name: kwargs.pop(name) for name, _ in SOURCE_PARAMS})
        return func(src=src, **kwargs)

    params = shared[:1] + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own] + shared[1:]
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    return wrapper


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write ``data`` to a temp file beside ``path`` and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def print_json(obj: Any) -> None:
    """Exactly one JSON object on stdout."""
    typer.echo(json.dumps(obj, indent=2, sort_keys=False))


def laid_out_design(src: DesignSource) -> Design:
    """A design.json as it is (its cable labels are the site's); a spec planned and cabled."""
    return src.design() if src.is_design_file() else src.build(layout=True).design


def emit_report(report: Any, json_out: bool, markdown: Path | None) -> None:
    """Write the Markdown report if asked, print the JSON if asked; exit 1 unless ``report.ok``."""
    if markdown is not None:
        write_atomic(markdown, report.to_markdown())
    if json_out:
        print_json(report.to_json())
