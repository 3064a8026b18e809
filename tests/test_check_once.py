"""check() runs the wiring rules once per wiring: a laid-out design, which shares its nodes,
switches and links with the design it came from, is checked only for what the layout added,
and any other wiring (new objects, or a changed plain field) is checked in full."""

from __future__ import annotations

import dataclasses

import railplan.validate as validate
from railplan.pipeline.build import build
from railplan.validate import check
from tests.conftest import make_spec


def _counting(monkeypatch) -> list[str]:  # type: ignore[no-untyped-def]
    calls: list[str] = []

    def spy(rule):  # type: ignore[no-untyped-def]
        def run(design):  # type: ignore[no-untyped-def]
            calls.append(rule.__name__)
            return rule(design)

        run.__name__ = rule.__name__
        return run

    monkeypatch.setattr(validate, "RULES", [spy(r) for r in validate.RULES])
    monkeypatch.setattr(validate, "_SOUND", [])
    return calls


def test_laid_out_design_skips_the_wiring_it_shares(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    built = build(make_spec(64, "dgx-h100", switches=["qm9700"]))
    calls = _counting(monkeypatch)
    topology_only = dataclasses.replace(built.design, racks=(), placements=(), cables=())
    assert check(topology_only) == []
    ran = len(calls)
    assert ran == len(validate.RULES)
    assert check(built.design) == []  # the same wiring objects, now with racks and cables
    assert len(calls) == ran


def test_new_or_changed_wiring_is_checked_in_full(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    built = build(make_spec(64, "dgx-h100", switches=["qm9700"]))
    calls = _counting(monkeypatch)
    d = built.design
    assert check(d) == []
    ran = len(calls)
    # a new tuple of links: checked again, and a broken link in it is caught
    lk = d.links[0]
    broken = (dataclasses.replace(lk, b_port=lk.b_port + 10_000), *d.links[1:])
    problems = check(dataclasses.replace(d, links=broken, cables=()))
    assert len(calls) == 2 * ran and problems
    # an equal copy of the links is checked in full too (the memo trusts identity only)
    calls.clear()
    assert check(dataclasses.replace(d, links=tuple(list(d.links)))) == []
    assert len(calls) == ran
    # a plain field that changed (the GPU count) runs every rule again, and fails
    calls.clear()
    assert check(dataclasses.replace(d, gpus=d.gpus + 8))
    assert len(calls) == ran
