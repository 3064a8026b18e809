"""What a linear placement would cost: each switch block held to its K cheapest racks.

The placement's model prices every switch block in every network rack (blocks x racks, so
it grows about fourfold when the GPUs double; issue 34 asks for every stage linear). A linear
model holds each block to a bounded set of candidate racks. This bench measures what that
bound costs on the cable estimate, with the same search on both:

- **dense**: ``solve.placement.driver.search`` as the layout runs it, every rack a candidate;
- **K cheapest**: after the first role pass (each role placed by its min-cost flow,
  bottom-up), each block keeps the K racks where it costs least given where everything then
  stands, and the rack that pass gave it (so the roles still fit); then the same search from
  scratch on those candidates. Like blocks keep the dense model's swap classes, so they still
  trade racks where both racks are candidates of both.

The candidates are chosen from the first pass because anything finer needs the dense rows
the bound is meant to avoid. The bounded search runs on the dense machinery with the other
racks priced out, so only its cost is measured here, not the time a sparse model would take.
Each fabric runs in this process (the layout up to placement, once).

    python bench/bench_candidate_racks.py                          # 16k and 131k, four planes
    python bench/bench_candidate_racks.py --fabrics 131072:qm9700:4 --keep 64 128 256
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np

from railplan.catalog import load_catalog
from railplan.pipeline.build import build
from railplan.solve.placement import driver
from railplan.solve.placement.search import State, flow_role, place_roles
from railplan.solve.placement.tables import UNUSED, CostTables, cost_rows
from railplan.spec import spec_from_dict


class _Placed(Exception):
    """Raised from the search once both variants ran: the layout after it is not needed."""


def bounded(groups, tables: CostTables, room: tuple[int, float], keep: int) -> CostTables:
    """``tables`` with every rack outside a block's candidates priced ``UNUSED``."""
    state = State.empty(groups, tables, *room)
    roles = sorted({(g.tier, g.role) for g in groups})
    order = [np.array([i for i, g in enumerate(groups) if (g.tier, g.role) == r]) for r in roles]
    place_roles(state, order, flow_role)
    rows = cost_rows(tables, state.at)
    chosen: dict[int, set[int]] = {}
    for g in range(len(groups)):
        near = np.argsort(rows[g], kind="stable")[:keep].tolist()
        chosen[g] = {*near, int(state.at[g])}
    fixed = np.full_like(tables.fixed, UNUSED)
    candidates = {}
    for g, racks in chosen.items():
        allowed = sorted(r for r in racks if tables.fixed[g, r] < UNUSED)
        fixed[g, allowed] = tables.fixed[g, allowed]
        candidates[tables.ids[g]] = allowed
    return dataclasses.replace(tables, fixed=fixed, candidates=candidates)


def run(gpus: int, switch: str, planes: int, keeps: list[int]) -> list[tuple[str, ...]]:
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": [switch], "planes": planes, "topology": "roft"},
        }
    )
    search, classes_of = driver.search, driver.swap_classes
    out: list[tuple[str, ...]] = []

    def measured(groups, tables, room, rules, budget_s, say, max_kicks=0):
        dense = search(groups, tables, room, rules, budget_s, say, max_kicks)
        label = f"{gpus:,} GPUs, {switch}, {planes} plane(s)"
        out.append(
            (
                label,
                "every rack",
                f"{tables.n_racks}",
                f"${dense.objective / 100:,.0f}",
                "",
            )
        )
        rule = tables.candidates
        # like blocks trade racks as in the dense model (classes by the rule's candidates)
        driver.swap_classes = lambda gs, _cands: classes_of(gs, rule)
        try:
            for keep in keeps:
                held = bounded(groups, tables, room, keep)
                found = search(groups, held, room, rules, budget_s, say, max_kicks)
                mean = np.mean([len(c) for c in held.candidates.values()])
                dearer = found.objective / dense.objective - 1
                out.append(
                    (
                        label,
                        f"{keep} cheapest",
                        f"{mean:.0f}",
                        f"${found.objective / 100:,.0f}",
                        f"{dearer:+.2%}",
                    )
                )
        finally:
            driver.swap_classes = classes_of
        raise _Placed

    driver.search = measured
    try:
        build(spec, load_catalog(), bill=False)
    except _Placed:
        pass
    finally:
        driver.search = search
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabrics", nargs="+", default=["16384:qm9700:4", "131072:qm9700:4"])
    parser.add_argument("--keep", nargs="+", type=int, default=[32, 64, 128, 256])
    args = parser.parse_args()
    print("| fabric (DGX H100, ROFT) | candidates | racks a block, mean | estimate | vs dense |")
    print("|---|---|---:|---:|---:|")
    for fabric in args.fabrics:
        gpus, switch, planes = fabric.split(":")
        for row in run(int(gpus), switch, int(planes), args.keep):
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
