"""Every family bills at every size it can build: plan, lay out, cable and bill, then check.

The suite samples sizes on 64-port switches, where each family reaches its odd cases at a few
thousand GPUs: a Matrix with one link per leaf pair, a 2-tier ROFT whose leaves send one link
to each spine (both ends of those links fan out, so they need the fibre plant), a 3-tier ROFT,
per-rack fat-trees and rail-only. ``RAILPLAN_SLOW=1`` adds the 51.2T cases the issue names
(the 32,768-GPU Matrix, a 20,480-GPU ROFT at 200G, the 16,384-GPU per-rack fat-tree) and
``compare`` at 32,768 GPUs; ``python bench/bench_bill.py --sweep`` walks every size.
"""

from __future__ import annotations

import os

import pytest

from railplan.catalog import Catalog
from railplan.pipeline.build import build
from railplan.pipeline.compare import compare
from railplan.validate import check
from tests.conftest import make_spec

SLOW = os.environ.get("RAILPLAN_SLOW") == "1"
H20 = "h20-4x2x200g"  # 4 dual-port 200G NICs: 8 ports per node

# (family, switch, GPUs, node, links through the fibre plant?)
SAMPLED = [
    ("matrix", "cx732q-n", 512, H20, False),
    ("matrix", "cx732q-n", 1280, H20, True),  # one link per A-B pair on 2-port connectors
    ("matrix", "cx732q-n", 2048, H20, True),  # the largest 1:1 Matrix of 64-port leaves
    ("roft", "cx732q-n", 1024, H20, False),
    ("roft", "cx732q-n", 2048, H20, True),  # 64 leaves, 32 spines: one link per pair
    ("roft", "cx732q-n", 4096, H20, True),  # three tiers
    ("fat-tree", "cx732q-n", 1024, H20, False),
    ("rail-only", "cx732q-n", 512, H20, False),
    ("roft", "qm9700", 1024, "hgx-h100-8x400g", False),  # InfiniBand NDR
]
LARGE = [
    ("matrix", "cx864e-n", 32768, H20, True),  # the largest 1:1 Matrix: 128 + 128 leaves
    ("matrix", "cx864e-n", 5120, H20, True),  # odd bundles
    ("roft", "cx864e-n", 20480, H20, True),  # 200G ROFT, one link per leaf-spine pair
    ("fat-tree", "cx864e-n", 16384, H20, True),
]


def _bill(catalog: Catalog, family: str, switch: str, gpus: int, node: str, plant: bool) -> None:
    spec = make_spec(gpus, node, topology=family, switches=[switch])
    # the bill is under test, not placement quality: a short CP-SAT budget keeps the suite fast
    built = build(spec, catalog, time_limit_s=None if SLOW else 1.0)
    d = built.design
    assert check(d, catalog) == []
    assert built.bom is not None
    t = built.bom.totals
    assert t.links == len(d.links) == len(d.cables)
    assert sum(v["links"] for v in t.per_tier.values()) == t.links
    assert (t.plant_links > 0) == plant
    if plant:
        assert t.panels == len(d.panels) > 0
        assert len({s.link_id for s in d.segments}) == t.plant_links


def _id(case: tuple[object, ...]) -> str:
    return "-".join(str(c) for c in case[:4])


@pytest.mark.parametrize("case", SAMPLED, ids=_id)
def test_every_family_bills_at_sampled_sizes(catalog: Catalog, case: tuple) -> None:  # type: ignore[type-arg]
    _bill(catalog, *case)


@pytest.mark.skipif(not SLOW, reason="51.2T fabrics of 5k-33k GPUs: set RAILPLAN_SLOW=1")
@pytest.mark.parametrize("case", LARGE, ids=_id)
def test_large_fabrics_bill(catalog: Catalog, case: tuple) -> None:  # type: ignore[type-arg]
    _bill(catalog, *case)


@pytest.mark.skipif(not SLOW, reason="four 32k-GPU builds: set RAILPLAN_SLOW=1")
def test_compare_at_32k_lists_matrix_and_roft_with_costs(catalog: Catalog) -> None:
    rows = compare(make_spec(32768, H20, switches=["cx864e-n"]), catalog, layout=True)
    billed = {r.family: r.bom.totals.cost_usd for r in rows if r.bom is not None}
    assert {"matrix", "roft"} <= set(billed)
    assert all(cost > 0 for cost in billed.values())
