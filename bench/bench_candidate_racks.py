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
Each row is one whole build in this process (``--bill``: billed too, from the cabled design);
each bound's row shows how far from the dense row it is.

    python bench/bench_candidate_racks.py                          # 16k and 131k, four planes
    python bench/bench_candidate_racks.py --fabrics 131072:qm9700:4 --keep 64 128 256 --bill
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


def run(gpus: int, switch: str, planes: int, keeps: list[int], bill: bool) -> list[list[str]]:
    """One build with every rack a candidate, then one with each ``keeps`` bound: each row's
    mean candidates a block, placement estimate and (``bill``) the cabled bill."""
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": "dgx-h100"},
            "fabric": {"switches": [switch], "planes": planes, "topology": "roft"},
        }
    )
    catalog = load_catalog()
    search, classes_of = driver.search, driver.swap_classes
    label = f"{gpus:,} GPUs, {switch}, {planes} plane(s)"
    rows: list[list[str]] = []
    for keep in [0, *keeps]:
        held: list[CostTables] = []

        def bounded_search(
            groups, tables, room, rules, budget_s, say, max_kicks=0, keep=keep, held=held
        ):
            narrowed = bounded(groups, tables, room, keep)
            held.append(narrowed)
            rule = tables.candidates
            # like blocks trade racks as in the dense model (classes by the rule's candidates)
            driver.swap_classes = lambda gs, _cands: classes_of(gs, rule)
            try:
                return search(groups, narrowed, room, rules, budget_s, say, max_kicks)
            finally:
                driver.swap_classes = classes_of

        driver.search = bounded_search if keep else search
        try:
            built = build(spec, catalog, bill=bill)
        finally:
            driver.search = search
        placed = built.placement
        assert placed is not None
        racks = np.mean([len(c) for c in held[0].candidates.values()]) if held else placed.racks
        row = [label, f"{keep} cheapest" if keep else "every rack", f"{racks:.0f}"]
        row.append(f"${placed.objective_usd:,.0f}")
        if bill:
            row.append(f"${built.bom.totals.cost_usd:,.0f}")
        rows.append(row)
    for row in rows[1:]:  # each bound against the dense row, estimate and bill
        for col in range(3, len(row)):
            dense, mine = (float(r[col].strip("$").replace(",", "")) for r in (rows[0], row))
            sign = "+" if mine >= dense else "-"
            row[col] += f" ({sign}${abs(mine - dense):,.0f}, {mine / dense - 1:+.2%})"
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fabrics", nargs="+", default=["16384:qm9700:4", "131072:qm9700:4"])
    parser.add_argument("--keep", nargs="+", type=int, default=[32, 64, 128])
    parser.add_argument("--bill", action="store_true", help="bill each design too (slower)")
    args = parser.parse_args()
    head = "| fabric (DGX H100, ROFT) | candidates | racks a block, mean | estimate |"
    print(head + (" bill |" if args.bill else ""))
    print("|---|---|---:|---:|" + ("---:|" if args.bill else ""))
    for fabric in args.fabrics:
        gpus, switch, planes = fabric.split(":")
        for row in run(int(gpus), switch, int(planes), args.keep, args.bill):
            print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
