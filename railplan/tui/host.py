"""What dialogs and drill-down screens need from the app that hosts them (no import of the app)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from railplan.catalog import Catalog
from railplan.spec import Spec
from railplan.tui.runner import ProcessRunner


class Host(Protocol):
    """The RailplanApp as its screens see it: the spec, the catalog and the child-process runner."""

    spec_path: Path | None
    catalog: Catalog
    runner: ProcessRunner

    def spec_data(self) -> dict[str, Any]: ...

    def load_spec(self, spec: Spec, path: Path | None = None) -> None: ...

    def set_phases(self, phases: list[dict[str, Any]]) -> None: ...

    def notify(self, message: str) -> None: ...
