"""The TUI's phases field (in the Growth view) and the Growth view (pilot tests): the figures
are `railplan grow`'s, and Save keeps the phases in the spec."""

from __future__ import annotations

import json

from textual.widgets import DataTable, Input, Static

from railplan.tui.formspec import phases_data, phases_text
from railplan.tui.runner import InlineRunner

from .test_tui import SIZE, app, settle, sync
from .test_tui_drills import wait_drill


def test_the_phases_text_reads_and_writes_spec_phases():
    assert phases_data("su2=512, su4=1,024") == [
        {"name": "su2", "gpus": 512},
        {"name": "su4", "gpus": 1024},
    ]
    assert phases_data("a=8; b=16") == [{"name": "a", "gpus": 8}, {"name": "b", "gpus": 16}]
    assert phases_data("junk") == [{"name": "junk", "gpus": ""}]  # the spec check refuses it
    assert phases_text([{"name": "a", "gpus": 8}, {"name": "b", "gpus": 16}]) == "a=8, b=16"


@sync
async def test_growth_view_shows_the_grow_figures(cli, tmp_path) -> None:
    tui = app(runner=InlineRunner())
    async with tui.run_test(size=SIZE) as pilot:
        await settle(tui, pilot, done=True)
        await pilot.press("ctrl+g")
        await pilot.pause(0.3)
        screen = tui.screen
        assert screen.TITLE == "Growth"
        assert "no phases" in str(screen.query_one("#drill-note", Static).content)
        field = screen.query_one("#drill-phases", Input)
        field.focus()
        await pilot.press(*"half=abc", "enter")
        await pilot.pause(0.2)
        assert "phases.0" in str(screen.query_one("#drill-note", Static).content)
        await pilot.press("end", "shift+home", *"half=32", "enter")
        await wait_drill(tui, pilot)
        table = screen.query_one(DataTable)
        first = [str(c) for c in table.get_row_at(0)]
        note = str(screen.query_one("#drill-note", Static).content)
        assert "subset" in note
        saved = tui.spec_data()
    assert saved["phases"] == [{"name": "half", "gpus": 32}]
    spec = tmp_path / "tui.yaml"
    from railplan.spec import spec_from_dict, spec_to_yaml

    spec.write_text(spec_to_yaml(spec_from_dict(saved)))
    out = json.loads(cli("grow", str(spec), "--json", "--no-buy-later").out)
    step = out["steps"][0]
    assert first[0] == "half -> final"
    assert first[2] == f"{step['links']['added']:,}" and first[3] == str(step["moves"]["count"])
