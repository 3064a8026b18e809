"""The collector pause of big jobs: off inside, back on after (also on errors), nested, and a
collector the caller turned off stays off; a whole build runs inside one pause; a console run
exits once its output is flushed."""

from __future__ import annotations

import gc
import importlib
import subprocess
import sys
from collections.abc import Iterator

import pytest

from railplan import gc_pause
from railplan.pipeline import build as build_module
from railplan.pipeline.build import build
from tests.conftest import EXAMPLES, ROOT, make_spec


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_paused_turns_collection_off_inside_and_back_on_after() -> None:
    with gc_pause.paused():
        assert not gc.isenabled()
        with gc_pause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause leaves the outer one's state alone
    assert gc.isenabled()


def test_paused_turns_collection_back_on_when_the_block_raises() -> None:
    with pytest.raises(ValueError), gc_pause.paused():
        raise ValueError("bad input")
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    with gc_pause.paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
    gc.enable()


def test_build_runs_with_the_collector_paused_and_restores_it(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    seen: list[bool] = []
    plan = build_module.plan

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return plan(*args, **kwargs)

    monkeypatch.setattr(build_module, "plan", spy)
    built = build(make_spec(64, "dgx-h100", switches=["qm9700"]))
    assert seen == [False] and built.bom is not None
    assert gc.isenabled()


def test_console_run_flushes_everything_before_it_exits() -> None:
    """``railplan`` ends with os._exit after flushing: the whole JSON arrives, exit code 0,
    and a refusal still exits 2 with its sentence."""
    run = [sys.executable, "-m", "railplan", "plan", str(EXAMPLES / "h100-1k.yaml"), "--json"]
    done = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("}") and '"bom"' in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "railplan", "plan", "--gpus", "-8", "--node", "dgx-h100"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("railplan: error: ")


def test_console_run_keeps_the_collector_off_to_the_end(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A batch command from the console runs with the collector off (nothing to walk the
    finished design or the handouts' objects) and ends through ``_exit_now``."""
    app = importlib.import_module("railplan.cli.app")

    seen: list[tuple[str, bool]] = []

    def command(argv):  # type: ignore[no-untyped-def]
        seen.append(("run", gc.isenabled()))
        return 0

    monkeypatch.setattr(app, "_guarded", command)
    monkeypatch.setattr(app, "_exit_now", lambda code: seen.append(("exit", gc.isenabled())))
    app._console_run(["plan", "--help"])
    assert seen == [("run", False), ("exit", False)]


def test_the_tui_and_in_process_calls_keep_the_collector(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The TUI runs for hours and tests call ``main([...])``: neither turns the collector off."""
    app = importlib.import_module("railplan.cli.app")

    monkeypatch.setattr(app, "_run", lambda argv: 0)
    monkeypatch.setattr(app.sys, "argv", ["railplan", "tui"])
    with pytest.raises(SystemExit):
        app.main()
    assert gc.isenabled()
    with pytest.raises(SystemExit):
        app.main(["plan", "--help"])
    assert gc.isenabled()
