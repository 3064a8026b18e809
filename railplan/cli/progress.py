"""A rich progress bar on stderr for long library calls (shown only on a terminal)."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

ProgressFn = Callable[[int, int], None]


@contextmanager
def progress_bar(label: str) -> Iterator[ProgressFn | None]:
    """Yield a ``progress(done, total)`` callback, or None when stderr is not a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    console = Console(stderr=True)
    with Progress(
        TextColumn(label),
        BarColumn(),
        TaskProgressColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total or None)

        yield update
