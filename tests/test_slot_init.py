"""slot_init: the faster __init__ builds the very records dataclass's own __init__ builds."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from railplan.design.types import Cable, Link, Placement, PlantSegment
from railplan.physical.media_types import MediaChoice
from railplan.slot_init import slot_init


@dataclasses.dataclass(frozen=True, slots=True)
class _Plain:
    a: str
    b: int
    c: float = 1.5
    d: tuple[int, ...] = ()


_Fast: Any = slot_init(
    dataclasses.make_dataclass(
        "_Fast",
        [("a", str), ("b", int), ("c", float, 1.5), ("d", tuple, ())],
        frozen=True,
        slots=True,
    )
)


@given(st.text(max_size=5), st.integers(), st.floats(allow_nan=False), st.tuples(st.integers()))
def test_same_fields_as_dataclass_init(a: str, b: int, c: float, d: tuple[int, ...]) -> None:
    slow, fast = _Plain(a, b, c, d), _Fast(a, b, c, d)
    assert dataclasses.astuple(slow) == dataclasses.astuple(fast)
    assert repr(fast) == repr(slow).replace("_Plain", "_Fast")
    assert fast == _Fast(a=a, b=b, c=c, d=d)
    assert hash(fast) == hash(_Fast(a, b, c, d))


def test_defaults_keywords_and_errors_as_generated() -> None:
    assert dataclasses.astuple(_Fast("x", 2)) == ("x", 2, 1.5, ())
    assert _Fast(b=3, a="y").b == 3
    with pytest.raises(TypeError):
        _Fast("x")
    with pytest.raises(TypeError):
        _Fast("x", 1, 2.0, (), 5)


def test_still_frozen_picklable_and_replaceable() -> None:
    link = Link("L1", "node-leaf", "n1", 0, "s1", 3, 400, 0, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        link.id = "L2"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(link)) == link
    assert copy.deepcopy(link) == link
    moved = dataclasses.replace(link, b_port=4)
    assert moved.b_port == 4 and moved.id == "L1" and moved.rail == 2
    assert Link("L1", "node-leaf", "n1", 0, "s1", 3, 400, 0).rail == -1


@pytest.mark.parametrize("cls", [Link, Cable, Placement, PlantSegment, MediaChoice])
def test_project_records_keep_their_signature(cls: Any) -> None:
    names = [f.name for f in dataclasses.fields(cls)]
    init = vars(cls)["__init__"]
    assert list(init.__code__.co_varnames[1 : 1 + len(names)]) == names
    assert init.__qualname__ == f"{cls.__qualname__}.__init__"


def test_refuses_what_it_would_change() -> None:
    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Post:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True, slots=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class KwOnly:
        a: int

    class NotADataclass:
        pass

    for cls in (NoSlots, Post, Factory, KwOnly, NotADataclass):
        with pytest.raises(TypeError, match="slot_init"):
            slot_init(cls)
