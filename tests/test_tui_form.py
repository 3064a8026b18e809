"""The TUI at 80 columns and its form's manners: footer keys, help scrolling, the NIC note,
Name without a re-plan, errors in the form's labels, numbers with thousands separators."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from railplan.tui.compute import FamilyResult, Outcome
from railplan.tui.formspec import FIELDS, form_data, form_message, plain_number
from railplan.tui.views import compare_table

from .test_tui import SMALL, app, choose, screen_text, settle, status, sync, type_into

NARROW = (80, 24)


def _row(family: str, switches: int, cost: float) -> FamilyResult:
    summary: dict[str, Any] = {
        "switch_model": "qm9700",
        "tiers": 2,
        "switches": {"leaf": switches, "spine": 0, "core": 0, "total": switches},
        "lower_bound_switches": switches,
        "links": {"node_leaf": 64},
    }
    return FamilyResult(family, summary, totals={"cost_usd": cost, "power_w": 1000.0})


def test_compare_table_puts_the_cheapest_family_first():
    import railplan

    spec = railplan.spec_from_dict(SMALL)
    rows = (_row("roft", 6, 300.0), _row("matrix", 4, 250.0), _row("rail-only", 4, 100.0))
    out = Outcome(spec, True, rows, rows[2], done=True)
    columns, cells = compare_table(out)
    assert [key for key, _ in columns] == ["what", "rail-only", "roft", "matrix"]
    assert str(columns[1][1]) == "* rail-only"
    assert [str(c) for c in cells[0]] == ["switch model", "qm9700", "qm9700", "qm9700"]


@sync
async def test_compare_at_80_columns_shows_the_cheapest_family():
    tui = app({**SMALL, "cluster": {"gpus": 256, "node": "hgx-h100-8x400g"}})
    async with tui.run_test(size=NARROW) as pilot:
        await settle(tui, pilot)
        await pilot.press("f6")
        await settle(tui, pilot, done=True)
        cheapest = tui.outcome.cheapest if tui.outcome else None
        assert cheapest
        table = tui.query_one("#compare-table", DataTable)
        assert str(table.ordered_columns[1].key.value) == cheapest
        text = screen_text(tui)
        assert f"* {cheapest}" in text
        note = tui.query_one("#compare-note", Static).content
        assert "* recommended" in str(note)


@sync
async def test_footer_at_80_columns_shows_f8_escape_and_ctrl_q():
    tui = app()
    async with tui.run_test(size=NARROW) as pilot:
        await settle(tui, pilot)
        footer = screen_text(tui).rstrip("\n").splitlines()[-1]
        for shown in ("f1 Help", "f2-f5 View", "f6 Compare", "^s Save", "^o Load", "f7 Export"):
            assert shown in footer
        assert "f8 Zoom" in footer and "esc Form" in footer and "^q Quit" in footer
        # and they do what they say: F8 hides the form, Escape brings it back and focuses it
        await pilot.press("f8")
        assert not tui.query_one("#form").display
        await pilot.press("escape")
        assert tui.query_one("#form").display
        assert tui.focused is tui.query_one("#f-gpus")
        # F2-F5 all still work although the footer shows one entry for them
        await pilot.press("f4")
        await pilot.pause(0.2)
        assert type(tui.screen).__name__ != "Screen"
        await pilot.press("escape")
        await pilot.press("ctrl+q")
    assert tui.return_code == 0


@sync
async def test_help_scrolls_with_the_keyboard_and_the_mouse():
    tui = app()
    async with tui.run_test(size=NARROW) as pilot:
        await settle(tui, pilot)
        await pilot.press("f1")
        await pilot.pause(0.3)
        scroll = tui.screen.query_one("#help-scroll", VerticalScroll)
        assert tui.focused is scroll  # the keys scroll it; it is a scroll container (mouse wheel)
        assert scroll.max_scroll_y > 0  # the help is longer than 24 lines
        assert "as on the CLI" not in screen_text(tui)
        # the mouse wheel over the help scrolls it (Pilot has no public wheel helper)
        await pilot._post_mouse_events([events.MouseScrollDown], widget=scroll, offset=(10, 5))
        await pilot.pause(0.3)
        assert scroll.scroll_y > 0
        await pilot.press("home")
        await pilot.pause(0.3)
        assert scroll.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause(0.3)
        assert scroll.scroll_y > 0
        await pilot.press("end")
        await pilot.pause(0.3)
        assert scroll.scroll_y == scroll.max_scroll_y
        assert "as on the CLI" in screen_text(tui)


@sync
async def test_nic_note_says_typed_ports_and_speed_replace_the_chosen_nic():
    tui = app()
    async with tui.run_test(size=(100, 32)) as pilot:
        await settle(tui, pilot)
        note = tui.query_one("#nic-note", Static)
        assert not note.display
        await type_into(pilot, "port_speed_gbps", "200")  # NIC "from node": nothing chosen
        await settle(tui, pilot)
        assert not note.display
        await choose(pilot, "nic", "cx7-400g")
        await settle(tui, pilot)
        assert note.display
        assert str(note.content) == "cx7-400g: Port Gb/s 200 replaces its 400"
        assert "cx7-400g: Port Gb/s 200" in screen_text(tui)
        assert tui.outcome is not None and tui.outcome.summary is not None
        assert tui.outcome.summary["port_speed_gbps"] == 200  # what the note says is planned
        await type_into(pilot, "port_speed_gbps", "400")  # the NIC's own speed: nothing replaced
        await settle(tui, pilot)
        assert not note.display


@sync
async def test_typing_a_name_retitles_without_replanning():
    tui = app()
    async with tui.run_test(size=NARROW) as pilot:
        await settle(tui, pilot, done=True)
        generation, outcome = tui.generation, tui.outcome
        assert outcome is not None and outcome.done
        await type_into(pilot, "name", "pod-a")
        await pilot.pause(0.3)
        assert tui.generation == generation  # no re-plan
        assert tui.outcome is not None and tui.outcome.rows == outcome.rows
        assert tui.outcome.spec.name == "pod-a"  # Export and Save use the new name
        assert tui.title == "railplan: pod-a"
        assert tui.spec_data()["name"] == "pod-a"
        await type_into(pilot, "name", "bad name!")  # a bad name is still reported
        await settle(tui, pilot)
        assert "Name" in status(tui) and tui.query_one("#row-name").has_class("-invalid")
        await type_into(pilot, "name", "pod-b")
        await settle(tui, pilot)
        assert tui.outcome is not None and tui.outcome.spec.name == "pod-b"
        assert tui.outcome.summary is not None


def test_form_message_uses_the_form_labels():
    assert form_message("cluster.gpus: 100 is not a multiple of 8") == (
        "GPUs: 100 is not a multiple of 8"
    )
    assert form_message("cluster.nics_per_node: too many; cluster.nic: unknown") == (
        "NICs/node: too many; NIC: unknown"
    )
    for field in FIELDS:
        if field.path:
            assert form_message(f"{field.path}: x") == f"{field.label}: x"


@sync
async def test_errors_in_the_tui_name_the_form_labels():
    tui = app()
    async with tui.run_test(size=(100, 32)) as pilot:
        await type_into(pilot, "gpus", "100")
        await settle(tui, pilot)
        assert status(tui).startswith("GPUs: 100 is not a multiple")
        assert "cluster.gpus" not in status(tui)
        await type_into(pilot, "planes", "3")
        await type_into(pilot, "gpus", "64")
        await settle(tui, pilot)
        assert "Planes" in status(tui) and "fabric.planes" not in status(tui)


@pytest.mark.parametrize("text", ["1,024", "1 024", "1_024", "1024"])
def test_numbers_with_thousands_separators(text: str):
    assert plain_number(text) == "1024"
    data = form_data({}, {"gpus": text, "node": "hgx-h100-8x400g"})
    assert data["cluster"]["gpus"] == 1024


@pytest.mark.parametrize("text", ["1,02", "10,24", "1,024 000", "1.024"])
def test_misgrouped_numbers_are_left_for_the_spec_to_reject(text: str):
    assert plain_number(text) == text


@sync
async def test_typed_1_024_plans_1024_gpus():
    tui = app()
    async with tui.run_test(size=(100, 32)) as pilot:
        await type_into(pilot, "gpus", "1,024")
        await settle(tui, pilot)
        assert tui.outcome is not None and tui.outcome.summary is not None, status(tui)
        assert tui.outcome.summary["gpus"] == 1024
