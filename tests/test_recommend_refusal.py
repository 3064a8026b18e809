"""A cluster no candidate can hold is refused from the closed-form ceiling, nothing built."""

from __future__ import annotations

from typing import Any

import pytest

from railplan.advise import bounds, recommend, search
from railplan.advise.bounds import capacity_refusal
from railplan.advise.candidates import candidates, spec_of
from railplan.advise.requirements import requirements_of
from railplan.catalog import load_catalog
from railplan.errors import InfeasibleError
from railplan.spec import Spec
from railplan.topology import GENERATORS

CATALOG = load_catalog()


def spec(gpus: int, **fabric: object) -> Spec:
    return Spec.model_validate(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"], **fabric},
        }
    )


@pytest.fixture
def nothing_built(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any candidate generated, counted, bounded, evaluated or a worker pool started fails."""

    def boom(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a candidate was built")

    monkeypatch.setattr(search, "_Runner", boom)
    monkeypatch.setattr(search, "lower_bound", boom)
    monkeypatch.setattr(search, "evaluate", boom)
    for family in list(GENERATORS):
        monkeypatch.setitem(GENERATORS, family, boom)
    monkeypatch.setattr(bounds, "counting", boom)


@pytest.mark.usefixtures("nothing_built")
def test_a_cluster_beyond_every_candidate_is_refused_before_anything_is_built() -> None:
    # 262,144 DGX H100 GPUs are 262,144 NIC ports; 3 tiers of 64-port QM9700 hold at most
    # 64 * 32 * 32 = 65,536 per plane at 1:1 (64 * 32 * 48 = 98,304 at 3:1): 2 planes are short
    with pytest.raises(InfeasibleError) as exc:
        recommend(spec(262144), CATALOG, workers=1)
    msg = str(exc.value)
    assert msg.startswith("cluster.gpus: 262144 GPUs exceed every candidate")
    assert "98,304 NIC ports per plane" in msg and "196608 GPUs in 2 plane(s)" in msg
    assert msg.endswith("use --planes 4 (fabric.planes: 4) or a larger switch")
    assert "\n" not in msg and msg.count("; ") == 1


@pytest.mark.usefixtures("nothing_built")
def test_stated_planes_that_cannot_hold_it_name_the_planes_that_would() -> None:
    with pytest.raises(InfeasibleError, match=r"use --planes 2 \(fabric.planes: 2\)"):
        recommend(spec(131072, planes=1), CATALOG, workers=1)


def test_no_refusal_while_one_candidate_may_hold_the_cluster() -> None:
    base = spec(131072)  # 2 planes of 65,536 ports: the ceiling exactly
    req = requirements_of(base)
    cands = candidates(base, CATALOG, req)
    pairs = [(spec_of(base, c), CATALOG.switch(c.switch)) for c in cands]
    assert capacity_refusal(CATALOG, pairs) is None
    one_plane = [(s, m) for s, m in pairs if s.fabric.planes == 1]
    assert capacity_refusal(CATALOG, one_plane) is not None


def test_plan_with_topology_auto_refuses_in_one_sentence(cli, nothing_built: None) -> None:
    r = cli("plan", "--gpus", 262144, "--node", "dgx-h100", "--switch", "qm9700")
    assert r.code == 2 and r.out == ""
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "exceed every candidate" in lines[0]
    assert "use --planes 4" in lines[0] and "Traceback" not in r.err
    rec = cli("recommend", "--gpus", 262144, "--node", "dgx-h100", "--switch", "qm9700", "--json")
    assert rec.code == 2 and "use --planes 4" in rec.err
