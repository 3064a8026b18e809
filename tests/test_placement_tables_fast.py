"""Placement's fixed costs summed run by run against the masked pass they replaced.

The tables must hold the very same integers, whichever way a block's runs of rows are summed.
"""

from __future__ import annotations

import pytest

from railplan import plan
from railplan.physical.costers import DesignCoster, LengthCoster
from railplan.physical.floor import build_floor
from railplan.solve.placement import tables
from railplan.solve.placement.groups import candidate_racks, make_groups
from railplan.spec import PlacementRulesSpec, spec_from_dict
from tests.test_placement_fast_paths import old_fixed_costs


@pytest.mark.parametrize(("gpus", "planes"), [(1024, 1), (4096, 2)])
@pytest.mark.parametrize("run_sum", [1, 1 << 30])  # every run alone; add.reduceat always
@pytest.mark.parametrize("block", [1 << 8, tables.BLOCK])
@pytest.mark.parametrize("costed", ["design", "length"])
def test_fixed_costs_equal_the_masked_pass(
    catalog, monkeypatch, gpus, planes, run_sum, block, costed
):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": ["qm9700"], "planes": planes, "topology": "roft"},
        }
    )
    design = plan(spec, catalog)
    floor = build_floor(design, spec.layout, catalog)
    groups = make_groups(design, floor, catalog, PlacementRulesSpec().group_size)
    cands = candidate_racks(design, floor, groups, PlacementRulesSpec())
    coster = DesignCoster(design, catalog) if costed == "design" else LengthCoster()
    monkeypatch.setattr(tables, "RUN_SUM_ENTRIES", run_sum)
    monkeypatch.setattr(tables, "BLOCK", block)  # blocks that cut a group's rows in two
    fast = tables.cost_tables(design, floor, catalog, groups, coster, cands)
    monkeypatch.setattr(tables, "_fixed_costs", old_fixed_costs)
    slow = tables.cost_tables(design, floor, catalog, groups, coster, cands)
    assert fast.fixed.tolist() == slow.fixed.tolist()
