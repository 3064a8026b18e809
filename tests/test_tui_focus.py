"""Keyboard reach of the TUI (pilot tests): Tab visits every control of the form and of the
compare view in order and comes round again, the focused field is marked, Right walks the
compare table's families one by one, and a burst of keys with Backspace loses none."""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Label

from railplan.spec import load_spec
from railplan.tui.app import RailplanApp
from railplan.tui.formspec import FIELDS
from railplan.tui.runner import InlineRunner

from .conftest import EXAMPLES
from .test_tui import sync
from .test_tui_snapshots import finished

FORM = [f"f-{f.id}" for f in FIELDS]


def small() -> RailplanApp:
    spec = load_spec(EXAMPLES / "seed001-64gpu.yaml")
    return RailplanApp(spec, debounce=0.01, placement="first-fit", runner=InlineRunner())


def name(widget: Any) -> str:
    return str(widget.id or type(widget).__name__)


async def tab_round(pilot: Pilot[Any], start: str, stops: int) -> list[str]:
    """The focus after each of ``stops`` Tabs, starting on the widget ``start``."""
    app = pilot.app
    app.query_one(f"#{start}").focus()
    await pilot.pause()
    seen = [name(app.focused)]
    for _ in range(stops):
        await pilot.press("tab")
        seen.append(name(app.focused))
    return seen


@sync
async def test_tab_visits_every_form_field_then_the_results_in_order() -> None:
    tui = small()
    async with tui.run_test(size=(80, 24)) as pilot:
        await finished(pilot)
        # every field (inputs and selects alike), the result tabs, the summary's scroll, round
        expected = [*FORM, "ContentTabs", "VerticalScroll", FORM[0]]
        assert await tab_round(pilot, FORM[0], len(expected) - 1) == expected
        assert len(FORM) == 15
        # and Shift+Tab goes back the same way
        await pilot.press("shift+tab")
        assert name(tui.focused) == "VerticalScroll"


@sync
async def test_tab_reaches_the_compare_table_and_right_walks_its_families() -> None:
    tui = small()
    async with tui.run_test(size=(80, 24)) as pilot:
        await finished(pilot)
        await pilot.press("f6")
        await finished(pilot)
        expected = [*FORM, "ContentTabs", "VerticalScroll", "compare-table", FORM[0]]
        assert await tab_round(pilot, FORM[0], len(expected) - 1) == expected
        await pilot.press("shift+tab")
        table = tui.query_one("#compare-table", DataTable)
        assert tui.focused is table
        families = [str(c.value) for c in table.columns][1:]
        assert sorted(families) == ["fat-tree", "matrix", "rail-only", "roft"]
        walked = []
        for _ in families:
            walked.append(families[table.cursor_column - 1])
            await pilot.press("right")
        assert walked == families  # one family per press, every one reachable
        # Enter on a column plans that family alone
        await pilot.press("left", "left", "left")
        chosen = families[table.cursor_column - 1]
        await pilot.press("enter")
        await finished(pilot)
        assert tui.form.values()["topology"] == chosen


@sync
async def test_the_focused_field_is_marked() -> None:
    tui = small()
    async with tui.run_test(size=(80, 24)) as pilot:
        await finished(pilot)
        for field in ("f-gpus", "f-node", "f-topology"):
            tui.query_one(f"#{field}").focus()
            await pilot.pause()
            labels = {
                str(row.id).removeprefix("row-"): row.query_one(Label) for row in tui.query(".row")
            }
            bold = {k for k, lab in labels.items() if lab.rich_style.bold}
            assert bold == {field.removeprefix("f-")}, field


@sync
async def test_a_burst_of_keys_with_backspace_loses_none() -> None:
    tui = small()
    async with tui.run_test(size=(80, 24)) as pilot:
        await finished(pilot)
        gpus = tui.query_one("#f-gpus", Input)
        gpus.focus()
        await pilot.press("end", "backspace", "backspace", *"1,0", "backspace", "backspace",
                          *"2_8", "backspace", "backspace", "backspace", *"28")  # fmt: skip
        await finished(pilot)
        assert gpus.value == "128"
        assert tui.spec is not None and tui.spec.cluster.gpus == 128
