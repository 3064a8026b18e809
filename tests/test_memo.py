"""by_identity remembers a result for the very objects it was computed from: an equal but new
object is computed afresh, and the cache keeps a few results at most."""

from __future__ import annotations

from railplan.design.memo import KEEP, by_identity


def test_the_same_objects_answer_from_the_cache_and_equal_new_ones_do_not() -> None:
    cache: dict = {}  # type: ignore[type-arg]
    calls: list[int] = []

    def compute(value: tuple[int, ...]) -> int:
        calls.append(1)
        return sum(value)

    first = (1, 2, 3)
    assert by_identity(cache, (first,), lambda: compute(first)) == 6
    assert by_identity(cache, (first,), lambda: compute(first)) == 6
    assert len(calls) == 1
    other = tuple([1, 2, 3])  # equal, another object
    assert other is not first
    assert by_identity(cache, (other,), lambda: compute(other)) == 6
    assert len(calls) == 2
    for n in range(3 * KEEP):
        value = tuple(range(n + 10))
        by_identity(cache, (value,), lambda value=value: compute(value))  # type: ignore[misc]
    assert len(cache) <= KEEP
