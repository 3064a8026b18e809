"""Bill of materials of a Design: switches, transceivers per cage, cables per stocked length."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable
from dataclasses import asdict, dataclass
from typing import Any

from railplan.catalog import Cable, Catalog, Sourced, Transceiver
from railplan.design import Design
from railplan.design.ends import CageEnd, link_ends
from railplan.errors import InfeasibleError
from railplan.physical.media import LinkRun, components
from railplan.validate.cables import check_cables

KINDS = ("switch", "nic", "transceiver", "cable", "splitter", "fibre")
NO_CABLES = (
    "the design has no cables yet (run the layout to route them): this BOM covers switches only"
)


@dataclass(frozen=True, slots=True)
class BomLine:
    """One part: how many, at what unit price and power, and where those figures come from."""

    part: str
    kind: str
    description: str
    count: int
    unit_price_usd: float
    total_usd: float
    unit_power_w: float
    total_power_w: float
    #: where the price comes from (catalog ``source``)
    source: str
    power_source: str = ""
    #: stocked length of a cable, fibre or splitter line
    length_m: float | None = None
    part_number: str = ""


@dataclass(frozen=True, slots=True)
class BomTotals:
    """Sums over the lines.

    ``power_w`` is typical: switches without optics plus every module and active cable.
    ``power_max_w`` takes each switch at the larger of its catalog maximum (which budgets the
    optics in its cages) and its typical figure plus the modules actually in it, then adds the
    node-side modules and active cables.
    """

    cost_usd: float
    power_w: float
    power_max_w: float
    switches: int
    transceivers: int
    #: physical cables of every kind (copper, AOC, fibre cords, splitters)
    cables: int
    fibres: int
    splitters: int
    rack_units: int
    nics: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Bom:
    """Lines grouped by part (and stocked length), totals, and notes about what is left out."""

    lines: tuple[BomLine, ...]
    totals: BomTotals
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{"bom": [lines], "totals": {...}, "notes": [...]}``, plain JSON data."""
        return {
            "bom": [asdict(line) for line in self.lines],
            "totals": self.totals.as_dict(),
            "notes": list(self.notes),
        }

    def count(self, kind: str) -> int:
        return sum(line.count for line in self.lines if line.kind == kind)


def _money(x: float) -> float:
    return round(x, 2)


def _line(
    part: str,
    kind: str,
    description: str,
    count: int,
    price: float,
    power: float,
    sources: tuple[str, str],
    length_m: float | None = None,
    part_number: str = "",
) -> BomLine:
    return BomLine(
        part=part,
        kind=kind,
        description=description,
        count=count,
        unit_price_usd=_money(price),
        total_usd=_money(price * count),
        unit_power_w=round(power, 3),
        total_power_w=round(power * count, 3),
        source=sources[0],
        power_source=sources[1],
        length_m=length_m,
        part_number=part_number,
    )


def _cable_source(part: Cable) -> str:
    per_m: Sourced | None = part.price_per_m_usd
    if per_m is None:
        return part.price_usd.source
    return f"{part.price_usd.source}; per metre {per_m.value:g} USD, {per_m.source}"


def _cable_kind(part: Cable) -> str:
    if part.breakout > 1:
        return "splitter"
    return "fibre" if part.kind == "fibre" else "cable"


def bom(design: Design, catalog: Catalog, *, include_nics: bool = False) -> Bom:
    """The bill of materials of ``design``, priced from ``catalog``.

    Switches come from Design.switches. Transceivers and cables come from Design.cables: a
    module is counted once per cage (a twin-port module serving two links is one part), a
    splitter or twin-port cable once for all its links, each cable at its component's longest
    length rounded up to a stocked length (the rule ``media.assign_cages`` applies). NICs are
    priced only with ``include_nics`` (they usually come with the nodes). Raises
    InfeasibleError when the cables break a rule (two optics in one cage, a cord beyond reach).
    """
    notes: list[str] = []
    lines: list[BomLine] = []
    switch_models = Counter(sw.model for sw in design.switches)
    for model_id, n in sorted(switch_models.items()):
        m = catalog.switch(model_id)
        lines.append(
            _line(
                m.id,
                "switch",
                m.name,
                n,
                m.price_usd.value,
                m.power_typical_w.value,
                (m.price_usd.source, m.power_typical_w.source),
            )
        )
    nics = 0
    if include_nics and design.shape.nic_model in catalog.nics:
        nic = catalog.nic(design.shape.nic_model)
        nics = len(design.nodes) * design.shape.nics
        lines.append(
            _line(
                nic.id,
                "nic",
                nic.name,
                nics,
                nic.price_usd.value,
                nic.power_w.value,
                (nic.price_usd.source, nic.power_w.source),
            )
        )
    elif not include_nics:
        notes.append("NICs are left out: they come with the nodes (include_nics prices them)")
    optics_in_switch: dict[str, float] = defaultdict(float)
    other_power = 0.0
    if not design.cables:
        notes.append(NO_CABLES)
    else:
        module_lines, cable_lines, optics_in_switch, other_power = _cabling(design, catalog, notes)
        lines += module_lines + cable_lines
    lines.sort(key=lambda ln: (KINDS.index(ln.kind), ln.part, ln.length_m or 0.0))
    power_max = other_power
    units = 0
    for sw in design.switches:
        m = catalog.switch(sw.model)
        units += m.rack_units
        power_max += max(m.power_max_w.value, m.power_typical_w.value + optics_in_switch[sw.id])
    if include_nics and nics:
        power_max += catalog.nic(design.shape.nic_model).power_w.value * nics
    totals = BomTotals(
        cost_usd=_money(sum(ln.total_usd for ln in lines)),
        power_w=round(sum(ln.total_power_w for ln in lines), 1),
        power_max_w=round(power_max, 1),
        switches=len(design.switches),
        transceivers=sum(ln.count for ln in lines if ln.kind == "transceiver"),
        cables=sum(ln.count for ln in lines if ln.kind in ("cable", "fibre", "splitter")),
        fibres=sum(ln.count for ln in lines if ln.kind == "fibre"),
        splitters=sum(ln.count for ln in lines if ln.kind == "splitter"),
        rack_units=units,
        nics=nics,
    )
    return Bom(lines=tuple(lines), totals=totals, notes=tuple(notes))


def _cabling(
    design: Design, catalog: Catalog, notes: list[str]
) -> tuple[list[BomLine], list[BomLine], dict[str, float], float]:
    """Transceiver and cable lines, optics power per switch, and power outside the switches."""
    problems = check_cables(design, catalog)
    if problems:
        more = f" ({len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InfeasibleError(f"{problems[0]}{more}")
    ends = link_ends(design, catalog)
    cables = sorted(design.cables, key=lambda c: c.link_id)
    missing = len(design.links) - len({c.link_id for c in cables})
    if missing:
        notes.append(f"{missing} of {len(design.links)} links have no cable and are not priced")
    runs = [
        LinkRun(c.link_id, 0, c.length_m, *ends[c.link_id])  # speed does not matter here
        for c in cables
    ]
    longest: dict[int, float] = {}
    for members in components(runs):
        top = max(runs[i].length_m for i in members)
        for i in members:
            longest[i] = top
    switches = design.switch_by_id()
    modules: dict[tuple[str, int], Transceiver] = {}
    instances: dict[Hashable, tuple[Cable, float]] = {}
    for i, cab in enumerate(cables):
        part = catalog.cables[cab.media]
        a, b = ends[cab.link_id]
        mods: list[Transceiver | None] = []
        for end, name in ((a, cab.transceiver_a), (b, cab.transceiver_b)):
            t = catalog.transceivers.get(name) if name else None
            mods.append(t)
            if t is not None:
                modules[end.key] = t
        key = _instance_key(part, a, b, mods)
        held = instances.get(key)
        length = max(longest[i], held[1] if held else 0.0)
        instances[key] = (part, length)
    optics_in_switch: dict[str, float] = defaultdict(float)
    other_power = 0.0
    by_module: Counter[str] = Counter()
    for (device, _cage), t in modules.items():
        by_module[t.id] += 1
        if device in switches:
            optics_in_switch[device] += t.power_w.value
        else:
            other_power += t.power_w.value
    module_lines = []
    for tid, n in sorted(by_module.items()):
        t = catalog.transceivers[tid]
        desc = t.name + (f" (the {t.mode_of} part)" if t.mode_of else "")
        module_lines.append(
            _line(
                t.id,
                "transceiver",
                desc,
                n,
                t.price_usd.value,
                t.power_w.value,
                (t.price_usd.source, t.power_w.source),
                part_number=t.part_number,
            )
        )
    by_cable: Counter[tuple[str, float]] = Counter()
    for part, length in instances.values():
        stock = part.stocked(length)
        if stock is None:
            stock = part.lengths_m[-1]
            notes.append(
                f"{part.id}: {length:g} m exceeds its longest stocked length; counted at {stock:g} m"
            )
        by_cable[(part.id, stock)] += 1
        other_power += part.power_w.value
    cable_lines = []
    for (pid, stock), n in sorted(by_cable.items()):
        part = catalog.cables[pid]
        cable_lines.append(
            _line(
                pid,
                _cable_kind(part),
                f"{part.name}, {stock:g} m",
                n,
                part.price_at(stock),
                part.power_w.value,
                (_cable_source(part), part.power_w.source),
                length_m=stock,
                part_number=part.part_number,
            )
        )
    return module_lines, cable_lines, optics_in_switch, other_power


def _instance_key(part: Cable, a: CageEnd, b: CageEnd, mods: list[Transceiver | None]) -> Hashable:
    """What identifies one physical cable, so links sharing it count it once."""
    if part.kind != "fibre":
        if part.breakout == 1:  # a straight built-in cable fills both cages
            return ("cable", part.id, a.key)
        hub = a if a.ports_per_cage >= b.ports_per_cage else b
        return ("splitter", part.id, hub.key)
    conn: list[tuple[tuple[str, int], int, int]] = []
    for end, t in zip((a, b), mods, strict=True):
        per = t.ports_per_connector if t else 1
        conn.append((end.key, end.slot // per, per))
    if part.breakout == 1:  # a straight cord joins one connector at each end
        return ("cord", part.id, conn[0][0], conn[0][1])
    at = conn[0] if conn[0][2] == part.breakout or conn[1][2] != part.breakout else conn[1]
    return ("split", part.id, at[0], at[1])
