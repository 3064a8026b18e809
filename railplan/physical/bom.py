"""Bill of materials of a Design: switches, transceivers per cage, cables per physical item,
patch panels; with totals per tier that read directly against published component tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np

from railplan.array_groups import sort_groups, string_codes
from railplan.catalog import Cable, Catalog, Price
from railplan.design import LINK_KINDS, Design
from railplan.design.cable_rows import cable_rows
from railplan.design.ends import link_ends
from railplan.design.link_table import LinkTable, link_table
from railplan.errors import InfeasibleError
from railplan.physical.bom_items import Items, Modules, by_link_order, items, link_rows, modules
from railplan.validate.cables import check_cables

KINDS = (
    "switch",
    "nic",
    "transceiver",
    #: a co-packaged switch port's optical engine (catalog form factor "cpo"): counted as a port
    #: used, priced and powered inside its switch, not a module to buy
    "optical-engine",
    "cable",
    "splitter",
    "fibre",
    "harness",
    "trunk",
    "panel",
    "cassette",
)
#: link kinds as ``totals.per_tier`` keys (``node_leaf``, ``leaf_spine``, ...)
TIERS = tuple(k.replace("-", "_") for k in LINK_KINDS)
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
    #: how the count splits by tier: a switch line by role (leaf, spine, core), a module or
    #: cable line by the link kind each item serves first (node_leaf, leaf_spine, ...)
    per_tier: dict[str, int] = field(default_factory=dict)


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
    #: physical cables of every kind (copper, AOC, fibre cords, splitters, harnesses, trunks):
    #: a twin-port DAC or a 1:2 splitter carrying two links counts once
    cables: int
    fibres: int
    splitters: int
    #: rack units of the switches and the patch panels
    rack_units: int
    nics: int = 0
    #: links with a cable (a link is one logical port-to-port connection)
    links: int = 0
    #: the same figure as ``cables``, named for reading beside ``links``
    physical_cables: int = 0
    #: modules in node cages and in switch cages (flat-top and finned-top parts differ)
    transceivers_node: int = 0
    transceivers_switch: int = 0
    #: the fibre plant: breakout harnesses, trunks, patch panels (housings) and their units
    harnesses: int = 0
    trunks: int = 0
    panels: int = 0
    panel_units: int = 0
    #: links carried by the fibre plant
    plant_links: int = 0
    #: per link kind (node_leaf, leaf_spine, spine_core, leaf_leaf): links, physical cables
    #: and transceivers, each physical item counted under the kind of its first link
    per_tier: dict[str, dict[str, int]] = field(default_factory=dict)

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
    per_tier: dict[str, int] | None = None,
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
        per_tier=dict(sorted(per_tier.items())) if per_tier else {},
    )


def _cable_source(part: Cable) -> str:
    per_m: Price | None = part.price_per_m_usd
    if per_m is None:
        return part.price_usd.cite()
    return f"{part.price_usd.cite()}; per metre {per_m.value:g} USD, {per_m.cite()}"


def bom(design: Design, catalog: Catalog, *, include_nics: bool = False) -> Bom:
    """The bill of materials of ``design``, priced from ``catalog``.

    Switches come from Design.switches. Transceivers and cables come from Design.cables and the
    fibre plant's Design.segments: a module is counted once per cage (a twin-port module
    serving two links is one part), a cable once per physical item (a splitter or twin-port
    cable once for all its links) at its stocked length, panels with their adapter plates.
    NICs are priced only with ``include_nics`` (they usually come with the nodes). Raises
    InfeasibleError when the cables break a rule (two optics in one cage, a cord beyond reach).
    """
    notes: list[str] = []
    lines: list[BomLine] = []
    roles: dict[str, Counter[str]] = {}
    for sw in design.switches:
        roles.setdefault(sw.model, Counter())[sw.role] += 1
    for model_id, n in sorted(Counter(sw.model for sw in design.switches).items()):
        m = catalog.switch(model_id)
        lines.append(
            _line(
                m.id,
                "switch",
                m.name,
                n,
                m.price_usd.value,
                m.power_typical_w.value,
                (m.price_usd.cite(), m.power_typical_w.source),
                part_number=m.part_number,
                per_tier=dict(roles[model_id]),
            )
        )
    nics = _nic_line(design, catalog, include_nics, lines, notes)
    cabled = _Cabled()
    if not design.cables:
        notes.append(NO_CABLES)
    else:
        cabled = _cabling(design, catalog, notes)
        lines += cabled.lines
    lines.sort(key=lambda ln: (KINDS.index(ln.kind), ln.part, ln.length_m or 0.0))
    power_max = cabled.other_power
    units = sum(p.height_u for p in design.panels)
    for sw in design.switches:
        m = catalog.switch(sw.model)
        units += m.rack_units
        optics = cabled.optics_in_switch.get(sw.id, 0.0)
        power_max += max(m.power_max_w.value, m.power_typical_w.value + optics)
    if include_nics and nics:
        power_max += catalog.nic(design.shape.nic_model).power_w.value * nics
    totals = _totals(design, lines, cabled, round(power_max, 1), units, nics)
    return Bom(lines=tuple(lines), totals=totals, notes=tuple(notes))


def _nic_line(
    design: Design, catalog: Catalog, include: bool, lines: list[BomLine], notes: list[str]
) -> int:
    if not include:
        notes.append("NICs are left out: they come with the nodes (include_nics prices them)")
        return 0
    if design.shape.nic_model not in catalog.nics:
        return 0
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
            (nic.price_usd.cite(), nic.power_w.source),
        )
    )
    return nics


@dataclass
class _Cabled:
    """What the cabling adds to the bill: lines, power, and the counts the totals report."""

    lines: list[BomLine] = field(default_factory=list)
    optics_in_switch: dict[str, float] = field(default_factory=dict)
    other_power: float = 0.0
    #: none when the design has no cables
    modules: Modules | None = None
    items: Items | None = None
    #: the design's links as arrays, the rows of the links its cables serve, and each row's
    #: ``LINK_KINDS`` index (``_LinkTiers.kind``)
    table: LinkTable | None = None
    rows: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    kind: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


def _totals(
    design: Design, lines: list[BomLine], cabled: _Cabled, power_max: float, units: int, nics: int
) -> BomTotals:
    def count(*kinds: str) -> int:
        return sum(ln.count for ln in lines if ln.kind in kinds)

    per_tier = {t: {"links": 0, "physical_cables": 0, "transceivers": 0} for t in TIERS}
    cabled_links = 0
    if cabled.table is not None and cabled.items is not None and cabled.modules is not None:
        # each count is kept under the kind of a link: the link, an item's or a module's first
        # (a kind no fabric has is counted under none)
        table, kind = cabled.table, cabled.kind
        cabled_rows = np.zeros(len(table), bool)
        cabled_rows[cabled.rows] = True
        cabled_links = int(cabled_rows.sum())
        item_rows = cabled.items.row
        for what, rows in (
            ("links", np.flatnonzero(cabled_rows)),
            ("physical_cables", item_rows[item_rows >= 0]),
            ("transceivers", cabled.modules.row[~_engines(cabled.modules)]),
        ):
            counts = np.bincount(kind[rows][kind[rows] >= 0], minlength=len(LINK_KINDS))
            for tier, n in zip(TIERS, counts.tolist(), strict=True):
                per_tier[tier][what] += n
    cables = count("cable", "fibre", "splitter", "harness", "trunk")
    on_switch = cabled.modules.on_switch if cabled.modules else np.zeros(0, bool)
    if cabled.modules:  # a co-packaged engine is no module bought at either end
        on_switch = on_switch[~_engines(cabled.modules)]
    return BomTotals(
        cost_usd=_money(sum(ln.total_usd for ln in lines)),
        power_w=round(sum(ln.total_power_w for ln in lines), 1),
        power_max_w=power_max,
        switches=len(design.switches),
        transceivers=count("transceiver"),
        cables=cables,
        fibres=count("fibre"),
        splitters=count("splitter"),
        rack_units=units,
        nics=nics,
        links=cabled_links,
        physical_cables=cables,
        transceivers_node=on_switch.size - int(on_switch.sum()),
        transceivers_switch=int(on_switch.sum()),
        harnesses=count("harness"),
        trunks=count("trunk"),
        panels=count("panel"),
        panel_units=sum(p.height_u for p in design.panels),
        plant_links=len({s.link_id for s in design.segments}),
        per_tier={t: v for t, v in per_tier.items() if any(v.values())},
    )


_KIND = attrgetter("kind")


def _cabling(design: Design, catalog: Catalog, notes: list[str]) -> _Cabled:
    """Transceiver, cable and panel lines, optics power per switch, and power outside switches;
    counted over the arrays of ``modules`` and ``items``."""
    problems = check_cables(design, catalog)
    if problems:
        more = f" ({len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InfeasibleError(f"{problems[0]}{more}")
    # the cables in link id order (what ``modules`` and ``items`` walk), and their links as
    # rows of the table (the check worked them out for the cables in design order)
    order = by_link_order(design)
    ordered = list(map(design.cables.__getitem__, order))
    table = link_table(design, catalog)
    rows = cable_rows(design, catalog)[order] if order else np.zeros(0, np.int64)
    if len(rows) and rows.min() < 0:
        link_rows(table, ordered)  # a cable of an unknown link: the KeyError naming it
    cabled = np.zeros(len(table), bool)
    cabled[rows] = True
    missing = len(design.links) - int(cabled.sum())
    if missing:
        notes.append(f"{missing} of {len(design.links)} links have no cable and are not priced")
    mods = modules(design, catalog, table, ordered, rows)
    things = items(design, catalog, link_ends(design, catalog), ordered, table, rows)
    tiers = _LinkTiers.of(design)
    out = _Cabled(modules=mods, items=things, table=table, rows=rows, kind=tiers.kind)
    watts = np.array([t.power_w.value for t in mods.parts], float)[mods.part]
    on = mods.on_switch
    per_device = np.bincount(mods.device[on], weights=watts[on], minlength=len(mods.devices))
    held = np.bincount(mods.device[on], minlength=len(mods.devices))
    out.optics_in_switch = {
        mods.devices[d]: float(per_device[d]) for d in np.flatnonzero(held).tolist()
    }
    mod_tiers = _tier_counts(mods.part, tiers.code[mods.row], tiers.names)
    for code, n in enumerate(np.bincount(mods.part, minlength=len(mods.parts)).tolist()):
        if not n:
            continue
        t = mods.parts[code]
        desc = t.name + (f" (the {t.mode_of} part)" if t.mode_of else "")
        out.lines.append(
            _line(
                t.id,
                "optical-engine" if t.form_factor == "cpo" else "transceiver",
                desc,
                n,
                t.price_usd.value,
                t.power_w.value,
                (t.price_usd.cite(), t.power_w.source),
                part_number=t.part_number,
                per_tier=_named(mod_tiers[code]),
            )
        )
    by_cable: Counter[tuple[str, float, str]] = Counter()
    # the items alike in part, length and kind are counted together; their stock is looked up
    # once, and an item beyond its part's longest stock is noted one by one, in item order
    kinds = sorted(set(things.kind))
    kind = string_codes(things.kind)
    alike, starts = sort_groups(things.part, things.length_m, kind)
    sizes = np.diff(np.r_[starts, len(alike)])
    beyond = np.zeros(len(things), bool)
    lines_of: dict[tuple[str, float, str], int] = {}  # a line's number, by first run
    run_line = []
    for start, n in zip(starts.tolist(), sizes.tolist(), strict=True):
        at = int(alike[start])
        part = things.parts[things.part[at]]
        stock = part.stocked(float(things.length_m[at]))
        if stock is None:
            stock = part.lengths_m[-1]
            beyond[alike[start : start + n]] = True
        group = (part.id, stock, kinds[kind[at]])
        by_cable[group] += n
        run_line.append(lines_of.setdefault(group, len(lines_of)))
    # each line's tiers counted over its items in the runs' order
    item_tiers = _tier_counts(
        np.repeat(np.array(run_line, np.int64), sizes), tiers.code[things.row[alike]], tiers.names
    )
    cable_tiers = {group: item_tiers[line] for group, line in lines_of.items()}
    for i in np.flatnonzero(beyond).tolist():
        part = things.parts[things.part[i]]
        notes.append(
            f"{part.id}: {float(things.length_m[i]):g} m exceeds its longest stocked length; "
            f"counted at {part.lengths_m[-1]:g} m"
        )
    item_watts = np.array([p.power_w.value for p in things.parts], float)[things.part]
    # in the order the loop over modules, then items, added them (floating-point sums are
    # exact only in one order): node-side modules, then every item
    out.other_power = _sum_in_order(np.concatenate((watts[~on], item_watts)))
    for (pid, stock, kind_name), n in sorted(by_cable.items()):
        part = catalog.cables[pid]
        out.lines.append(
            _line(
                pid,
                kind_name,
                f"{part.name}, {stock:g} m",
                n,
                part.price_at(stock),
                part.power_w.value,
                (_cable_source(part), part.power_w.source),
                length_m=stock,
                part_number=part.part_number_at(stock),
                per_tier=_named(cable_tiers[(pid, stock, kind_name)]),
            )
        )
    out.lines += _panel_lines(design, catalog)
    return out


@dataclass(frozen=True)
class _LinkTiers:
    """The kind of every link as numbers: ``kind``, its ``LINK_KINDS`` index per table row (-1:
    a kind no fabric has); ``code``, its tier's index in ``names`` per row, and one more entry,
    last, for an item whose link is not in the design (row -1: tier "")."""

    kind: np.ndarray
    code: np.ndarray
    names: tuple[str, ...]

    @classmethod
    def of(cls, design: Design) -> _LinkTiers:
        kinds = list(map(_KIND, design.links))
        present = sorted(set(kinds))
        of_kind = string_codes(kinds)  # rows in design.links order: the link table's
        names = tuple(sorted({k.replace("-", "_") for k in present} | {""}))
        tier = [names.index(k.replace("-", "_")) for k in present] + [names.index("")]
        known = {k: i for i, k in enumerate(LINK_KINDS)}
        kind = np.array([known.get(k, -1) for k in present], np.int64)
        return cls(kind[of_kind], np.append(np.array(tier, np.int64)[of_kind], tier[-1]), names)


def _tier_counts(
    group: np.ndarray, code: np.ndarray, names: tuple[str, ...]
) -> dict[int, dict[str, int]]:
    """Per group number, how many rows fall in each tier (``code``: each row's index in
    ``names``), the tiers in the order the rows first name them (what counting row by row into
    a ``Counter`` per group gives)."""
    if not len(group):
        return {}
    key = group.astype(np.int64) * len(names) + code
    uniq, first, counts = np.unique(key, return_index=True, return_counts=True)
    seen = np.argsort(first, kind="stable")
    out: dict[int, dict[str, int]] = {}
    for k, n in zip(uniq[seen].tolist(), counts[seen].tolist(), strict=True):
        out.setdefault(k // len(names), {})[names[k % len(names)]] = n
    return out


def _named(tiers: Mapping[str, int]) -> dict[str, int]:
    """Tier counts without the unnamed tier of an item whose link is not in the design."""
    return {k: v for k, v in tiers.items() if k}


def _sum_in_order(values: np.ndarray) -> float:
    """The sum of ``values`` added one by one from 0.0 (numpy's own sum pairs them, which
    rounds differently)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def _panel_lines(design: Design, catalog: Catalog) -> list[BomLine]:
    housings = Counter(p.part for p in design.panels)
    plates: Counter[str] = Counter()
    for p in design.panels:
        plates[p.cassette] += p.cassettes
    passive = "standard: passive, no power"
    lines = []
    for pid, n in sorted(housings.items()):
        panel = catalog.panels[pid]
        lines.append(
            _line(
                pid,
                "panel",
                f"{panel.name}, {panel.rack_units} U",
                n,
                panel.price_usd.value,
                0.0,
                (f"{panel.price_usd.cite()}; size {panel.source}", passive),
                part_number=panel.part_number,
            )
        )
    for cid, n in sorted(plates.items()):
        cas = catalog.cassettes[cid]
        lines.append(
            _line(
                cid,
                "cassette",
                cas.name,
                n,
                cas.price_usd.value,
                0.0,
                (f"{cas.price_usd.cite()}; ports {cas.source}", passive),
                part_number=cas.part_number,
            )
        )
    return lines


def _engines(mods: Modules) -> np.ndarray:
    """Which modules are co-packaged optical engines (inside their switch), module by module."""
    return np.array([t.form_factor == "cpo" for t in mods.parts], bool)[mods.part]
