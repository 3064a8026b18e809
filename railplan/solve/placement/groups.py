"""Switch groups placed as one unit, the racks each may use, and which groups are interchangeable."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.design import Design, Switch
from railplan.errors import SpecError
from railplan.physical.floor import Floor, in_compute_rack, switch_power_w, switch_units
from railplan.spec import PlacementRulesSpec


@dataclass(frozen=True)
class Group:
    """Like switches placed together in one rack (members of one SU, pod or tier block)."""

    id: str
    role: str
    tier: int
    su: int
    members: tuple[str, ...]
    units: int
    power_w: float
    #: class id: groups of one class are cut from one block of like switches
    klass: str


def usable_units(floor: Floor) -> int:
    return floor.layout.rack_height_u - floor.layout.network_rack_reserved_u


def make_groups(design: Design, floor: Floor, catalog: Catalog, size: int) -> list[Group]:
    """Aggregate switches into blocks: leaves per (plane, SU), spines per (plane, pod), cores
    per plane; each class is cut into chunks of at most ``size`` that fit one rack."""
    classes: dict[tuple[int, int, str, int, int, str], list[Switch]] = defaultdict(list)
    for sw in design.switches:
        if in_compute_rack(sw):
            continue
        su = sw.su if sw.tier == 1 else -1
        classes[(sw.tier, sw.plane, sw.role, su, sw.pod, sw.group)].append(sw)
    usable = usable_units(floor)
    budget = floor.layout.network_rack_power_w
    figure = floor.layout.switch_power
    models = {s.model: s for members in classes.values() for s in members}
    units_of = {m: switch_units(s, catalog) for m, s in models.items()}
    watts_of = {m: switch_power_w(s, catalog, figure) for m, s in models.items()}
    groups: list[Group] = []
    for key in sorted(classes):
        tier, plane, role, su, pod, tag = key
        members = sorted(classes[key], key=lambda s: s.id)
        unit_u = max(units_of[s.model] for s in members)
        unit_w = max(watts_of[s.model] for s in members)
        chunk = max(1, min(size, usable // unit_u, int(budget // unit_w)))
        klass = f"{role}.p{plane}" + (f".su{su + 1}" if su >= 0 else "")
        klass += (f".pod{pod + 1}" if pod >= 0 else "") + (f".{tag}" if tag else "")
        for c in range(0, len(members), chunk):
            part = members[c : c + chunk]
            groups.append(
                Group(
                    id=f"{klass}#{c // chunk + 1}",
                    role=role,
                    tier=tier,
                    su=su,
                    members=tuple(s.id for s in part),
                    units=sum(units_of[s.model] for s in part),
                    power_w=sum(watts_of[s.model] for s in part),
                    klass=klass,
                )
            )
    return groups


def candidate_racks(
    design: Design, floor: Floor, groups: Sequence[Group], rules: PlacementRulesSpec
) -> dict[str, list[int]]:
    """Racks each group may use: every network rack unless a rule narrows it."""
    racks = list(floor.network_racks)
    index = {r: i for i, r in enumerate(racks)}
    every = list(range(len(racks)))
    out: dict[str, list[int]] = {}
    row_racks = floor.network_row_racks()
    if rules.spines_in_network_row and not row_racks:
        raise SpecError(
            "layout.placement.spines_in_network_row: the layout has no network row; set "
            "layout.network_racks: network-row or drop the rule"
        )
    su_home = su_home_racks(design, floor) if rules.leaves_in_su_rack else {}
    for g in groups:
        allowed = every
        if g.tier >= 2 and rules.spines_in_network_row:
            allowed = [index[r] for r in row_racks]
        if g.tier == 1 and rules.leaves_in_su_rack and g.su >= 0:
            allowed = [index[r] for r in su_home[g.su]]
        out[g.id] = allowed
    return out


def su_home_racks(design: Design, floor: Floor) -> dict[int, tuple[str, ...]]:
    """The SU's own network racks (in-row), else the network rack nearest its compute racks
    (least summed tray run; ties to the first in floor order)."""
    homes: dict[int, tuple[str, ...]] = {}
    racks_of_su: dict[int, set[str]] = defaultdict(set)
    for node in design.nodes:
        racks_of_su[node.su].add(floor.compute_racks[node.rack])
    network = sorted(floor.network_racks)
    for su, members in sorted(racks_of_su.items()):
        if su in floor.su_racks:
            homes[su] = floor.su_racks[su]
            continue
        runs = [sum(row) for row in floor.tray_table_m(network, sorted(members)).tolist()]
        homes[su] = (network[runs.index(min(runs))],)
    return homes


def swap_classes(groups: Sequence[Group], candidates: dict[str, list[int]]) -> list[int]:
    """A class number per group: groups of one class take the same room and may use the same
    racks, so two of them can trade racks without breaking a rack's units or power."""
    seen: dict[tuple[int, float, tuple[int, ...]], int] = {}
    return [
        seen.setdefault((g.units, g.power_w, tuple(candidates[g.id])), len(seen)) for g in groups
    ]
