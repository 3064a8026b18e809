"""Run library calls in child processes the TUI can stop, so stale work never holds up input.

A task is (key, function, arguments). A function may return a value or be a generator; every
value it yields comes back as it is produced, so one child can report a family's counts first
and its bill later. Only small results should cross: unpickling holds the UI process's GIL.
"""

from __future__ import annotations

import contextlib
import inspect
import multiprocessing
import os
from collections.abc import Callable, Hashable, Iterator, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

#: (key, function, arguments): the function and its arguments must pickle
Task = tuple[Hashable, Callable[..., Any], tuple[Any, ...]]
#: (key, finished without raising, a value or the exception)
Done = tuple[Hashable, bool, Any]
PRELOAD = [
    "railplan.tui.compute",
    "railplan.tui.details",
    "railplan.pipeline.layout",
    "railplan.physical.bom",
    "railplan.traffic.collisions",
    "railplan.pipeline.compare",
]


class Runner(Protocol):
    def run(self, tasks: Sequence[Task], cancelled: Callable[[], bool]) -> Iterator[Done]: ...


def _values(fn: Callable[..., Any], args: tuple[Any, ...]) -> Iterator[Any]:
    result = fn(*args)
    if inspect.isgenerator(result):
        yield from result
    else:
        yield result


#: children yield the CPU to the UI process (niceness added in each child)
CHILD_NICE = 10


def _child(conn: Connection, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.nice(CHILD_NICE)
    try:
        for value in _values(fn, args):
            conn.send(("item", value))
        conn.send(("end", None))
    except Exception as exc:
        try:
            conn.send(("error", exc))
        except Exception as unpicklable:  # the exception itself does not pickle
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {unpicklable}")))
    finally:
        conn.close()


class InlineRunner:
    """Runs tasks one by one in the calling thread (no processes; a running call cannot stop)."""

    def run(self, tasks: Sequence[Task], cancelled: Callable[[], bool]) -> Iterator[Done]:
        for key, fn, args in tasks:
            try:
                for value in _values(fn, args):
                    if cancelled():
                        return
                    yield key, True, value
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

    def __init__(self, workers: int = 4, method: str = "forkserver") -> None:
        self.inline: InlineRunner | None = None
        self.started = False
        self.workers = workers
        self.ctx: Any = multiprocessing.get_context(method)
        if method == "forkserver":
            self.ctx.set_forkserver_preload(PRELOAD)
            self._start_server()

    def _start_server(self) -> None:
        """Start the forkserver now, while stderr is still the terminal's (Textual swaps it)."""
        from multiprocessing import forkserver

        try:
            forkserver.ensure_running()
        except (OSError, ValueError):
            self.inline = InlineRunner()

    def run(self, tasks: Sequence[Task], cancelled: Callable[[], bool]) -> Iterator[Done]:
        """Yield each value as a task produces it; stop (killing the rest) once cancelled."""
        if self.inline is not None:
            yield from self.inline.run(tasks, cancelled)
            return
        for key, ok, value in self._run(tasks, cancelled):
            if isinstance(value, WorkerDied) and not self.started:
                self.inline = InlineRunner()
                yield from self.inline.run([t for t in tasks if t[0] == key], cancelled)
                continue
            self.started = True
            yield key, ok, value

    def _start(self, task: Task) -> tuple[Connection, tuple[Hashable, Any]]:
        key, fn, args = task
        recv, send = self.ctx.Pipe(duplex=False)
        proc = self.ctx.Process(target=_child, args=(send, fn, args), daemon=True)
        proc.start()
        send.close()
        return recv, (key, proc)

    def _run(self, tasks: Sequence[Task], cancelled: Callable[[], bool]) -> Iterator[Done]:
        pending = list(tasks)
        running: dict[Connection, tuple[Hashable, Any]] = {}
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    conn, job = self._start(pending.pop(0))
                    running[conn] = job
                ready = wait(list(running), timeout=0.05)
                if cancelled():
                    return
                for ready_conn in ready:
                    assert isinstance(ready_conn, Connection)
                    conn = ready_conn
                    key, proc = running[conn]
                    try:
                        kind, value = conn.recv()
                    except EOFError:
                        kind, value = "error", WorkerDied(f"the process computing {key} died")
                    if kind == "item":
                        yield key, True, value
                        continue
                    del running[conn]
                    conn.close()
                    proc.join()
                    if kind == "error":
                        yield key, False, value
        finally:
            for conn, (_, proc) in running.items():
                proc.terminate()
                proc.join()
                conn.close()
