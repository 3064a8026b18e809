"""What placement returns: the report, each switch's rack and U, first fit, and why it failed."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.physical.floor import (
    Floor,
    in_compute_rack,
    switch_power_w,
    switch_units,
    tor_slots,
)
from railplan.solve.placement.groups import Group, usable_units
from railplan.solve.placement.tables import CostTables
from railplan.spec import PlacementRulesSpec


@dataclass(frozen=True)
class PlacementReport:
    """What the solver did: estimated cable cost, proven bound and gap, status and effort.

    ``time_limit_s`` is the CP-SAT budget in deterministic seconds (machine-independent work
    units, OR-Tools ``max_deterministic_time``), kept under its old key for the JSON.
    """

    method: str
    status: str
    objective_usd: float
    best_bound_usd: float
    gap: float
    bound_kind: str
    naive_objective_usd: float
    wall_time_s: float
    groups: int
    racks: int
    passes: int
    time_limit_s: float
    random_seed: int
    num_workers: int
    notes: tuple[str, ...] = ()
    #: filled in after cabling: the media actually chosen for every link (per-link shares)
    cable_cost_usd: float = float("nan")
    cable_power_w: float = float("nan")
    cables: int = 0

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass
class SwitchPlacement:
    """Rack and lowest U of every switch, with the report of how it was found; ``fallback``:
    the search's own placement when kicks replaced it (``kicks``), which the layout cables
    too and keeps when the kicked one cannot be cabled or costs more once cabled (the
    placement prices links one by one, the cabling pairs the two ports of a twin-port cage)."""

    rack: dict[str, str]
    u: dict[str, int]
    report: PlacementReport
    fallback: SwitchPlacement | None = None


def empty_report(
    floor: Floor, rules: PlacementRulesSpec, budget_s: float, method: str = "none"
) -> PlacementReport:
    return PlacementReport(
        method=method,
        status="NOT SOLVED",
        objective_usd=float("nan"),
        best_bound_usd=float("nan"),
        gap=float("nan"),
        bound_kind="none",
        naive_objective_usd=float("nan"),
        wall_time_s=0.0,
        groups=0,
        racks=len(floor.network_racks),
        passes=0,
        time_limit_s=budget_s,
        random_seed=rules.random_seed,
        num_workers=rules.num_workers,
    )


def naive_groups(groups: Sequence[Group], floor: Floor) -> np.ndarray | None:
    """First fit in network-rack order (the first stands at the end of row 1); None if it fails."""
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    free_u = np.full(len(floor.network_racks), usable, dtype=np.int64)
    free_w = np.full(len(floor.network_racks), budget, dtype=float)
    at = np.zeros(len(groups), dtype=np.intp)
    first = 0  # racks before it have no unit left
    for i, g in enumerate(groups):
        # the first rack from ``first`` with room, found in one array pass (float64 as a
        # Python float: the same comparisons and subtractions as rack by rack)
        fit = (free_u[first:] >= g.units) & (free_w[first:] + 1e-9 >= g.power_w)
        if not fit.any():
            return None
        r = first + int(fit.argmax())
        free_u[r] -= g.units
        free_w[r] -= g.power_w
        at[i] = r
        while first < len(free_u) and free_u[first] < 1:
            first += 1
    return at


def naive_placement(design: Design, floor: Floor, catalog: Catalog) -> SwitchPlacement:
    """Every switch, in design order, first fit into the network racks from the row end."""
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    racks = list(floor.network_racks)
    free_u = [usable] * len(racks)
    free_w = [budget] * len(racks)
    singles: list[Group] = []
    at: list[int] = []
    first = 0  # racks before it have no unit left
    for sw in design.switches:
        if in_compute_rack(sw):
            continue
        units = switch_units(sw, catalog)
        watts = switch_power_w(sw, catalog, floor.layout.switch_power)
        singles.append(Group(sw.id, sw.role, sw.tier, sw.su, (sw.id,), units, watts, sw.id))
        for r in range(first, len(racks)):
            if units <= free_u[r] and watts <= free_w[r] + 1e-9:
                free_u[r] -= units
                free_w[r] -= watts
                at.append(r)
                break
        else:
            raise InfeasibleError(
                f"layout.network_rack_count: switch {sw.id} does not fit any of the "
                f"{len(racks)} network racks; add network racks"
            )
        while first < len(racks) and free_u[first] < 1:
            first += 1
    report = empty_report(floor, PlacementRulesSpec(), 0.0, method="naive first fit")
    report = dataclasses.replace(report, status="FIRST FIT", groups=len(singles))
    return stacked(design, floor, catalog, singles, np.array(at, dtype=np.intp), report)


def stacked(
    design: Design,
    floor: Floor,
    catalog: Catalog,
    groups: Iterable[Group],
    at: np.ndarray,
    report: PlacementReport,
) -> SwitchPlacement:
    """Stack each rack's switches from the top (below the reserved units) in group order."""
    racks = list(floor.network_racks)
    models = design.switch_by_id()
    next_top = [usable_units(floor)] * len(racks)
    rack_of: dict[str, str] = {}
    u_of: dict[str, int] = {}
    for sid, (rack, u) in tor_slots(design, floor, catalog).items():
        rack_of[sid], u_of[sid] = rack, u
    where = [(int(r), g) for g, r in zip(groups, at.tolist(), strict=True)]
    for r, g in sorted(where, key=lambda rg: (rg[0], rg[1].tier, rg[1].id)):
        for sid in g.members:
            units = switch_units(models[sid], catalog)
            u = next_top[r] - units + 1
            if u < 1:
                raise InfeasibleError(
                    f"layout.network_rack_count: rack {racks[r]} overflows while stacking "
                    f"{sid}; add network racks"
                )
            next_top[r] = u - 1
            rack_of[sid] = racks[r]
            u_of[sid] = u
    return SwitchPlacement(rack=rack_of, u=u_of, report=report)


def infeasible_reason(
    groups: Sequence[Group], tables: CostTables, room: tuple[int, float], rules: PlacementRulesSpec
) -> str:
    """Why the groups cannot be placed: a rule's racks are too small, or too few racks."""
    usable, budget = room
    every = tables.n_racks
    sharing: dict[tuple[int, ...], list[Group]] = defaultdict(list)
    for g in sorted(groups, key=lambda g: g.id):
        cands = tuple(tables.candidates[g.id])
        if len(cands) < every:
            sharing[cands].append(g)
    for cands, members in sharing.items():
        need_u = sum(g.units for g in members)
        need_w = sum(g.power_w for g in members)
        if need_u > usable * len(cands) or need_w > budget * len(cands) + 1e-9:
            rule = "leaves_in_su_rack" if members[0].tier == 1 else "spines_in_network_row"
            names = sorted({g.klass.split("#")[0] for g in members})
            return (
                f"layout.placement.{rule}: {', '.join(names)} need {need_u}U and {need_w:g} W, "
                f"more than rack(s) {', '.join(tables.racks[r] for r in cands)} hold "
                f"({usable}U and {budget:g} W each); add network racks "
                "(layout.network_rack_count), raise layout.network_rack_power_w or drop the rule"
            )
    extra = ""
    if rules.leaves_in_su_rack or rules.spines_in_network_row:
        extra = " or relax layout.placement rules"
    return (
        f"layout.network_rack_count: the switches do not fit the {every} network racks by "
        f"rack units and power; add network racks, raise layout.network_rack_power_w{extra}"
    )
