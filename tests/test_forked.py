"""Work in a forked child (``sheets`` draws its labels there): the child's result comes back
whole, and a child that fails leaves the work to the parent, so result and error are the
plain call's."""

from __future__ import annotations

import os

import pytest

from railplan.forked import in_child

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")


def test_the_child_does_the_work_and_sends_it_back() -> None:
    parent = os.getpid()
    big = bytes(range(256)) * 40_000  # 10 MB: more than a pipe holds at once

    def work() -> tuple[bytes, int]:
        return str(os.getpid()).encode() + b"|" + big, 7

    data, pages = in_child(work)()
    pid, _, rest = data.partition(b"|")
    assert int(pid) != parent  # drawn in the child
    assert rest == big and pages == 7


def test_a_failing_child_leaves_the_work_to_the_parent() -> None:
    parent = os.getpid()

    def work() -> tuple[bytes, int]:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return b"parent", 1

    assert in_child(work)() == (b"parent", 1)


def test_an_error_of_the_work_is_raised_in_the_parent() -> None:
    def work() -> tuple[bytes, int]:
        raise ValueError("bad input")

    result = in_child(work)
    with pytest.raises(ValueError, match="bad input"):
        result()


def test_a_json_answer_comes_back_once() -> None:
    from railplan.forked import json_in_child

    parent = os.getpid()
    wait = json_in_child(lambda: {"pid": os.getpid(), "rows": [1, 2.5, None, "x"]})
    first = wait()
    assert first["pid"] != parent and first["rows"] == [1, 2.5, None, "x"]
    assert wait() is first  # waited for once: later calls give the same answer
