"""The array check of link ends says "sound" only where the walk finds nothing wrong, and it
does say so for the designs railplan plans (so a big design is not walked)."""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import railplan.validate.wiring as wiring
from railplan.design import Design
from railplan.pipeline.plan import plan
from railplan.validate.ends_arrays import sound
from tests.conftest import make_spec


@cache
def designs() -> tuple[Design, ...]:
    return (
        plan(make_spec(256, "dgx-h100", switches=["qm9700"])),
        plan(make_spec(1024, "dgx-h100", switches=["qm9700"], tiers=3)),
        plan(make_spec(512, "hgx-h100-8x400g", switches=["cx864e-n"], planes=2)),
        plan(make_spec(1280, "h20-4x2x200g", topology="matrix", switches=["cx732q-n"])),
    )


def walked(d: Design, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    with monkeypatch.context() as m:
        m.setattr(wiring, "ARRAYS_FROM_LINKS", 10**12)
        return wiring.ends(d)


def test_planned_designs_are_sound_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    for d in designs():
        assert sound(d, wiring.UPWARD) and walked(d, monkeypatch) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_sound_only_where_the_walk_finds_nothing(data: st.DataObject) -> None:
    d = data.draw(st.sampled_from(designs()))
    links = list(d.links)
    devices = [n.id for n in d.nodes[:3]] + [s.id for s in d.switches[:3]] + ["nowhere"]
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(links) - 1))
        field = data.draw(st.sampled_from(["a_port", "b_port", "a_device", "b_device",
                                           "rate_gbps", "plane", "kind"]))  # fmt: skip
        if field in ("a_port", "b_port"):
            value: object = data.draw(st.integers(-1, 300))
        elif field in ("a_device", "b_device"):
            value = data.draw(st.sampled_from(devices))
        elif field == "rate_gbps":
            value = data.draw(st.sampled_from([100, 200, 400, 800]))
        elif field == "plane":
            value = data.draw(st.integers(0, 2))
        else:
            value = data.draw(st.sampled_from(["node-leaf", "leaf-spine", "spine-core",
                                               "device-leaf", "bogus"]))  # fmt: skip
        links[i] = dataclasses.replace(links[i], **{field: value})
    broken = dataclasses.replace(d, links=tuple(links))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(wiring, "ARRAYS_FROM_LINKS", 10**12)
        found = wiring.ends(broken)
    if sound(broken, wiring.UPWARD):
        assert found == []
    else:
        assert found or links == list(d.links)  # "not sure" on a sound design is allowed


def _mutations(d: Design) -> list[tuple[str, int, dict[str, object]]]:
    """One break of each rule, on a node link and on a switch-to-switch link."""
    node = next(i for i, lk in enumerate(d.links) if lk.kind == "node-leaf")
    upper = next(i for i, lk in enumerate(d.links) if lk.kind != "node-leaf")
    out: list[tuple[str, int, dict[str, object]]] = []
    for i in (node, upper):
        lk = d.links[i]
        other = d.links[(i + 1) % len(d.links)]
        out += [
            ("plane", i, {"plane": lk.plane + 1}),
            ("rate", i, {"rate_gbps": lk.rate_gbps * 2}),
            ("port beyond", i, {"b_port": 10_000}),
            ("negative port", i, {"a_port": -1}),
            ("port used twice", i, {"b_device": other.b_device, "b_port": other.b_port}),
            ("no such device", i, {"a_device": "nowhere"}),
            ("wrong tier", i, {"b_device": lk.a_device if lk.kind != "node-leaf" else "x"}),
            ("unknown kind", i, {"kind": "bogus"}),
            ("device link", i, {"kind": "device-leaf"}),
        ]
    return out


@pytest.mark.parametrize("which", range(4))
def test_every_broken_rule_is_left_to_the_walk(which: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    d = designs()[which]
    for what, i, change in _mutations(d):
        links = list(d.links)
        links[i] = dataclasses.replace(links[i], **change)
        broken = dataclasses.replace(d, links=tuple(links))
        assert walked(broken, monkeypatch), what
        assert not sound(broken, wiring.UPWARD), what
