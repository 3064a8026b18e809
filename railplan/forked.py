"""Work done in a forked child while the command goes on, its result read back through a pipe.

``sheets`` draws the labels in a child while the parent draws the sheets: the two are
independent, single-threaded and CPU-bound, so on two cores the labels cost no wall time.
The child shares the laid-out design copy-on-write (nothing is planned or loaded again) and
sends back its bytes; it draws the very document the parent would have drawn. Where there is
no ``fork``, or the child fails for any reason, the parent does the work itself, so the result
and any error are what the plain call gives.

``plan -o`` and ``cables`` check (and ``plan`` bills) the laid-out design in a child the same
way while the parent writes its files; nothing is moved into place before the check passed
(``finished_beside``).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from railplan.pipeline.build import Build

Result = tuple[bytes, int]


#: Linux's prctl option that sends the child a signal when its parent ends
PR_SET_PDEATHSIG = 1


def _end_with(parent: int) -> None:
    """Have the kernel end this child when its parent ends (Linux; elsewhere the child ends
    when it finds the pipe closed)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent ended before the call
        os._exit(1)


def _child(work: Callable[[], Result], write_fd: int, parent: int) -> None:
    """In the child: do ``work``, write the page count and the bytes, leave without cleanup."""
    code = 1
    try:
        # a signal ends the child at once (the parent's signal thread is not here)
        signal.set_wakeup_fd(-1)
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_DFL)
        _end_with(parent)
        data, pages = work()
        with os.fdopen(write_fd, "wb") as out:
            out.write(pages.to_bytes(8, "big"))
            out.write(data)
        code = 0
    except BaseException:  # the parent does the work again and reports what went wrong
        code = 1
    finally:
        os._exit(code)


def in_child(work: Callable[[], Result]) -> Callable[[], Result]:
    """Start ``work`` (returning bytes and a page count) in a forked child; return a call that
    waits for its result (or, if the child could not give one, does the work here)."""
    if not hasattr(os, "fork"):
        return work
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return work
    if pid == 0:  # pragma: no cover - the child ends in os._exit, coverage never sees it
        os.close(read_fd)
        _child(work, write_fd, parent)
    os.close(write_fd)

    def result() -> Result:
        with os.fdopen(read_fd, "rb") as pipe:
            data = pipe.read()
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0 or len(data) < 8:
            return work()
        return data[8:], int.from_bytes(data[:8], "big")

    return result


def finished_beside(built: Build, *, bill: bool = True) -> Callable[[], dict[str, Any] | None]:
    """Check (and with ``bill``, bill) a deferred build in a forked child while the caller
    goes on. The returned call waits for the child, once (later calls give the same answer):
    the bill's ``to_json()`` (None without a bill), or the ``AssertionError`` ``finish`` raises
    when the check fails. A finished build needs nothing more: its call gives None."""
    if built.finished:
        return lambda: None
    from railplan.pipeline.build import finish, settled

    built = settled(built)  # the topology's verdict, here: the child finds the wiring sound

    def work() -> Result:
        done = finish(built, bill=bill)
        return json.dumps(done.bom.to_json() if done.bom is not None else None).encode(), 0

    result = in_child(work)
    answer: list[dict[str, Any] | None] = []

    def wait() -> dict[str, Any] | None:
        if not answer:
            answer.append(json.loads(result()[0]))
        return answer[0]

    return wait
