"""Switch placement: which network rack (and U) each switch goes in, at least cable cost.

``groups`` (blocks of like switches and the racks each may use), ``tables`` (what each block
costs in each rack and each pair in two racks, array arithmetic over rack positions),
``search`` (roles placed by min-cost flow, then moves and swaps), ``cpsat`` (the CP-SAT model,
used when it stays small), ``bounds`` (valid lower bounds, for the gap) and ``driver``
(``place_switches``); ``report`` holds the results and the first-fit baseline.
"""

from railplan.solve.placement.bounds import capacity_bound, relaxation_bound
from railplan.solve.placement.driver import JOINT_LIMIT, deterministic_budget_s, place_switches
from railplan.solve.placement.groups import Group, candidate_racks, make_groups
from railplan.solve.placement.report import (
    PlacementReport,
    SwitchPlacement,
    naive_groups,
    naive_placement,
)
from railplan.solve.placement.tables import CENTS, CostTables, cost_tables, placement_cost

__all__ = [
    "CENTS",
    "JOINT_LIMIT",
    "CostTables",
    "Group",
    "PlacementReport",
    "SwitchPlacement",
    "candidate_racks",
    "capacity_bound",
    "cost_tables",
    "deterministic_budget_s",
    "make_groups",
    "naive_groups",
    "naive_placement",
    "place_switches",
    "placement_cost",
    "relaxation_bound",
]
