"""Progress on long runs: the library calls back each stage, the CLI draws it on a terminal only.

The display appears once the work has run ``progress.DELAY_S`` seconds, never when stderr is not
a terminal or with ``--quiet``, and vanishes when the work ends (transient).
"""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

import railplan
from railplan.cli import common, progress
from railplan.pipeline.build import build
from tests.conftest import EXAMPLES


def test_build_reports_every_stage_in_order() -> None:
    said: list[str] = []
    build(railplan.load_spec(EXAMPLES / "seed001-64gpu.yaml"), progress=said.append, method="naive")
    stages = [
        "planning the topology",
        "placing switches and cabling",
        "routing every cable along the trays",
        "choosing media and cabling",
        "checking the laid-out design",
        "billing",
    ]
    at = [next(i for i, m in enumerate(said) if m == s) for s in stages]
    assert at == sorted(at), said
    assert any(m.startswith("layout: ") for m in said) and any(
        m.startswith("cabling: ") for m in said
    )


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """stderr is a terminal; the display is drawn into a buffer at once (no delay)."""
    out = io.StringIO()
    monkeypatch.setattr(progress.sys.stderr, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(progress, "shown", lambda: not common.QUIET)
    monkeypatch.setattr(
        progress, "_console", lambda: Console(file=out, force_terminal=True, width=80)
    )
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    monkeypatch.setattr(common, "QUIET", False)
    return out


def test_stages_draw_the_current_stage_then_vanish(terminal: io.StringIO) -> None:
    with progress.stages("plan") as say:
        assert say is not None
        say("placing switches and cabling")
        time.sleep(0.4)  # a few refreshes
    text = terminal.getvalue()
    assert "plan: placing switches and cabling" in text
    assert "0:00:0" in text  # the time spent


def test_a_short_run_draws_nothing(terminal: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY_S", 30.0)
    with progress.progress_bar("sheets") as bar:
        assert bar is not None
        bar(1, 10)
    assert terminal.getvalue() == ""


def test_quiet_or_no_terminal_draws_nothing(terminal: io.StringIO, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(common, "QUIET", True)
    with progress.stages("plan") as say, progress.progress_bar("sheets") as bar:
        assert say is None and bar is None
    monkeypatch.undo()
    monkeypatch.setattr(common, "QUIET", False)
    assert not progress.shown()  # pytest's captured stderr is no terminal


def test_quiet_is_a_flag_of_every_design_command(cli) -> None:  # type: ignore[no-untyped-def]
    res = cli("plan", EXAMPLES / "seed000-2node.yaml", "--no-layout", "--quiet")
    assert res.code == 0 and common.QUIET
    res = cli("plan", EXAMPLES / "seed000-2node.yaml", "--no-layout")
    assert res.code == 0 and not common.QUIET
    for command in ("compare", "analyze", "cables", "sheets", "testplan", "asbuilt", "grade"):
        assert "--quiet" in cli(command, "--help").out, command
