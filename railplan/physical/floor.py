"""Floor layout: rows of racks, node rack units, and cable lengths routed over overhead trays."""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from railplan.catalog import Catalog
from railplan.design import Design, Rack, Switch
from railplan.errors import InfeasibleError, SpecError
from railplan.physical.trays import TrayNetwork, TrayTable, given_trays, row_trays, tray_network
from railplan.spec import U_HEIGHT_M, LayoutSpec

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["End", "Floor", "build_floor", "given_trays", "row_trays", "tray_network"]

#: headroom over the strict need when ``network_rack_count`` is ``auto`` (need > 1)
AUTO_HEADROOM = 1.25


@dataclass(frozen=True)
class End:
    """One end of a cable run: the rack it sits in and the height of its port above the floor."""

    rack: str
    height_m: float


@dataclass
class Floor:
    """Racks on the floor and the tray network joining them; answers routed cable lengths."""

    layout: LayoutSpec
    racks: tuple[Rack, ...]
    #: compute rack id of each node rack index (``Node.rack``)
    compute_racks: tuple[str, ...]
    network_racks: tuple[str, ...]
    #: network racks standing in the middle of each SU's racks (``in-row`` layouts)
    su_racks: dict[int, tuple[str, ...]]
    #: tray graph node where each rack's cables drop in, and the run from rack top to it
    drop_node: dict[str, str]
    drop_m: dict[str, float]
    #: the run between any two racks as array arithmetic (built once from the trays)
    trays: TrayTable
    network: TrayNetwork = field(repr=False)
    _runs: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)

    @functools.cached_property
    def graph(self) -> nx.Graph:
        """The tray graph, racks included (networkx; edge attribute ``length``)."""
        return self.network.graph()

    @property
    def rack_by_id(self) -> dict[str, Rack]:
        return {r.id: r for r in self.racks}

    def network_row_racks(self) -> tuple[str, ...]:
        """Racks of the dedicated network row(s); empty unless the layout has one."""
        if self.layout.network_racks != "network-row":
            return ()
        return self.network_racks

    # -- lengths ------------------------------------------------------------------------------
    def port_height_m(self, u: int, height_u: int) -> float:
        """Height above the floor of a device's ports: the middle of its rack units."""
        return (u - 1 + height_u / 2) * U_HEIGHT_M

    def tray_distance_m(self, rack_a: str, rack_b: str) -> float:
        """Horizontal run from the top of one rack to the top of another along the trays."""
        if rack_a == rack_b:
            return 0.0
        key = (rack_a, rack_b) if rack_a < rack_b else (rack_b, rack_a)
        hit = self._runs.get(key)
        if hit is None:
            ix = self.trays.index
            run = self.trays.run_m(ix[key[0]], ix[key[1]])
            if not math.isfinite(run):
                raise InfeasibleError(_no_tray(*key))
            hit = self._runs[key] = round(run, 6)
        return hit

    def tray_distances_m(self, rack: str, others: Sequence[str]) -> list[float]:
        """``tray_distance_m`` from one rack to each of ``others``."""
        return [float(x) for x in self.tray_table_m([rack], others)[0]]

    def tray_table_m(self, racks_a: Sequence[str], racks_b: Sequence[str]) -> np.ndarray:
        """Runs from each of ``racks_a`` (rows) to each of ``racks_b`` (columns), in metres.

        Raises InfeasibleError when no tray joins two of them.
        """
        ix = self.trays.index
        a = np.array([ix[r] for r in racks_a], dtype=np.intp)
        b = np.array([ix[r] for r in racks_b], dtype=np.intp)
        out = self.trays.runs_m(a, b)
        np.round(out, 6, out=out)  # in place: the same floats, no second table
        if not np.isfinite(out).all():
            i, j = np.argwhere(~np.isfinite(out))[0]
            raise InfeasibleError(_no_tray(racks_a[i], racks_b[j]))
        return out

    def route_length_m(self, a: End, b: End) -> float:
        """Routed length of a cable: up out of rack a, along the trays, down into rack b, + slack.

        Inside one rack the cable runs only vertically between the two port heights.
        """
        slack = self.layout.slack_m
        if a.rack == b.rack:
            return round(abs(a.height_m - b.height_m) + slack, 3)
        tray = self.layout.trays.height_m
        up = (tray - a.height_m) + (tray - b.height_m)
        return round(up + self.tray_distance_m(a.rack, b.rack) + slack, 3)

    def route_lengths_m(self, spots: Sequence[End], a: np.ndarray, b: np.ndarray) -> list[float]:
        """``route_length_m(spots[a[i]], spots[b[i]])`` for every i, with arrays: the same
        sums in the same order (so the same floats), each rack pair's tray run looked up once
        (``tray_distance_m``) and every length rounded by Python's ``round`` as there."""
        slack = self.layout.slack_m
        tray = self.layout.trays.height_m
        racks = sorted({e.rack for e in spots})
        number = {r: i for i, r in enumerate(racks)}
        spot_rack = np.array([number[e.rack] for e in spots], dtype=np.int64)
        spot_h = np.array([e.height_m for e in spots], dtype=float)
        ra, rb, ha, hb = spot_rack[a], spot_rack[b], spot_h[a], spot_h[b]
        out = np.empty(len(a), dtype=float)
        same = ra == rb
        out[same] = np.abs(ha[same] - hb[same]) + slack
        apart = ~same
        pair = np.minimum(ra, rb)[apart] * len(racks) + np.maximum(ra, rb)[apart]
        pairs, which = np.unique(pair, return_inverse=True)
        n = len(racks)
        runs = np.array(
            [self.tray_distance_m(racks[p // n], racks[p % n]) for p in pairs.tolist()],
            dtype=float,
        )
        up = (tray - ha[apart]) + (tray - hb[apart])
        out[apart] = up + runs[which.reshape(-1)] + slack
        # Python's round, once per distinct length (a floor has few): the same floats; a zero
        # keeps its own sign (unique takes -0.0 and 0.0 for one value)
        distinct, at = np.unique(out, return_inverse=True)
        rounded = np.array([round(x, 3) for x in distinct.tolist()], dtype=float)[at.reshape(-1)]
        zero = out == 0
        rounded[zero] = out[zero]
        return rounded.tolist()


def _no_tray(rack_a: str, rack_b: str) -> str:
    return (
        f"layout.trays: no tray joins rack {rack_a} to rack {rack_b}; add a segment that "
        "connects their trays"
    )


# -- rack rows ------------------------------------------------------------------------------


def switch_units(sw: Switch, catalog: Catalog) -> int:
    return catalog.switch(sw.model).rack_units


def switch_power_w(sw: Switch, catalog: Catalog, figure: str) -> float:
    model = catalog.switch(sw.model)
    return (model.power_max_w if figure == "max" else model.power_typical_w).value


def in_compute_rack(sw: Switch) -> bool:
    """A switch the design ties to a compute rack (a per-rack ToR) sits at that rack's top."""
    return sw.rack >= 0


def network_rack_need(
    design: Design, layout: LayoutSpec, catalog: Catalog, extra_u: int = 0
) -> int:
    """Network racks the switches need by rack units and by power, before any headroom.

    ``extra_u``: rack units of patch panels the fibre plant needs beside the switches.
    """
    usable = layout.rack_height_u - layout.network_rack_reserved_u
    total_u = extra_u
    total_w = 0.0
    free = [sw for sw in design.switches if not in_compute_rack(sw)]
    for sw in free:
        units = switch_units(sw, catalog)
        watts = switch_power_w(sw, catalog, layout.switch_power)
        if units > usable:
            raise SpecError(
                f"layout.network_rack_reserved_u: a {units}U {sw.model} does not fit the "
                f"{usable}U left in a network rack; reserve fewer units or use taller racks"
            )
        if watts > layout.network_rack_power_w:
            raise SpecError(
                f"layout.network_rack_power_w: one {sw.model} draws {watts:g} W, more than a "
                f"network rack's {layout.network_rack_power_w:g} W budget; raise the budget"
            )
        total_u += units
        total_w += watts
    if not free:
        return 0
    return max(math.ceil(total_u / usable), math.ceil(total_w / layout.network_rack_power_w), 1)


def _chunks(items: Sequence[int], size: int) -> list[list[int]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _rows(design: Design, layout: LayoutSpec, n_compute: int, n_network: int) -> list[list[str]]:
    """Rows as lists of ``c<index>`` / ``n<index>`` tokens (compute / network rack)."""
    per_row = layout.racks_per_row
    compute = list(range(n_compute))
    policy = layout.network_racks
    rows: list[list[str]] = []
    if policy == "in-row":
        su_racks = max(1, math.ceil(design.sizing.su_nodes / layout.nodes_per_rack))
        groups = _chunks(compute, su_racks) or [[]]
        per_group = max(1, math.ceil(n_network / len(groups)))
        groups_per_row = max(1, per_row // su_racks)
        net = 0
        for row_groups in _chunks(list(range(len(groups))), groups_per_row):
            row: list[str] = []
            for g in row_groups:
                members = groups[g]
                half = len(members) // 2
                nets = [f"n{net + k}:{g}" for k in range(per_group)]
                net += per_group
                row += [f"c{i}" for i in members[:half]] + nets + [f"c{i}" for i in members[half:]]
            rows.append(row)
        return rows
    compute_rows = _chunks(compute, per_row) or [[]]
    if policy == "network-row":
        net_rows = [[f"n{i}" for i in chunk] for chunk in _chunks(list(range(n_network)), per_row)]
        mid = len(compute_rows) // 2
        rows = [[f"c{i}" for i in r] for r in compute_rows]
        return rows[:mid] + net_rows + rows[mid:]
    per = max(1, math.ceil(n_network / len(compute_rows)))
    net = 0
    for members in compute_rows:
        nets = [f"n{net + k}" for k in range(per)]
        net += per
        cs = [f"c{i}" for i in members]
        if policy == "end-of-row":
            rows.append(cs + nets)
        else:  # middle-of-row
            half = len(cs) // 2
            rows.append(cs[:half] + nets + cs[half:])
    return rows


def rack_id(row: int, position: int) -> str:
    """``R<row><position>``, both 1-based and two digits: ``R0103`` is row 1, third rack."""
    return f"R{row + 1:02d}{position + 1:02d}"


def build_floor(design: Design, layout: LayoutSpec, catalog: Catalog, extra_u: int = 0) -> Floor:
    """Lay out the design's compute racks and enough network racks; build the tray network.

    ``extra_u`` counts patch-panel units the network racks must hold beside the switches.
    """
    holders = [n.rack for n in design.nodes] + [d.rack for d in design.devices]
    n_compute = max(holders, default=-1) + 1
    need = network_rack_need(design, layout, catalog, extra_u)
    if layout.network_rack_count == "auto":
        n_network = math.ceil(need * AUTO_HEADROOM - 1e-9) if need > 1 else need
    else:
        n_network = layout.network_rack_count
        if n_network < need:
            raise SpecError(
                f"layout.network_rack_count: {n_network} network racks cannot hold the "
                f"{len(design.switches)} switches"
                + (f" and {extra_u} U of patch panels" if extra_u else "")
                + f", which need at least {need} by rack units and power; raise it or use auto"
            )
    rows = _rows(design, layout, n_compute, n_network)
    racks: list[Rack] = []
    compute: dict[int, str] = {}
    network: list[str] = []
    su_racks: dict[int, list[str]] = {}
    pitch = layout.pitch_m
    for r, row in enumerate(rows):
        for p, token in enumerate(row):
            rid = rack_id(r, p)
            kind = "compute" if token.startswith("c") else "network"
            racks.append(
                Rack(
                    id=rid,
                    row=r,
                    position=p,
                    kind=kind,
                    x_m=round(p * layout.rack_width_m, 3),
                    y_m=round(r * pitch, 3),
                    height_u=layout.rack_height_u,
                )
            )
            if kind == "compute":
                compute[int(token[1:])] = rid
            else:
                network.append(rid)
                if ":" in token:
                    su_racks.setdefault(int(token.split(":")[1]), []).append(rid)
    trays = tray_network(racks, layout)
    return Floor(
        layout=layout,
        racks=tuple(racks),
        compute_racks=tuple(compute[i] for i in range(n_compute)),
        network_racks=tuple(network),
        su_racks={k: tuple(v) for k, v in su_racks.items()},
        drop_node=trays.drop_node,
        drop_m=trays.drop_m,
        trays=trays.table,
        network=trays,
    )


# -- where nodes sit ------------------------------------------------------------------------


def node_slots(design: Design, floor: Floor) -> dict[str, tuple[str, int]]:
    """Rack id and lowest U of every node, in index order within each rack (an attached
    device stands in the node slot it took its leaf ports from)."""
    slots = floor.layout.node_slots()
    out: dict[str, tuple[str, int]] = {}
    used: dict[int, int] = {}
    holders = [(n.index, n.id, n.rack) for n in design.nodes]
    holders += [(d.index, d.id, d.rack) for d in design.devices]
    for _, holder, rack in sorted(holders):
        k = used.get(rack, 0)
        if k >= len(slots):
            raise SpecError(
                f"layout.nodes_per_rack: rack {rack + 1} holds more nodes than the "
                f"{len(slots)} slots the layout gives; plan with the same layout"
            )
        used[rack] = k + 1
        out[holder] = (floor.compute_racks[rack], slots[k])
    return out


def tor_slots(design: Design, floor: Floor, catalog: Catalog) -> dict[str, tuple[str, int]]:
    """Rack id and lowest U of every switch tied to a compute rack, stacked down from the top.

    Raises SpecError when they reach down into the node slots.
    """
    slots = floor.layout.node_slots()
    node_top = max(slots) + floor.layout.node_height_u - 1
    next_top: dict[int, int] = {}
    out: dict[str, tuple[str, int]] = {}
    for sw in design.switches:
        if not in_compute_rack(sw):
            continue
        top = next_top.get(sw.rack, floor.layout.rack_height_u)
        u = top - switch_units(sw, catalog) + 1
        if u <= node_top:
            raise SpecError(
                f"layout.rack_height_u: {sw.id} does not fit above the nodes of compute rack "
                f"{floor.compute_racks[sw.rack]} (nodes reach U{node_top}); use taller racks or "
                "fewer nodes_per_rack"
            )
        next_top[sw.rack] = u - 1
        out[sw.id] = (floor.compute_racks[sw.rack], u)
    return out


def racks_of(floor: Floor, kinds: Iterable[str]) -> list[Rack]:
    wanted = set(kinds)
    return [r for r in floor.racks if r.kind in wanted]
