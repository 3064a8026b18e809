"""Kicks: small fabrics of several planes get the cheaper placement CP-SAT used to look for,
without CP-SAT, deterministically; the joint model runs only when a budget is asked for."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from railplan import plan
from railplan.design import design_to_json
from railplan.pipeline.layout import complete
from railplan.solve.placement import driver, kicks
from railplan.spec import spec_from_dict
from railplan.validate import check


def _spec(gpus: int, planes: int, switch: str = "qm9700", placement: dict | None = None):
    data: dict = {
        "cluster": {"gpus": gpus, "node": "dgx-h100"},
        "fabric": {"switches": [switch], "planes": planes, "topology": "roft"},
    }
    if placement:
        data["layout"] = {"placement": placement}
    return spec_from_dict(data)


def kicked_and_descent(catalog, spec, design=None):
    """The layout with kicks (checked sound) and with none (``KICK_CELLS`` 0): the laid-out
    design and placement report of each, kicked first."""
    design = plan(spec, catalog) if design is None else design
    laid, report = complete(design, spec, catalog)
    assert check(laid, catalog) == []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(driver, "KICK_CELLS", 0)  # the descent alone
        unkicked, descent = complete(design, spec, catalog)
    return laid, report, unkicked, descent


@pytest.fixture(scope="module")
def two_planes_2k(catalog):
    spec = _spec(2048, 2)
    return spec, plan(spec, catalog)


def test_kicks_beat_the_descent_and_what_cp_sat_found(catalog, two_planes_2k):
    _, report, _, descent = kicked_and_descent(catalog, *two_planes_2k)
    assert report.method == "flow and swaps, kicks"
    # 2,048 GPUs of two planes: the descent stopped at $3,959,168 of estimated cable; CP-SAT's
    # joint model (1 deterministic second) found $3,560,016 from there; the kicks go lower
    assert descent.objective_usd == pytest.approx(3_959_168)
    assert report.objective_usd <= 3_560_016
    assert report.objective_usd < 0.9 * descent.objective_usd
    assert report.best_bound_usd <= report.objective_usd
    assert any("kick(s) of single upper-tier groups" in n for n in report.notes)
    assert any("deterministic_time_s" in n for n in report.notes)  # how to ask for CP-SAT


def test_kicks_are_deterministic(catalog, two_planes_2k):
    spec, design = two_planes_2k
    first, r1 = complete(design, spec, catalog)
    second, r2 = complete(design, spec, catalog)
    assert design_to_json(first) == design_to_json(second)
    assert (r1.objective_usd, r1.notes) == (r2.objective_usd, r2.notes)


@pytest.mark.parametrize(("gpus", "planes", "switch"), [(1024, 4, "qm9700"), (1024, 1, "cx732q-n")])
def test_a_kicked_placement_is_sound_and_never_dearer(catalog, gpus, planes, switch):
    _, report, _, descent = kicked_and_descent(catalog, _spec(gpus, planes, switch))
    assert report.objective_usd <= descent.objective_usd
    assert report.best_bound_usd <= report.objective_usd <= report.naive_objective_usd


def test_a_budget_given_still_runs_the_joint_model_from_the_kicked_answer(catalog, two_planes_2k):
    spec, design = two_planes_2k
    _, kicked = complete(design, spec, catalog)
    _, joint = complete(design, spec, catalog, time_limit_s=0.5)
    assert joint.method == "flow and swaps, kicks, cp-sat joint"
    assert joint.objective_usd <= kicked.objective_usd  # it starts from the kicked answer
    asked = _spec(2048, 2, placement={"deterministic_time_s": 0.5})
    _, in_spec = complete(plan(asked, catalog), asked, catalog)
    assert in_spec.method == joint.method and in_spec.time_limit_s == 0.5


def test_a_small_multi_plane_plan_never_loads_cp_sat():
    """Without a budget asked for, 2,048 GPUs of two planes are placed by flow, moves, swaps
    and kicks: CP-SAT (and the pandas it imports, a third of a second) stays unloaded."""
    code = (
        "import sys; from railplan.catalog import load_catalog; "
        "from railplan.pipeline.build import build; from railplan.spec import spec_from_dict; "
        "s = spec_from_dict({'cluster': {'gpus': 2048, 'node': 'dgx-h100'}, 'fabric': "
        "{'switches': ['qm9700'], 'planes': 2, 'topology': 'roft'}}); "
        "build(s, load_catalog()); print('ortools.sat.python.cp_model' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_kicks_stop_at_their_count(catalog, two_planes_2k, monkeypatch):
    spec, design = two_planes_2k
    seen: list[int] = []
    real = kicks.kick

    def counted(*args, **kwargs):
        found = real(*args, **kwargs)
        seen.append(found.kicks)
        return found

    monkeypatch.setattr(driver, "kick", counted)
    monkeypatch.setattr(driver, "MAX_KICKS", 3)
    monkeypatch.setattr(driver, "MIN_KICKS", 1)
    complete(design, spec, catalog)
    assert seen == [3]


def test_the_kicks_shrink_with_the_model_and_stop_on_large_ones(catalog, monkeypatch):
    """Each kick settles the whole model again: a model of G groups in R racks gets
    ``KICK_CELLS // (G * R)`` kicks, at most 64, none when fewer than ``MIN_KICKS``."""
    assert driver.kick_budget(20, 8) == kicks.MAX_KICKS  # 2,048 GPUs of two planes
    assert driver.kick_budget(160, 64) == driver.KICK_CELLS // (160 * 64) < kicks.MAX_KICKS
    assert driver.kick_budget(1, driver.KICK_CELLS // driver.MIN_KICKS) == driver.MIN_KICKS
    assert driver.kick_budget(1, driver.KICK_CELLS // driver.MIN_KICKS + 1) == 0  # too few
    assert driver.kick_budget(1792, 768) == 0  # 131,072 GPUs of two planes
    monkeypatch.setattr(driver, "KICK_CELLS", 0)
    spec = _spec(2048, 2)
    _, report = complete(plan(spec, catalog), spec, catalog)
    assert report.method == "flow and swaps"
    assert not any("kick" in n for n in report.notes)
    assert np.isfinite(report.gap)


def test_kicks_reach_models_beyond_the_joint_models_size(catalog):
    """8,192 GPUs of sn5600 in two planes: its joint model (131,072 rack-pair terms) is too
    large for CP-SAT, yet 64 kicks take $297,944 (2%) off the descent's cable estimate."""
    _, report, _, descent = kicked_and_descent(catalog, _spec(8192, 2, "sn5600"))
    assert report.method == "flow and swaps, kicks"
    assert any("joint model too large" in n for n in report.notes)
    assert descent.method == "flow and swaps"
    assert report.objective_usd <= 0.98 * descent.objective_usd
    assert report.best_bound_usd <= report.objective_usd


FABRICS = [
    ("qm9700", 1),
    ("qm9700", 2),
    ("qm9700", 4),
    ("qm9700", 8),
    ("sn5600", 2),
    ("cx864e-n", 1),
]


@settings(max_examples=8, deadline=None)
@given(gpus=st.sampled_from([512, 1024, 2048]), fabric=st.sampled_from(FABRICS))
def test_kicked_placements_are_sound_and_never_dearer_on_random_fabrics(
    catalog, gpus: int, fabric: tuple[str, int]
) -> None:
    switch, planes = fabric
    _, report, _, descent = kicked_and_descent(catalog, _spec(gpus, planes, switch))
    assert report.best_bound_usd <= report.objective_usd <= descent.objective_usd
    assert "kicks" not in descent.method


def test_a_kicked_placement_that_cannot_be_cabled_falls_back_to_the_searchs_own(
    catalog, two_planes_2k, monkeypatch
):
    """The placement prices links one by one; the cabling also pairs the two ports of a
    twin-port cage, so a kicked placement may be cheaper by the estimate and yet not cable.
    The layout then cables the search's own placement and says so."""
    from railplan.errors import InfeasibleError
    from railplan.pipeline import layout

    spec, design = two_planes_2k
    kicked, report = complete(design, spec, catalog)
    real = layout.build_cables
    calls: list[int] = []

    def first_fails(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise InfeasibleError("link X: no catalog part reaches 117.2 m")
        return real(*args, **kwargs)

    monkeypatch.setattr(layout, "build_cables", first_fails)
    laid, fell_back = complete(design, spec, catalog)
    assert len(calls) == 2 and check(laid, catalog) == []
    assert fell_back.method == "flow and swaps"
    assert fell_back.objective_usd > report.objective_usd  # the dearer, descent's estimate
    assert any(
        "kicked placement could not be cabled" in n and "117.2 m" in n for n in fell_back.notes
    )
    assert laid.placements != kicked.placements


def test_without_a_fallback_the_cabling_refusal_stands(catalog, monkeypatch):
    """A placement the kicks did not change has no fallback: its cabling refusal is the
    answer (1,024 GPUs of one plane are priced whole, never kicked)."""
    from railplan.errors import InfeasibleError
    from railplan.pipeline import layout

    def refuses(*_args, **_kwargs):
        raise InfeasibleError("no catalog part reaches it")

    monkeypatch.setattr(layout, "build_cables", refuses)
    spec = _spec(1024, 1)
    with pytest.raises(InfeasibleError, match="no catalog part reaches it"):
        complete(plan(spec, catalog), spec, catalog)


def test_a_kicked_placement_dearer_once_cabled_gives_way_to_the_searchs_own(catalog):
    """4,096 GPUs of cx732q-n: the kicks take $10,720 off the estimate (links priced one by
    one), yet cabled, with twin-port cages paired, the media cost $52,001 more: the layout
    cables both and keeps the search's own, saying why."""
    laid, report, unkicked, descent = kicked_and_descent(catalog, _spec(4096, 1, "cx732q-n"))
    assert report.method == "flow and swaps"
    assert any("kick(s) of single upper-tier groups" in n for n in report.notes)
    assert any("more than the search's own once cabled" in n for n in report.notes)
    assert report.cable_cost_usd == descent.cable_cost_usd
    assert design_to_json(laid) == design_to_json(unkicked)


def test_a_kicked_placement_cheaper_once_cabled_is_kept(catalog, two_planes_2k):
    _, report, _, descent = kicked_and_descent(catalog, *two_planes_2k)
    assert report.method == "flow and swaps, kicks"
    assert not any("once cabled" in n for n in report.notes)
    assert report.cable_cost_usd < descent.cable_cost_usd
