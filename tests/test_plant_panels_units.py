"""``required_panel_units`` asked once per shape equals the count component by component."""

from __future__ import annotations

import math

import pytest

from railplan.catalog import Catalog, load_catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.physical.media_design import shape_of, structure
from railplan.physical.media_plans import catalog_index, plans_for
from railplan.physical.plant_panels import required_panel_units
from railplan.physical.plant_plans import panel_options
from railplan.spec import Spec
from tests.conftest import make_spec

_CATALOG = load_catalog()


def _by_component(design: Design, catalog: Catalog) -> int:
    """The count as it was made: every component asked in turn."""
    struct = structure(design, catalog)
    idx = catalog_index(catalog)
    ends = 0
    connector = ""
    for g, members in enumerate(struct.groups):
        comp = shape_of(struct, g)
        plans = plans_for(idx, comp)
        if plans and all(p.plant is not None for p in plans):
            ends += 2 * len(members)
            fans = plans[0].plant.fan_out if plans[0].plant else ()
            connector = connector or (fans[0].end_b if fans else "")
    if not ends:
        return 0
    options = panel_options(idx, connector)
    if not options:
        return 0
    density = max(p.slots * c.ports / p.rack_units for p, c in options)
    return math.ceil(ends / density)


@pytest.mark.parametrize(
    "spec",
    [
        make_spec(512, "dgx-h100", switches=["qm9700"], planes=2),
        make_spec(256, "hgx-h100-8x400g", switches=["cx864e-n"]),
        make_spec(1280, "h20-4x2x200g", topology="matrix", switches=["cx732q-n"]),
        make_spec(1024, "dgx-h100", switches=["qm9700"]),
    ],
)
def test_units_per_shape_equal_units_per_component(spec: Spec) -> None:
    from railplan.pipeline.plan import plan

    design = plan(spec, _CATALOG)
    try:
        expected = _by_component(design, _CATALOG)
    except InfeasibleError as exc:
        with pytest.raises(InfeasibleError, match=str(exc)):
            required_panel_units(design, _CATALOG)
        return
    assert required_panel_units(design, _CATALOG) == expected


def test_the_matrix_needs_panels() -> None:
    from railplan.pipeline.plan import plan

    spec = make_spec(1280, "h20-4x2x200g", topology="matrix", switches=["cx732q-n"])
    assert required_panel_units(plan(spec, _CATALOG), _CATALOG) > 0
