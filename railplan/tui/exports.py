"""Files: read a spec, save one, export a design's files with the writers the CLI uses."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from railplan.catalog import Catalog
from railplan.errors import DesignFileError
from railplan.model import Design, design_from_dict, design_to_json
from railplan.render.atomic import write_atomic
from railplan.spec import Spec, load_spec, spec_from_dict, spec_to_yaml

#: (message, steps done, steps in all)
Progress = Callable[[str, int, int], None]


def read_spec(path: Path) -> Spec:
    """A spec from a .yaml spec file or from the spec inside a design.json (CLI messages)."""
    if path.suffix.lower() != ".json":
        return load_spec(path)
    try:
        design = design_from_dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise DesignFileError(f"design file {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise DesignFileError(f"{path}: not valid JSON at line {exc.lineno}") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise DesignFileError(f"{path}: not a railplan design file ({exc})") from None
    return spec_from_dict(design.spec, str(path))


def save_spec(spec_data: dict[str, object], path: Path) -> Spec:
    """Validate the form's spec and write it as YAML (every default filled, like plan -o)."""
    spec = spec_from_dict(spec_data)
    write_atomic(path, spec_to_yaml(spec))
    return spec


@dataclass
class ExportJob:
    """One export, step by step as the CLI's ``cables``, ``sheets`` and ``testplan`` do it.

    ``naive`` lays the racks out first-fit (the CLI's ``--naive``); otherwise CP-SAT places
    the switches. ``cabled`` is a design already laid out that way, reused as is.
    """

    design: Design
    spec: Spec
    catalog: Catalog
    folder: Path
    naive: bool = False
    cabled: Design | None = None
    written: list[Path] = field(default_factory=list)

    FILES = ("spec.yaml", "design.json", "cables.csv", "sheets.pdf", "testplan.pdf")

    def run(self, progress: Progress | None = None) -> list[Path]:
        """Lay out (unless given), then write every file; returns the paths written."""
        from railplan.analysis.bom import bom
        from railplan.pipeline import complete
        from railplan.render import cables_csv
        from railplan.render.pdf_sheets import render_sheets
        from railplan.render.pdf_testplan import render_testplan
        from railplan.testplan import TestPlanOptions, build_testplan, design_hash

        steps = len(self.FILES) + 1
        say = progress or (lambda _m, _d, _t: None)
        step = 0

        def sub(what: str) -> Callable[[str, int, int], None]:
            return lambda stage, done, total: say(f"{what}: {stage} {done}/{total}", step, steps)

        say("laying out racks and cables", step, steps)
        design = self.cabled
        if design is None:
            design = complete(
                self.design,
                self.spec,
                self.catalog,
                method="naive" if self.naive else "cp-sat",
                progress=lambda m: say(f"layout: {m}", 0, steps),
            )[0]
        spec = self.spec.model_dump(mode="json")
        spec["fabric"]["topology"] = design.topology  # compare exports the family it shows
        makers: dict[str, Callable[[], str | bytes]] = {
            "spec.yaml": lambda: spec_to_yaml(spec_from_dict(spec)),
            "design.json": lambda: design_to_json(design),
            "cables.csv": lambda: cables_csv.render(design),
            "sheets.pdf": lambda: render_sheets(
                design, bom(design, self.catalog), "draft", design_hash(design), "a4", sub("sheets")
            )[0],
            "testplan.pdf": lambda: render_testplan(
                build_testplan(design, self.catalog, TestPlanOptions(), sub("test plan")),
                "a4",
                sub("testplan.pdf"),
            )[0],
        }
        for name in self.FILES:
            step += 1
            say(f"writing {name}", step, steps)
            self.written.append(write_atomic(self.folder / name, makers[name]()))
        say("done", steps, steps)
        return self.written
