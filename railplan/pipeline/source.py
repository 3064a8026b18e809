"""Which design? A spec file with overrides, a design.json, or a spec given as overrides alone.

``DesignSource`` is the one way every front end obtains a design: ``design()`` for the
topology, ``built()`` for the finished design with its bill (a cabled design.json is taken as it
is, unless a re-layout is asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design, design_from_dict
from railplan.design.io import design_from_written
from railplan.design.limits import check_design_bytes
from railplan.errors import CatalogError, DesignFileError, InfeasibleError, RailplanError, SpecError
from railplan.gc_pause import paused
from railplan.identifiers import shorten
from railplan.pipeline.build import Build, build
from railplan.pipeline.rederive import rederivation_problems
from railplan.safe_load import MAX_JSON_BYTES, json_text, load_json, read_file
from railplan.spec import Spec, apply_overrides, load_spec, spec_from_dict
from railplan.spec.schema import AUTO_TOPOLOGY
from railplan.validate import check

Method = Literal["cp-sat", "naive"]


def read_design(path: Path) -> Design:
    """A design.json file as a type-checked Design; a file that is not one raises DesignFileError."""
    raw = read_file(path, "design file", DesignFileError, MAX_JSON_BYTES)
    check_design_bytes(raw, str(path))  # rows and values counted before anything is built
    text = json_text(raw, str(path), DesignFileError)
    del raw
    with paused():  # a million acyclic rows at scale (railplan/gc_pause.py)
        design = design_from_written(text)  # the rows as railplan writes them, from the text
        if design is not None:
            return design
        data = load_json(text, str(path), DesignFileError)
        del text
        return design_from_dict(data, str(path))


def design_reference_problems(design: Design, catalog: Catalog) -> list[str]:
    """The design's part ids the catalog does not have, each named by its JSON path (at most
    a few: one bad id is usually repeated on every row of the part)."""
    out: list[str] = []

    def unknown(path: str, ident: str, table: Mapping[str, object], what: str) -> None:
        if ident not in table and len(out) < 5:
            out.append(
                f"{path}: the {what} {shorten(repr(ident), 60)} is not in the catalog; "
                "`railplan catalog list` shows its ids"
            )

    for i, sw in enumerate(design.switches):
        unknown(f"switches[{i}].model", sw.model, catalog.switches, "switch")
    nic = design.shape.nic_model
    if nic != "custom":
        unknown("shape.nic_model", nic, catalog.nics, "NIC")
    for i, cable in enumerate(design.cables):
        for end in ("a", "b"):
            part = getattr(cable, f"transceiver_{end}", "") or ""
            if part:
                unknown(f"cables[{i}].transceiver_{end}", part, catalog.transceivers, "optic")
    return out


def design_problems(design: Design, catalog: Catalog) -> list[str]:
    """What ``check`` finds wrong with a loaded design, a spec inside it that is not valid, and,
    when both pass, where the file disagrees with what its spec plans (``rederive``)."""
    unknown = design_reference_problems(design, catalog)
    if unknown:  # the checks below look the parts up: name each missing one by its path
        return unknown
    problems = check(design, catalog)
    if design.spec:
        try:
            spec_from_dict(design.spec, "spec")
        except SpecError as exc:
            problems += str(exc).splitlines()
    return problems or rederivation_problems(design, catalog)


def catalog_reference_problems(spec: Spec, catalog: Catalog) -> list[str]:
    """The spec's part ids the catalog does not have, each named by its field path."""
    refs: list[tuple[str, str | None, Mapping[str, object], str]] = [
        ("cluster.node", spec.cluster.node, catalog.nodes, "node model"),
        ("cluster.nic", spec.cluster.nic, catalog.nics, "NIC"),
    ]
    refs += [
        (f"fabric.switches[{i}]", s, catalog.switches, "switch")
        for i, s in enumerate(spec.fabric.switches or ())
    ]
    return [
        f"{path}: unknown {what} {shorten(repr(ident), 60)}; the catalog has: "
        + ", ".join(sorted(table))
        for path, ident, table, what in refs
        if ident and ident not in table
    ]


def _prefixed(message: str, where: str) -> str:
    """Every line of ``message`` starting with ``where: `` (unless it already names it)."""
    return "\n".join(
        line if line.startswith(where) else f"{where}: {line}" for line in message.splitlines()
    )


@dataclass
class DesignSource:
    """A spec file (with ``path=value`` overrides), a design.json, or overrides alone."""

    source: Path | None = None
    overrides: list[str] = field(default_factory=list)
    catalog_dir: Path | None = None
    #: what ``fabric.topology: auto`` becomes (the CLI passes the recommendation); None:
    #: the library's field rule, decided by ``pipeline.plan``
    advisor: Callable[[Spec, Catalog], Spec] | None = field(default=None, repr=False)
    _catalog: Catalog | None = field(default=None, repr=False)
    _design: Design | None = field(default=None, repr=False)
    _spec: Spec | None = field(default=None, repr=False)

    def where(self) -> str:
        """How refusals name this source: the spec file's name, or ``flags``."""
        return self.source.name if self.source is not None else "flags"

    @contextmanager
    def _naming(self) -> Iterator[None]:
        """A refusal raised while planning a spec file names the file first, so every refusal
        of a bad file says which file it is (flags alone are named by their field paths)."""
        if self.source is None or self.is_design_file():  # flags name their field paths
            yield
            return
        try:
            yield
        except (SpecError, CatalogError, InfeasibleError) as exc:
            raise type(exc)(_prefixed(str(exc), self.where())) from None

    def is_design_file(self) -> bool:
        return self.source is not None and self.source.suffix.lower() == ".json"

    def catalog(self) -> Catalog:
        if self._catalog is None:
            self._catalog = load_catalog(self.catalog_dir)
        return self._catalog

    def spec(self) -> Spec:
        """The resolved spec: from the file (with overrides) or from the overrides alone;
        ``topology: auto`` as the ``advisor`` decides, when there is one."""
        if self._spec is None:
            spec = self._read_spec()
            if not self.is_design_file():
                problems = catalog_reference_problems(spec, self.catalog())
                if problems:
                    raise CatalogError(_prefixed("\n".join(problems), self.where()))
            if (
                self.advisor is not None
                and not self.is_design_file()
                and spec.fabric.topology == AUTO_TOPOLOGY
            ):
                with self._naming():
                    spec = self.advisor(spec, self.catalog())
            self._spec = spec
        return self._spec

    def stated_node_count(self) -> int | None:
        """The node count the spec states (no planning, no advisor), or None when the input is a
        design file or the count is not yet known (the planner then says what is wrong)."""
        if self.is_design_file():
            return None
        from railplan.topology.shape import resolve_shape

        try:
            spec = self._read_spec()
            return spec.cluster.gpus // resolve_shape(spec, self.catalog()).gpus
        except RailplanError:
            return None

    def _read_spec(self) -> Spec:
        if self.is_design_file():
            return spec_from_dict(self.design().spec, str(self.source))
        if self.source is not None:
            if self.source.suffix.lower() not in (".yaml", ".yml"):
                raise SpecError(f"{self.source}: give a spec .yaml or a design .json file")
            return load_spec(self.source, self.overrides)
        if not any(s.startswith("cluster.gpus=") for s in self.overrides):
            raise SpecError(
                "no cluster given: pass a spec file, a design.json, or --gpus with --node "
                "(e.g. railplan plan --gpus 1024 --node dgx-h100)"
            )
        return spec_from_dict(apply_overrides({"cluster": {}}, self.overrides), "flags")

    def design(self) -> Design:
        """The design: read from design.json, or planned from the spec (topology only)."""
        if self._design is None:
            if self.is_design_file():
                if self.overrides:
                    raise SpecError(
                        "quick flags and --set apply to specs; a design.json is already planned"
                    )
                assert self.source is not None
                design = read_design(self.source)
                catalog = self.catalog()
                try:
                    problems = design_problems(design, catalog)
                except (SpecError, CatalogError) as exc:  # a check that met a bad value
                    raise DesignFileError(_prefixed(str(exc), str(self.source))) from None
                if problems:
                    raise DesignFileError(
                        "\n".join(f"{self.source}: {shorten(p, 300)}" for p in problems)
                        + f"\n{self.source}: this design fails railplan's checks (edited by hand?); "
                        "re-plan it with railplan plan SPEC -o DIR"
                    )
                self._design = design
            else:
                spec = self.spec()
                with self._naming():
                    self._design = build(spec, self.catalog(), layout=False).design
        return self._design

    def built(
        self,
        *,
        layout: bool = True,
        objective: str = "cost",
        time_limit_s: float | None = None,
        progress: Callable[[str], None] | None = None,
        method: Method = "cp-sat",
        relayout: bool = False,
        bill: bool = True,
        deferred: bool = False,
        on_topology: Callable[[Design], None] | None = None,
    ) -> Build:
        """The finished design with its bill.

        A spec is planned, laid out and billed by ``build``. A design.json that already has
        cables is taken as it is (its labels are the site's) unless ``relayout``; one without
        cables is laid out from its embedded spec. ``layout=False`` stops at the topology;
        ``bill=False`` leaves the bill out; ``deferred=True`` lets a spec's build stop before
        its check and bill (``build``'s ``deferred``: ``pipeline.build.finish`` ends it);
        ``on_topology`` is ``build``'s (called with a spec's topology before it is laid out).
        """
        if not self.is_design_file():
            spec = self.spec()
            with self._naming():
                built = build(
                    spec,
                    self.catalog(),
                    layout=layout,
                    objective=objective,
                    time_limit_s=time_limit_s,
                    progress=progress,
                    method=method,
                    bill=bill,
                    deferred=deferred,
                    on_topology=on_topology,
                )
            self._design = built.design
            return built
        from railplan.physical.bom import bom
        from railplan.pipeline.layout import complete

        with paused():  # a big design.json is millions of objects too (railplan/gc_pause.py)
            design, placement = self.design(), None
            if layout and (relayout or not design.cables):
                design, placement = complete(
                    design,
                    self.spec(),
                    self.catalog(),
                    objective=objective,
                    time_limit_s=time_limit_s,
                    progress=progress,
                    method=method,
                )
                if progress is not None:
                    progress("checking the laid-out design")
                problems = check(design, self.catalog())
                if problems:
                    raise AssertionError(f"laid-out design fails check: {problems[:5]}")
            if progress is not None and design.cables and bill:
                progress("billing")
            priced = bom(design, self.catalog()) if design.cables and bill else None
        return Build(design=design, bom=priced, placement=placement, switch_choice=None)
