"""The structure's runs made as they are read equal the runs ``design_runs`` makes at once."""

from __future__ import annotations

import pytest

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.design.ends import link_ends, link_protocols
from railplan.design.link_table import link_table
from railplan.physical.media_assign import (
    DesignRuns,
    LinkRun,
    design_runs,
    run_columns,
    structure_runs,
)
from railplan.physical.media_design import _structure
from tests.conftest import make_spec

_CATALOG = load_catalog()


def _design(planes: int) -> Design:
    from railplan.pipeline.plan import plan

    return plan(make_spec(512, "dgx-h100", switches=["qm9700"], planes=planes), _CATALOG)


def _eager(design: Design) -> list[LinkRun]:
    """The runs as ``design_runs`` made them before: one named tuple per link, in order."""
    ends = link_ends(design, _CATALOG)
    protocols = link_protocols(design, _CATALOG)
    return [
        LinkRun(lk.id, lk.rate_gbps, 0.0, *ends[lk.id], "", protocols[lk.id], False)
        for lk in design.links
    ]


@pytest.mark.parametrize("planes", [1, 2])
def test_runs_read_one_by_one_equal_the_eager_ones(planes: int) -> None:
    design = _design(planes)
    expected = _eager(design)
    runs = structure_runs(design, _CATALOG)
    assert len(runs) == len(expected)
    for i in (0, 1, len(expected) // 2, len(expected) - 1, -1, -len(expected)):
        assert runs[i] == expected[i]
        assert type(runs[i]) is LinkRun
    with pytest.raises(IndexError):
        runs[len(expected)]
    assert run_columns(runs) == run_columns(expected)
    assert runs[3:9] == expected[3:9]  # a slice makes them all
    assert list(runs) == expected
    assert runs[5] == expected[5]
    assert design_runs(design, _CATALOG) == expected
    assert list(_structure(design, _CATALOG).runs) == expected


def test_columns_read_protocols_by_id_when_not_keyed_in_link_order() -> None:
    design = _design(1)
    ends = link_ends(design, _CATALOG)
    protocols = link_protocols(design, _CATALOG)
    shuffled = dict(reversed(list(protocols.items())))
    ids = link_table(design, _CATALOG).ids
    runs = DesignRuns(design.links, ids, ends, shuffled)
    assert runs.columns() == run_columns(_eager(design))
    assert list(runs) == _eager(design)
