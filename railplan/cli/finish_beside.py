"""A deferred build checked (and billed) in a forked child while the command writes its files."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from railplan.forked import Result, in_child

if TYPE_CHECKING:
    from railplan.pipeline.build import Build


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
