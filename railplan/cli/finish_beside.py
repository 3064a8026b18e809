"""A deferred build checked (and billed) in a forked child while the command writes its files."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from railplan.forked import json_in_child

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

    def work() -> dict[str, Any] | None:
        done = finish(built, bill=bill)
        return done.bom.to_json() if done.bom is not None else None

    return json_in_child(work)
