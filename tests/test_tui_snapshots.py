"""SVG snapshots of the TUI: the main screen, the compare view and an error, at fixed sizes.

Regenerate after a deliberate change with ``pytest tests/test_tui_snapshots.py
--snapshot-update`` and review the SVGs (the report opens them side by side).
"""

from __future__ import annotations

from typing import Any

from textual.pilot import Pilot
from textual.widgets import Input

from railplan.tui.app import RailplanApp


def first_fit() -> RailplanApp:
    """The default app, billing on first-fit racks (deterministic, unlike a timed solve)."""
    return RailplanApp(debounce=0.01, placement="first-fit")


async def finished(pilot: Pilot[Any]) -> None:
    """Wait until every stage of the latest refresh is on screen; stop the cursor blinking."""
    app = pilot.app
    assert isinstance(app, RailplanApp)
    for widget in app.query(Input):
        widget.cursor_blink = False
    await pilot.pause(app.debounce + 0.05)
    for _ in range(6000):
        out = app.outcome
        if app.shown == app.generation and (out is None or out.done):
            break
        await pilot.pause(0.01)
    await pilot.pause()


def test_main_screen_80x24(snap_compare):
    """The default cluster (1,024 H100 GPUs, qm9700, ROFT) with every figure in."""
    assert snap_compare(first_fit(), terminal_size=(80, 24), run_before=finished)


def test_compare_view_100x32(snap_compare):
    """F6: every family side by side, the cheapest marked, traffic figures in."""

    async def compare(pilot: Pilot[Any]) -> None:
        await finished(pilot)
        await pilot.press("f6")
        await finished(pilot)

    assert snap_compare(first_fit(), terminal_size=(100, 32), run_before=compare)


def test_invalid_value_80x24(snap_compare):
    """A GPU count that is not a multiple of the node's GPUs: the CLI's message, field marked."""

    async def invalid(pilot: Pilot[Any]) -> None:
        await finished(pilot)
        await pilot.press("end", "backspace", "backspace", "backspace", "backspace", *"100")
        await finished(pilot)

    assert snap_compare(first_fit(), terminal_size=(80, 24), run_before=invalid)
