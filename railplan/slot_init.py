"""slot_init(cls): a frozen slotted dataclass built twice as fast, its fields set through their slots.

A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__(self,
name, value)`` (the class's own ``__setattr__`` refuses every assignment: CPython's
``dataclasses`` documentation, "Frozen instances"), a global look-up, an attribute look-up and
a call per field. The design of a 131,072-GPU fabric builds 393,216 links and as many cables,
eleven fields each, so those calls are a measurable share of the whole job. ``slot_init``
gives such a class an ``__init__`` of the same signature that calls each slot's own setter
(the ``member_descriptor`` of ``__slots__``, bound once when the class is made), which skips
the look-ups: 393,216 cables take 0.20 s instead of 0.42 s on this project's bench machine.
The instances are the same: still frozen (``FrozenInstanceError`` on assignment), equal,
hashed, printed, pickled and ``dataclasses.replace``-d as before.

Only a plain record qualifies: frozen, slotted, every field in ``__init__`` and positional,
defaults constant (no ``default_factory``), no ``__post_init__`` and no ``InitVar``; anything
else raises ``TypeError`` when the class is defined, so it never silently changes meaning.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

__all__ = ["slot_init"]

T = TypeVar("T")


def slot_init(cls: type[T]) -> type[T]:
    """``cls`` (a frozen, slotted, plain dataclass) with its ``__init__`` setting the slots
    directly; its signature, defaults and behaviour stay those ``dataclass`` generated."""
    _refuse_unless_plain(cls)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    namespace: dict[str, Any] = {}
    params, body = [], []
    for n, f in enumerate(fields):
        namespace[f"_set{n}"] = cls.__dict__[f.name].__set__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            namespace[f"_default{n}"] = f.default
            params.append(f"{f.name}=_default{n}")
        body.append(f"    _set{n}(self, {f.name})\n")
    head = f"def __init__(self, {', '.join(params)}):\n"
    source = head + ("".join(body) or "    pass\n")
    exec(source, namespace)  # the same shape of code dataclasses itself generates
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    setattr(cls, "__init__", init)  # noqa: B010 (a method replaced on the class)
    return cls


def _refuse_unless_plain(cls: type) -> None:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"slot_init: {cls.__name__} is not a dataclass")
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    if not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"slot_init: {cls.__name__} must be @dataclass(frozen=True, slots=True)")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"slot_init: {cls.__name__} has a __post_init__")
    if len(cls.__dataclass_fields__) != len(dataclasses.fields(cls)):
        raise TypeError(f"slot_init: {cls.__name__} has an InitVar or ClassVar field")
    for f in dataclasses.fields(cls):
        if not f.init or f.kw_only is True or f.default_factory is not dataclasses.MISSING:
            raise TypeError(
                f"slot_init: field {cls.__name__}.{f.name} must be positional, in __init__, "
                "with a constant default if any"
            )
