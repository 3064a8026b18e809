"""SVG snapshots of every TUI screen at 80x24 and 140x45: the form with its summary, the
compare view, an error, the help, each drill-down (F2-F5, Ctrl+G) and each dialog (Save,
Load, Export), plus a check that no footer key is cut at 80 columns.

Regenerate after a deliberate change with ``pytest tests/test_tui_snapshots.py
--snapshot-update`` and review the SVGs (the report opens them side by side).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input
from textual.worker import WorkerState

from railplan.spec import load_spec
from railplan.tui.app import RailplanApp
from railplan.tui.dialogs import Dialog
from railplan.tui.runner import InlineRunner
from railplan.tui.screens import DrillScreen

from .conftest import EXAMPLES

#: 80x24 always; 140x45 with RAILPLAN_SLOW=1 (CI sets it for this file)
SIZES = [
    pytest.param((80, 24), id="80x24"),
    pytest.param(
        (140, 45),
        id="140x45",
        marks=pytest.mark.skipif(
            os.environ.get("RAILPLAN_SLOW") != "1", reason="140x45: RAILPLAN_SLOW=1"
        ),
    ),
]
#: a fixed folder for the dialogs (their paths and the Load tree are on screen)
FOLDER = Path("/tmp/railplan-tui-snapshots")

#: the app's own work (refresh, drill-downs, dialogs; a DirectoryTree's loader never ends)
OWN = (RailplanApp, DrillScreen, Dialog)
ACTIVE = (WorkerState.PENDING, WorkerState.RUNNING)

Run = Callable[[Pilot[Any]], Awaitable[None]]


def first_fit(small: bool = False) -> RailplanApp:
    """The default app (1,024 H100 GPUs) or the 64-GPU example, billing on first-fit racks
    (deterministic, unlike a timed solve), its work in this process (fast to start)."""
    spec = load_spec(EXAMPLES / "seed001-64gpu.yaml") if small else None
    return RailplanApp(spec, debounce=0.01, placement="first-fit", runner=InlineRunner())


async def finished(pilot: Pilot[Any]) -> None:
    """Wait until every stage of the latest refresh and every screen's work is on screen; stop
    the cursors blinking."""
    app = pilot.app
    assert isinstance(app, RailplanApp)
    await pilot.pause(app.debounce + 0.05)
    deadline = time.monotonic() + 600  # a loaded CI machine: wait for the work, never snap it
    while True:
        out = app.outcome
        busy = any(w.state in ACTIVE and isinstance(w.node, OWN) for w in app.workers)
        if not busy and app.shown == app.generation and (out is None or out.done):
            break
        assert time.monotonic() < deadline, "the TUI's work did not finish in 600 s"
        await pilot.pause(0.01)
    for widget in app.screen.query(Input):
        widget.cursor_blink = False
    await pilot.pause()


def keys(*pressed: str) -> Run:
    async def run(pilot: Pilot[Any]) -> None:
        await finished(pilot)
        await pilot.press(*pressed)
        await finished(pilot)

    return run


#: screen -> (the 64-GPU example?, keys from the form)
SCREENS: dict[str, tuple[bool, tuple[str, ...]]] = {
    "main": (False, ()),
    "compare": (False, ("f6",)),
    "invalid": (False, ("end", "backspace", "backspace", "backspace", "backspace", *"100")),
    "help": (True, ("f1",)),
    "bom": (True, ("f2",)),
    "cables": (True, ("f3",)),
    "links": (True, ("f4",)),
    "topology": (True, ("f5",)),
    "growth": (True, ("ctrl+g",)),
    "save": (True, ("ctrl+s",)),
    "load": (True, ("ctrl+o",)),
    "export": (True, ("f7",)),
}


@pytest.fixture
def folder(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in a fixed folder holding one spec and one subfolder (what Load's tree lists)."""
    shutil.rmtree(FOLDER, ignore_errors=True)
    (FOLDER / "field").mkdir(parents=True)
    shutil.copy(EXAMPLES / "seed001-64gpu.yaml", FOLDER / "seed001-64gpu.yaml")
    monkeypatch.chdir(FOLDER)
    return FOLDER


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen(snap_compare: Any, folder: Path, screen: str, size: tuple[int, int]) -> None:
    small, pressed = SCREENS[screen]
    assert os.getcwd() == str(folder)
    assert snap_compare(first_fit(small), terminal_size=size, run_before=keys(*pressed))
