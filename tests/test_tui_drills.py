"""Drill-down screens open from each other and while work runs, and always fill (pilot tests)."""

from __future__ import annotations

import threading
from itertools import permutations
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Static, TextArea

import railplan
from railplan.tui.runner import InlineRunner
from railplan.tui.screens import DrillScreen

from .conftest import EXAMPLES
from .test_tui import SIZE, app, settle, sync

KEYS = {"f2": "Bill of materials", "f3": "Cable schedule", "f4": "Hottest links", "f5": "Topology"}


async def wait_drill(tui: Any, pilot: Pilot[Any]) -> None:
    """Until the screen on show has its content (at most 60 s; the app's refresh may go on)."""
    for _ in range(3000):
        await pilot.pause(0.02)
        if filled(tui.screen):
            return


WAITING = ("laying out", "analyzing", "planning", "still being computed")


def filled(screen: Any) -> bool:
    """The drill-down shows its content: the topology text, or its table with the count of
    rows in the note (the hottest links of a fabric without collisions are none at all)."""
    if not isinstance(screen, DrillScreen):
        return False
    texts = screen.query(TextArea)
    if texts:
        return "plane 0" in texts.first().text
    note = str(screen.query_one("#drill-note", Static).content)
    rows = screen.query_one(DataTable).row_count
    done = "row(s)" in note and not any(w in note for w in WAITING)
    return done and (rows > 0 or screen.TITLE == "Hottest links")


@sync
async def test_every_drill_down_opens_from_every_other_and_fills() -> None:
    tui = app(runner=InlineRunner())
    async with tui.run_test(size=SIZE) as pilot:
        await settle(tui, pilot, done=True)
        for first, second in permutations(KEYS, 2):
            await pilot.press(first)
            await wait_drill(tui, pilot)
            assert KEYS[first] == tui.screen.TITLE and filled(tui.screen), first
            await pilot.press(second)
            await wait_drill(tui, pilot)
            screen = tui.screen
            assert KEYS[second] == screen.TITLE and filled(screen), (first, second)
            assert len(tui.screen_stack) == 2  # the first one was closed, not stacked
            await pilot.press("escape")
            await pilot.pause()
        assert tui.outcome is not None and tui.outcome.done  # the refresh was never cancelled


class HeldBill(InlineRunner):
    """Holds every bill until ``release`` is set, so a screen can open while it is computed."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def run(self, tasks: Any, cancelled: Any) -> Any:
        for key, ok, value in super().run(tasks, cancelled):
            if isinstance(value, tuple) and value and value[0] == "bill":
                while not self.release.wait(0.05):
                    if cancelled():
                        return
            yield key, ok, value


@sync
async def test_drill_downs_opened_while_the_bill_is_computed_fill_when_it_comes() -> None:
    runner = HeldBill()
    tui = app(runner=runner)
    async with tui.run_test(size=SIZE) as pilot:
        await settle(tui, pilot)  # counts on screen, the bill held back
        assert tui.outcome is not None and tui.outcome.bom is None
        for key in KEYS:  # every drill-down opens while the refresh is still working
            await pilot.press(key)
            await pilot.pause()
            assert KEYS[key] == tui.screen.TITLE
            if key == "f2":
                assert "still being computed" in str(tui.screen.query_one("#drill-note").content)
            await wait_drill(tui, pilot) if key != "f2" else None
            assert key == "f2" or filled(tui.screen), key
        await pilot.press("f2")
        await pilot.pause()
        runner.release.set()  # the bill arrives behind the open screen
        await settle(tui, pilot, done=True)
        await pilot.pause()
        bom = tui.outcome.bom if tui.outcome else None
        assert bom is not None and filled(tui.screen)
        assert tui.screen.query_one(DataTable).row_count == len(bom.lines)


# -- save asks before overwriting, saves beside an opened spec, creates no folders -------------


@sync
async def test_save_over_an_existing_file_asks_first(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    original = "# our site's notes\n" + (EXAMPLES / "h100-1k.yaml").read_text(encoding="utf-8")
    opened = tmp_path / "site.yaml"
    opened.write_text(original, encoding="utf-8")
    tui = app(spec_path=opened, runner=InlineRunner())
    async with tui.run_test(size=SIZE) as pilot:
        await settle(tui, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        path_input = tui.screen.query_one("#dialog-path", Input)
        assert path_input.value == str(tmp_path / "site-tui.yaml")  # beside the opened spec
        await pilot.press("end", "shift+home", *str(opened), "enter")
        await pilot.pause()
        assert opened.read_text(encoding="utf-8") == original  # not yet
        message = str(tui.screen.query_one("#dialog-message", Static).content)
        assert "exists and would be replaced" in message
        await pilot.press("end", "shift+home", *"nope/new.yaml", "enter")
        await pilot.pause()
        assert "does not exist" in str(tui.screen.query_one("#dialog-message", Static).content)
        assert not (tmp_path / "nope").exists()
        await pilot.press("end", "shift+home", *str(opened), "enter")  # asks again
        await pilot.pause()
        assert opened.read_text(encoding="utf-8") == original
        await pilot.press("enter")  # the second Enter on the same path replaces it
        await pilot.pause()
        assert opened.read_text(encoding="utf-8") != original
        assert railplan.load_spec(opened).cluster.gpus == 64  # the form's cluster
