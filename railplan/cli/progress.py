"""Rich progress displays on stderr for long library calls: a stage line or a page bar.

Shown only when stderr is a terminal and ``--quiet`` was not given, and only once the work has
run ``DELAY_S`` seconds, so a quick command prints nothing extra. The displays are transient:
they vanish when the work ends, leaving the command's own lines ("wrote ..."). The library
never prints: it calls back (``progress(message)`` for a stage, ``progress(done, total)`` for
pages or pairs), and these callbacks turn that into the display.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

ProgressFn = Callable[[int, int], None]
StageFn = Callable[[str], None]

#: seconds of work before a display appears (shorter runs stay silent)
DELAY_S = 2.0


def shown() -> bool:
    """Whether progress may be drawn: stderr is a terminal and the user did not ask for quiet."""
    from railplan.cli import common

    return not common.QUIET and sys.stderr.isatty()


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True, emoji=False)


@contextmanager
def _delayed(bar: Any) -> Iterator[None]:
    """Start ``bar`` (a rich Progress) after DELAY_S seconds of work; stop it at the end."""
    lock = threading.Lock()
    closed = False

    def start() -> None:
        with lock:
            if not closed:
                bar.start()

    timer = threading.Timer(DELAY_S, start)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        with lock:
            closed = True
            if bar.live.is_started:
                bar.stop()


@contextmanager
def progress_bar(label: str) -> Iterator[ProgressFn | None]:
    """Yield a ``progress(done, total)`` callback, or None when nothing may be drawn."""
    if not shown():
        yield None
        return
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(
        TextColumn(label),
        BarColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        console=_console(),
        transient=True,
        auto_refresh=True,
    )
    task = bar.add_task(label, total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total or None)

    with _delayed(bar):
        yield update


@contextmanager
def stages(label: str) -> Iterator[StageFn | None]:
    """Yield a ``progress(message)`` callback that shows the current stage with a spinner and
    the time spent, or None when nothing may be drawn."""
    if not shown():
        yield None
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Progress(
        SpinnerColumn(),
        TextColumn(f"{label}: {{task.description}}"),
        TimeElapsedColumn(),
        console=_console(),
        transient=True,
        auto_refresh=True,
    )
    task = bar.add_task("starting", total=None)

    def say(message: str) -> None:
        bar.update(task, description=message)

    with _delayed(bar):
        yield say
