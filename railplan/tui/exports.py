"""Files: read a spec, save one, export a design's files with the writers the CLI uses."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from pathlib import Path

from railplan.catalog import Catalog
from railplan.design import design_to_json
from railplan.pipeline.layout import complete
from railplan.pipeline.source import read_design
from railplan.render.atomic import write_atomic
from railplan.spec import Spec, load_spec, spec_from_dict, spec_to_yaml
from railplan.tui.compute import METHOD_NAMES, Method, design_of


def read_spec(path: Path) -> Spec:
    """A spec from a .yaml spec file or from the spec inside a design.json (CLI messages)."""
    if path.suffix.lower() != ".json":
        return load_spec(path)
    design = read_design(path)  # the CLI's reader: type-checked, bounded
    return spec_from_dict(design.spec, str(path))


def save_spec(spec_data: dict[str, object], path: Path) -> Spec:
    """Validate the form's spec and write it as YAML (every default filled, like plan -o)."""
    spec = spec_from_dict(spec_data)
    write_atomic(path, spec_to_yaml(spec))
    return spec


#: the scheduler handoff files (``railplan topology``): file name -> its --format
SCHEDULER_FILES = {
    "topology.conf": "slurm-tree",
    "topology-block.conf": "slurm-block",
    "topology.yaml": "slurm-yaml",
    "node-labels.yaml": "k8s-labels",
    "label-nodes.sh": "k8s-kubectl",
    "kueue-topology.yaml": "kueue",
    "nccl.env": "nccl",
}
FILES: tuple[str, ...] = (
    "spec.yaml", "design.json", "cables.csv", "sheets.pdf", "testplan.pdf", *SCHEDULER_FILES,
)  # fmt: skip
STEPS = len(FILES) + 2


def export_stream(
    spec: Spec, catalog: Catalog, family: str, folder: Path, method: Method
) -> Iterator[tuple[str, int, str]]:
    """Build, lay out and write every file, as the CLI's plan, cables, sheets and testplan do.

    Yields (message, steps done, path written or ""): ``STEPS`` steps in all. Runs in a
    child process (see runner.py) so the UI stays responsive and Escape can stop it.
    """
    from railplan.physical.bom import bom
    from railplan.render import cables_csv, scheduler_files
    from railplan.render.pdf_sheets import render_sheets
    from railplan.render.pdf_testplan import render_testplan
    from railplan.testplan import TestPlanOptions, build_testplan, design_hash

    yield f"building the {family} design", 0, ""
    design = design_of(spec, catalog, family)
    yield f"laying out racks and cables ({METHOD_NAMES[method]})", 1, ""
    design = complete(design, spec, catalog, method=method)[0]
    data = spec.model_dump(mode="json")
    data["fabric"]["topology"] = design.topology  # compare exports the family it shows
    makers: dict[str, Callable[[], str | bytes]] = {
        "spec.yaml": lambda: spec_to_yaml(spec_from_dict(data)),
        "design.json": lambda: design_to_json(design),
        "cables.csv": lambda: cables_csv.render(design),
        "sheets.pdf": lambda: render_sheets(
            design, bom(design, catalog), "draft", design_hash(design), "a4"
        )[0],
        "testplan.pdf": lambda: render_testplan(
            build_testplan(design, catalog, TestPlanOptions()), "a4"
        )[0],
    }
    handoff = scheduler_files.handoff(design, catalog)
    for name, fmt in SCHEDULER_FILES.items():
        makers[name] = functools.partial(scheduler_files.render, fmt, handoff)
    for step, name in enumerate(FILES, start=2):
        yield f"writing {name}", step, ""
        path = write_atomic(folder / name, makers[name]())
        yield f"wrote {name}", step + 1, str(path)
