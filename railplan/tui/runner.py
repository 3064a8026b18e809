"""Run library calls in child processes the TUI can stop, so stale work never holds up input."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Hashable, Iterator
from multiprocessing.connection import Connection, wait
from typing import Any

#: (key, function, arguments): the function and its arguments must pickle
Task = tuple[Hashable, Callable[..., Any], tuple[Any, ...]]
#: (key, finished without raising, result or exception)
Done = tuple[Hashable, bool, Any]
PRELOAD = [
    "railplan.tui.compute",
    "railplan.pipeline",
    "railplan.analysis.bom",
    "railplan.analysis.collisions",
    "railplan.compare",
]


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        result: tuple[str, Any] = ("ok", fn(*args))
    except Exception as exc:
        result = ("error", exc)
    try:
        conn.send(result)
    except Exception as exc:  # a result or exception that does not pickle
        conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


class InlineRunner:
    """Runs tasks one by one in the calling thread (no processes; cannot stop a running call)."""

    def run(self, tasks: list[Task], cancelled: Callable[[], bool]) -> Iterator[Done]:
        for key, fn, args in tasks:
            if cancelled():
                return
            try:
                yield key, True, fn(*args)
            except Exception as exc:
                yield key, False, exc


class WorkerDied(RuntimeError):
    """A child process ended without a result (killed, or it could not start)."""


class ProcessRunner:
    """Runs up to ``workers`` tasks at once, each in a forked child; cancelling kills them.

    Children come from a forkserver (a clean, single-threaded parent with railplan preloaded),
    so forking never copies the UI's threads. Where children cannot start (an unusual
    ``__main__``), the runner falls back to running tasks inline.
    """

    def __init__(self, workers: int | None = None, method: str = "forkserver") -> None:
        self.inline: InlineRunner | None = None
        self.started = False
        self.ctx: Any = multiprocessing.get_context(method)
        if method == "forkserver":
            self.ctx.set_forkserver_preload(PRELOAD)
            self._start_server()
        self.workers = workers or max(1, min(4, os.cpu_count() or 1))

    def _start_server(self) -> None:
        """Start the forkserver now, while stderr is still the terminal's (Textual swaps it)."""
        from multiprocessing import forkserver

        try:
            forkserver.ensure_running()
        except (OSError, ValueError):
            self.inline = InlineRunner()

    def run(self, tasks: list[Task], cancelled: Callable[[], bool]) -> Iterator[Done]:
        """Yield each task's outcome as it finishes; stop (killing the rest) once cancelled."""
        if self.inline is not None:
            yield from self.inline.run(tasks, cancelled)
            return
        for key, ok, value in self._run(tasks, cancelled):
            if isinstance(value, WorkerDied) and not self.started:
                self.inline = InlineRunner()
                yield from self.inline.run([t for t in tasks if t[0] == key], cancelled)
                continue
            if ok:
                self.started = True
            yield key, ok, value

    def _run(self, tasks: list[Task], cancelled: Callable[[], bool]) -> Iterator[Done]:
        pending = list(tasks)
        running: dict[Connection, tuple[Hashable, Any]] = {}
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    key, fn, args = pending.pop(0)
                    recv, send = self.ctx.Pipe(duplex=False)
                    proc = self.ctx.Process(target=_child, args=(send, fn, args), daemon=True)
                    proc.start()
                    send.close()
                    running[recv] = (key, proc)
                ready = wait(list(running), timeout=0.05)
                if cancelled():
                    return
                for conn in ready:
                    assert isinstance(conn, Connection)
                    key, proc = running.pop(conn)
                    try:
                        ok, value = conn.recv()
                    except EOFError:
                        ok, value = "error", WorkerDied(f"the process computing {key} died")
                    conn.close()
                    proc.join()
                    yield key, ok == "ok", value
        finally:
            for conn, (_, proc) in running.items():
                proc.terminate()
                proc.join()
                conn.close()
