"""The cage check of a design's structure (``validate_cages``: runs of no length) refuses
exactly what the run-by-run check of any runs refuses, with the same sentence; a cage end
copied with a field changed derives its key anew."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from railplan.catalog import load_catalog
from railplan.errors import InfeasibleError
from railplan.physical.media_assign import LinkRun, _validate_runs, validate_cages
from railplan.physical.media_design import structure
from railplan.pipeline.plan import plan
from tests.conftest import make_spec


def _outcome(check, runs) -> str:  # type: ignore[no-untyped-def]
    try:
        check(runs)
    except InfeasibleError as exc:
        return str(exc)
    return "sound"


def _runs() -> list[LinkRun]:
    design = plan(make_spec(64, "dgx-h100", switches=["qm9700"]))
    return list(structure(design, load_catalog()).runs)


RUNS = _runs()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_cage_check_refuses_what_the_run_by_run_check_refuses(data: st.DataObject) -> None:
    runs = list(RUNS)
    for _ in range(data.draw(st.integers(0, 3))):
        i = data.draw(st.integers(0, len(runs) - 1))
        side = data.draw(st.sampled_from(["a", "b"]))
        end = getattr(runs[i], side)
        what = data.draw(st.sampled_from(["slot", "ports", "form", "port of another"]))
        if what == "slot":
            end = end._replace(slot=data.draw(st.integers(-2, 5)))
        elif what == "ports":
            end = type(end)(end.device, end.cage, end.slot, end.form_factor, 4, end.vendor)
        elif what == "form":
            end = type(end)(end.device, end.cage, end.slot, "qsfp112", end.ports_per_cage)
        else:
            end = getattr(runs[data.draw(st.integers(0, len(runs) - 1))], side)
        runs[i] = runs[i]._replace(**{side: end})
    assert _outcome(validate_cages, runs) == _outcome(_validate_runs, runs)


def test_the_design_itself_is_sound() -> None:
    assert _outcome(validate_cages, RUNS) == "sound" == _outcome(_validate_runs, RUNS)


def test_a_copied_cage_end_derives_its_key_anew() -> None:
    end = RUNS[0].b
    moved = end._replace(device="elsewhere", cage=end.cage + 1)
    assert moved.key == ("elsewhere", end.cage + 1) and moved.slot == end.slot


def test_an_end_shape_slice_holds_form_factor_ports_and_vendor() -> None:
    end = RUNS[0].b
    assert end[type(end).SHAPE] == (end.form_factor, end.ports_per_cage, end.vendor)


def test_a_wiring_check_never_saw_has_its_cages_walked() -> None:
    """The structure skips the cage walk only for the very wiring ``check`` found sound; a
    design whose links were changed afterwards (two links on one port) is refused."""
    import dataclasses

    from railplan.validate import check, wiring_known_sound

    design = plan(make_spec(64, "dgx-h100", switches=["qm9700"]))
    assert check(design) == [] and wiring_known_sound(design)
    links = list(design.links)
    twin = next(i for i, lk in enumerate(links) if lk.kind == "node-leaf" and i > 0)
    links[twin] = dataclasses.replace(
        links[twin], a_device=links[0].a_device, a_port=links[0].a_port
    )
    broken = dataclasses.replace(design, links=tuple(links))
    assert not wiring_known_sound(broken)
    problem = structure(broken, load_catalog()).problem
    assert problem is not None and "both use slot" in str(problem)
