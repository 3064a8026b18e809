"""Benchmark layout + placement + cabling + BOM: wall time per stage and the placement's answer.

Run: ``python bench/bench_layout.py`` (``--quick`` for 1k GPUs only, ``--time-limit S`` for the
CP-SAT budget in deterministic seconds, default the spec's, which grows with the switch blocks). Target (issue 4): layout + placement + BOM for 8k GPUs
under 60 s. Prints one table; never gates CI.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

CASES: list[dict[str, Any]] = [
    {"gpus": 1024, "node": "hgx-h100-8x400g", "switch": "qm9700"},
    {"gpus": 8192, "node": "hgx-h100-8x400g", "switch": "qm9700"},
    {"gpus": 8192, "node": "dgx-h100", "switch": "qm9700"},
]


def run(case: dict[str, Any], time_limit: float | None) -> dict[str, Any]:
    from railplan.catalog import load_catalog
    from railplan.physical.bom import bom
    from railplan.physical.cabling import build_cables, placements_of, positions
    from railplan.physical.costers import DesignCoster
    from railplan.physical.floor import build_floor
    from railplan.pipeline.plan import plan
    from railplan.solve.placement import naive_placement, place_switches
    from railplan.spec import spec_from_dict

    catalog = load_catalog()
    spec = spec_from_dict(
        {
            "cluster": {"gpus": case["gpus"], "node": case["node"]},
            "fabric": {"switches": [case["switch"]]},
        }
    )
    t0 = time.perf_counter()
    design = plan(spec, catalog)
    t1 = time.perf_counter()
    floor = build_floor(design, spec.layout, catalog)
    t2 = time.perf_counter()
    placed = place_switches(
        design,
        floor,
        catalog,
        DesignCoster(design, catalog),
        spec.layout.placement,
        time_limit_s=time_limit,
    )
    t3 = time.perf_counter()
    where = positions(design, floor, catalog, placed.rack, placed.u)
    cabling = build_cables(design, floor, catalog, where)
    t4 = time.perf_counter()
    done = design.__class__(
        **{
            **{f: getattr(design, f) for f in design.__dataclass_fields__},
            "racks": floor.racks,
            "placements": placements_of(where),
            "cables": cabling.cables,
        }
    )
    totals = bom(done, catalog).totals
    t5 = time.perf_counter()
    naive = naive_placement(design, floor, catalog)
    naive_where = positions(design, floor, catalog, naive.rack, naive.u)
    naive_cost = build_cables(design, floor, catalog, naive_where).cost_usd
    r = placed.report
    return {
        "case": f"{case['gpus']} GPUs {case['node']}",
        "switches": len(design.switches),
        "racks": len(floor.racks),
        "cables": len(cabling.cables),
        "plan": t1 - t0,
        "layout": t2 - t1,
        "place": t3 - t2,
        "cable": t4 - t3,
        "bom": t5 - t4,
        "total": t5 - t1,
        "method": r.method,
        "status": r.status,
        "gap": r.gap,
        "media": cabling.cost_usd,
        "naive": naive_cost,
        "bom_usd": totals.cost_usd,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="1k GPUs only")
    parser.add_argument(
        "--time-limit", type=float, default=None, help="CP-SAT budget in deterministic s"
    )
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    head = (
        f"{'case':>26} {'sw':>4} {'racks':>5} {'cables':>6} | {'plan':>5} {'layout':>6} "
        f"{'place':>6} {'cable':>6} {'bom':>5} {'total':>6} | {'placement':<30} {'gap':>6} "
        f"{'media $':>12} {'naive $':>12} {'saved':>6} {'BOM $':>13}"
    )
    print(head)
    print("-" * len(head))
    for case in cases:
        r = run(case, args.time_limit)
        saved = 1 - r["media"] / r["naive"] if r["naive"] else 0.0
        print(
            f"{r['case']:>26} {r['switches']:>4} {r['racks']:>5} {r['cables']:>6} | "
            f"{r['plan']:5.1f} {r['layout']:6.2f} {r['place']:6.1f} {r['cable']:6.1f} "
            f"{r['bom']:5.1f} {r['total']:6.1f} | {r['method'] + ' ' + r['status']:<30} "
            f"{r['gap']:6.1%} {r['media']:12,.0f} {r['naive']:12,.0f} {saved:6.1%} "
            f"{r['bom_usd']:13,.0f}"
        )
    print("times in seconds; total = layout + placement + cabling + BOM (plan excluded)")


if __name__ == "__main__":
    main()
