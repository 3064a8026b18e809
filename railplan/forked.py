"""Work done in a forked child while the command goes on, its result read back through a pipe.

``sheets`` draws the labels in a child while the parent draws the sheets: the two are
independent, single-threaded and CPU-bound, so on two cores the labels cost no wall time.
The child shares the laid-out design copy-on-write (nothing is planned or loaded again) and
sends back its bytes; it draws the very document the parent would have drawn. Where there is
no ``fork``, or the child fails for any reason, the parent does the work itself, so the result
and any error are what the plain call gives.

``build(..., deferred=True)`` checks its topology in a child while it is laid out, and
``plan -o`` and ``cables`` check (and ``plan`` bills) the laid-out design in one while they
write their files (``cli/finish_beside.py``); nothing is moved into place before the checks
passed.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable
from typing import Any

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


def json_in_child(work: Callable[[], Any]) -> Callable[[], Any]:
    """``work``'s answer (a JSON value) worked out in a forked child (``in_child``); the
    returned call waits for it once and gives the same answer to every later call."""
    result = in_child(lambda: (json.dumps(work()).encode(), 0))
    answer: list[Any] = []

    def wait() -> Any:
        if not answer:
            answer.append(json.loads(result()[0]))
        return answer[0]

    return wait
