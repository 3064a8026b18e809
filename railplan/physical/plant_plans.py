"""Pricing a component routed through the fibre plant: harness, panel ports, trunk or cord.

When both ends of a link fan out (a module connector carries ports whose far ends sit on
different modules) no cord joins the two modules directly. The plant does it in three
segments: a 1:k breakout harness (or a straight cord, for a single-port connector) from each
module connector to an MPO adapter panel in its rack, and between the two panels a trunk
position or a patch cord of its own. NVIDIA's structured cabling requirements state that its
reach figures already allow for two patch panels in the link; a channel with a splitter in it
is limited by the splitter's reach (single-mode splitter channels 50 m for NVIDIA parts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from railplan.catalog import Cable, Cassette, Panel, Transceiver
from railplan.physical.media_types import (
    CatalogIndex,
    Component,
    Plan,
    PlantParts,
    part_rank,
    shared_interfaces,
)

#: metres from a module to the panel in its own rack the fan-out parts are priced at (the
#: layout measures the real run: port height to panel height plus slack)
PANEL_RUN_M = 3.0


def panel_options(idx: CatalogIndex, connector: str) -> list[tuple[Panel, Cassette]]:
    """Every (housing, adapter plate) pair whose plates couple ``connector``, cheapest per port first."""
    out = []
    for cas in idx.catalog.cassettes.values():
        if cas.connector != connector:
            continue
        for pid in cas.fits:
            panel = idx.catalog.panels.get(pid)
            if panel is not None:
                out.append((panel, cas))
    return sorted(
        out, key=lambda pc: (round(port_usd(*pc), 4), pc[0].rack_units, pc[0].id, pc[1].id)
    )


def port_usd(panel: Panel, cassette: Cassette) -> float:
    """Price of one panel port at full fill: the plate's share plus the housing's share."""
    ports = panel.slots * cassette.ports
    return cassette.price_usd.value / cassette.ports + panel.price_usd.value / ports


def carriages(
    idx: CatalogIndex, fibre: str, connector: str, protocol: str, vendors: Sequence[str] | None
) -> tuple[Cable, ...]:
    """Parts a leg can ride between two panels: trunks of that connector and straight cords."""
    trunks = tuple(
        t
        for t in idx.trunks
        if t.fibre == fibre and t.end_a == t.end_b == connector and not t.usable(protocol, vendors)
    )
    return trunks + idx.cords_for(fibre, connector, connector, 1, protocol, vendors)


def leg_cost(part: Cable, length_m: float) -> tuple[float, float] | None:
    """Cost of one leg on ``part`` at ``length_m`` (a trunk's price shared by its positions)."""
    stock = part.stocked(length_m)
    if stock is None:
        return None
    share = part.links if part.kind == "trunk" else 1
    return part.price_at(stock) / share, stock


def cheapest_carriage(
    parts: Sequence[Cable], length_m: float, max_stock_m: float = math.inf
) -> tuple[Cable, float, float] | None:
    """(part, stocked length, cost per leg) of the cheapest carriage reaching ``length_m``
    whose stocked length stays within ``max_stock_m`` (what the channel has left)."""
    best: tuple[tuple[float, int, str], Cable, float, float] | None = None
    for part in parts:
        priced = leg_cost(part, length_m)
        if priced is None or priced[1] > max_stock_m + 1e-6:
            continue
        cost, stock = priced
        rank = (round(cost, 4), 0 if part.kind == "trunk" else 1, part.id)
        if best is None or rank < best[0]:
            best = (rank, part, stock, cost)
    return None if best is None else (best[1], best[2], best[3])


def _fan_out(
    idx: CatalogIndex, comp: Component, module: Transceiver, vendors: Sequence[str] | None
) -> Cable | None:
    """The cheapest harness (1:k, k ports per connector) or straight cord from a module to a
    panel: its a end takes the module's connector, each b end is one leg."""
    k = module.ports_per_connector
    parts = [
        c
        for c in idx.cords
        if c.end_a == module.connector
        and c.fibre == module.fibre
        and c.breakout == k
        and (k > 1 or c.end_b == module.connector)
        and c.stocked(PANEL_RUN_M) is not None
        and not c.usable(comp.protocol, vendors)
    ]
    if not parts:
        return None
    return min(parts, key=lambda c: part_rank(c, c.stocked(PANEL_RUN_M) or 0.0))


def plant_parts(
    idx: CatalogIndex, comp: Component, mods: Sequence[Transceiver]
) -> tuple[PlantParts, float] | None:
    """The plant for ``comp`` with module ``mods[c]`` in cage c, and its reach (None: cannot)."""
    fibre = mods[0].fibre
    if any(t.fibre != fibre for t in mods):
        return None
    vendors = None if not comp.vendors else sorted(set(comp.vendors))
    fans = []
    for cage, t in enumerate(mods):
        fan = _fan_out(idx, comp, t, comp.vendors_of([cage]))
        if fan is None:
            return None
        fans.append(fan)
    connector = fans[0].end_b  # every leg lands on a coupler of one connector type
    if any(f.end_b != connector for f in fans):
        return None
    options = panel_options(idx, connector)
    legs = carriages(idx, fibre, connector, comp.protocol, vendors)
    if not options or not legs:
        return None
    panel, cassette = options[0]
    per_port = port_usd(panel, cassette)
    ports_per_conn = [t.ports_per_connector for t in mods]
    fixed = 0.0
    for a, _, b, _ in comp.runs:
        for cage in (a, b):
            fan = fans[cage]
            fixed += fan.price_at(fan.stocked(PANEL_RUN_M) or PANEL_RUN_M) / ports_per_conn[cage]
            fixed += per_port
    reach = min(t.reach_m.value for t in mods)
    reach = min([reach] + [f.reach_m.value for f in fans if f.breakout > 1])
    fan_m = 2 * max(f.stocked(PANEL_RUN_M) or PANEL_RUN_M for f in fans)
    longest = max(min(c.reach_m.value, c.lengths_m[-1]) for c in legs)
    parts = PlantParts(
        fan_out=tuple(fans),
        legs=tuple(ports_per_conn),
        port_usd=per_port,
        panel=panel,
        cassette=cassette,
        carriages=legs,
        fixed_usd=fixed,
        panel_run_m=PANEL_RUN_M,
        channel_m=reach - fan_m,
    )
    # the channel adds a module-to-panel run at each end to the leg between the panels
    return parts, min(reach - fan_m, longest)


def plant_plans(
    idx: CatalogIndex, comp: Component, per_cage: Sequence[list[Transceiver]]
) -> list[Plan]:
    """One plant plan per interface every cage can run: the cheapest module of it in each cage."""
    out = []
    for iface in shared_interfaces(per_cage):
        mods = [next(t for t in c if t.interface == iface) for c in per_cage]
        built = plant_parts(idx, comp, mods)
        if built is None:
            continue
        parts, reach = built
        label = f"plant:{iface}:" + "+".join(sorted({t.id for t in mods}))
        out.append(Plan("plant", label, tuple(mods), (), reach, iface, mods[0].fibre, plant=parts))
    return out


def plant_price(
    plan: Plan, n_runs: int, length_m: float
) -> tuple[float, float, Cable, float] | None:
    """(cost, power, carriage part, its stocked length) of a plant plan with every leg at ``length_m``."""
    parts = plan.plant
    assert parts is not None
    if length_m > plan.reach_m + 1e-6:
        return None
    carriage = cheapest_carriage(parts.carriages, length_m, parts.channel_m)
    if carriage is None:
        return None
    part, stock, per_leg = carriage
    cost = sum(t.price_usd.value for t in plan.modules if t is not None)
    power = sum(t.power_w.value for t in plan.modules if t is not None)
    cost += parts.fixed_usd + n_runs * per_leg
    return cost, power, part, stock


def run_cost(
    plan: Plan, on_cage: Sequence[int], run: tuple[int, int, int, int], length_m: float
) -> tuple[float, float, Cable, float]:
    """One link's share of a plant plan at its own length: module shares, fan-outs, ports, leg."""
    parts = plan.plant
    assert parts is not None
    a, _, b, _ = run
    cost = power = 0.0
    for cage in (a, b):
        t = plan.modules[cage]
        if t is not None:
            cost += t.price_usd.value / on_cage[cage]
            power += t.power_w.value / on_cage[cage]
        fan = parts.fan_out[cage]
        cost += fan.price_at(fan.stocked(parts.panel_run_m) or parts.panel_run_m) / parts.legs[cage]
        cost += parts.port_usd
    carriage = cheapest_carriage(parts.carriages, length_m, parts.channel_m)
    if carriage is None:  # beyond every carriage: priced at the longest, the layout refuses it
        part = max(parts.carriages, key=lambda c: c.lengths_m[-1])
        stock = part.lengths_m[-1]
        per_leg = part.price_at(stock) / (part.links if part.kind == "trunk" else 1)
    else:
        part, stock, per_leg = carriage
    return cost + per_leg, power, part, stock if math.isfinite(stock) else 0.0
