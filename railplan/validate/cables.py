"""Cable rules re-derived from Design.cables: parts exist, reach, fit their cages, may be used.

A part may be used on a link when it lists the link's protocol (the protocol its switches
run) and, if it names a vendor, every device it plugs into is that vendor's. Links through the
fibre plant are checked piece by piece (``validate.plant``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from railplan.catalog import LENGTH_EPS_M, Cable, Catalog, Transceiver, cage_accepts
from railplan.design import Cable as CableRow
from railplan.design import Design
from railplan.design.ends import CageEnd, every_end, link_ends, link_protocols
from railplan.validate.plant import check_plant

#: the last design checked, its catalog and the answer: a design is immutable, so the bill
#: (which checks the cables it prices) reuses the answer ``check`` derived for the same object
_LAST: list[tuple[Design, Catalog, tuple[str, ...]]] = []


def check_cables(design: Design, catalog: Catalog) -> list[str]:
    """Every cable rule re-derived from Design.cables, as sentences (empty: sound)."""
    if _LAST and _LAST[0][0] is design and _LAST[0][1] is catalog:
        return list(_LAST[0][2])
    out = _check_cables(design, catalog)
    _LAST[:] = [(design, catalog, tuple(out))]
    return out


#: cables from which ``_check_cables`` first asks ``cables_arrays.sound`` (below, the walk is
#: quick)
ARRAYS_FROM_CABLES = 20_000


def _check_cables(design: Design, catalog: Catalog) -> list[str]:
    if not design.cables:
        return []
    ends = link_ends(design, catalog)  # every link of the design, by id
    protocols = link_protocols(design, catalog)
    plant_links = {s.link_id for s in design.segments}
    out: list[str] = []
    if len(design.cables) < ARRAYS_FROM_CABLES or not _sound(
        design, catalog, ends, protocols, plant_links
    ):
        out = _walk(design, catalog, every_end(ends), protocols, plant_links)
    if design.segments or design.panels:
        out.extend(check_plant(design, catalog, ends, protocols))
    return out


def _sound(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    protocols: Mapping[str, str],
    plant_links: set[str],
) -> bool:
    """``cables_arrays.sound``, each kind's limit as the walk works it out."""
    from railplan.validate.cables_arrays import sound  # numpy loads here

    def limit(i: int) -> float:
        cab = design.cables[i]
        return _clean_up_to(
            catalog, cab, ends[cab.link_id], protocols[cab.link_id], cab.link_id in plant_links
        )

    return sound(design, catalog, protocols, plant_links, limit)


def _walk(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    protocols: Mapping[str, str],
    plant_links: set[str],
) -> list[str]:
    """Every cable rule, cable by cable, as sentences (the plant's pieces aside)."""
    out: list[str] = []
    module_of: dict[tuple[str, int], tuple[str, str]] = {}
    verdicts: dict[tuple[object, ...], object] = {}
    clean: dict[tuple[object, ...], float] = {}
    for cab in design.cables:
        pair = ends.get(cab.link_id)
        if pair is None:
            out.append(f"cable {cab.id} belongs to unknown link {cab.link_id}")
            continue
        if not 0 < cab.length_m < 1e6:
            out.append(f"cable {cab.id} is {cab.length_m:g} m long; a cable has a positive length")
            continue
        a, b = pair
        protocol = protocols[cab.link_id]
        names = (cab.transceiver_a, cab.transceiver_b)
        # cables alike in parts, cages, makers and protocol break no rule of their own up to
        # one length (``_clean_up_to``): below it only the cage-mates' modules are compared
        in_plant = cab.link_id in plant_links
        kind = (cab.media, *names, protocol, in_plant, a[CageEnd.SHAPE], b[CageEnd.SHAPE])
        limit = clean.get(kind)
        if limit is None:
            limit = clean[kind] = _clean_up_to(catalog, cab, (a, b), protocol, in_plant)
        if cab.length_m <= limit:
            for end, name in ((a, names[0]), (b, names[1])):
                if name:
                    held = module_of.setdefault(end.key, (name, cab.link_id))
                    if held[0] != name:
                        out.append(_two_modules(catalog, end, held, name, cab.link_id))
            continue
        part = catalog.cables.get(cab.media)
        if part is None:
            out.append(f"cable {cab.id} uses {cab.media!r}, which is not in the catalog")
            continue
        if cab.link_id not in plant_links:
            if part.stocked(cab.length_m) is None:
                out.append(
                    f"cable {cab.id} ({cab.media}) is {cab.length_m:g} m, beyond its longest "
                    f"stocked length {part.lengths_m[-1]:g} m"
                )
            why = _usable(verdicts, part, protocol, (a.vendor, b.vendor))
            if why:
                out.append(f"cable {cab.id}: {part.id} {why} ({protocol} link)")
            if not part.optical:
                if any(names):
                    out.append(
                        f"cable {cab.id} is a {part.kind} with built-in ends but lists optics"
                    )
                continue
        mods = _modules(cab, (a, b), catalog, protocol, module_of, out, verdicts)
        if len(mods) == 2 and mods[0].interface != mods[1].interface:
            out.append(
                f"cable {cab.id}: {mods[0].id} ({mods[0].interface}) and {mods[1].id} "
                f"({mods[1].interface}) do not talk to each other"
            )
        if cab.link_id in plant_links:
            continue
        for t in mods:
            if t.fibre != part.fibre:
                out.append(f"cable {cab.id}: {part.fibre} cord on the {t.fibre} module {t.id}")
            elif cab.length_m > t.reach_m.value + LENGTH_EPS_M:
                out.append(
                    f"cable {cab.id}: {cab.length_m:g} m is beyond the {t.reach_m.value:g} m "
                    f"reach of {t.id}"
                )
    return out


def _modules(
    cab: CableRow,
    ends: tuple[CageEnd, CageEnd],
    catalog: Catalog,
    protocol: str,
    module_of: dict[tuple[str, int], tuple[str, str]],
    out: list[str],
    verdicts: dict[tuple[object, ...], object],
) -> list[Transceiver]:
    """The link's two modules, checked against their cages and each other's cage-mates."""
    mods = []
    for end, name in zip(ends, (cab.transceiver_a, cab.transceiver_b), strict=True):
        t = catalog.transceivers.get(name)
        if t is None:
            out.append(f"cable {cab.id}: fibre needs a transceiver at {end.name()}")
            continue
        mods.append(t)
        fit = ("fit", t.id, end.ports_per_cage, end.form_factor)
        if fit not in verdicts:
            verdicts[fit] = t.ports == end.ports_per_cage and cage_accepts(
                end.form_factor, t.form_factor
            )
        if not verdicts[fit]:
            out.append(
                f"cable {cab.id}: {t.id} ({t.ports} port(s), {t.form_factor}) does not fit "
                f"{end.name()} ({end.ports_per_cage} port(s), {end.form_factor})"
            )
        why = _usable(verdicts, t, protocol, (end.vendor,))
        if why:
            out.append(f"cable {cab.id}: {t.id} in {end.name()} {why} ({protocol} link)")
        held = module_of.setdefault(end.key, (t.id, cab.link_id))
        if held[0] != t.id:
            out.append(_two_modules(catalog, end, held, t.id, cab.link_id))
    return mods


def _two_modules(
    catalog: Catalog, end: CageEnd, held: tuple[str, str], module: str, link: str
) -> str:
    """The sentence for a cage given two different modules."""
    other = catalog.transceivers.get(held[0])
    t = catalog.transceivers[module]
    kinds = f" ({other.fibre} and {t.fibre})" if other and other.fibre != t.fibre else ""
    return (
        f"{end.name()} holds {held[0]} for link {held[1]} and {module} for link "
        f"{link}{kinds}; one module serves the whole cage, so its links "
        "need the same optic and fibre type"
    )


def _clean_up_to(
    catalog: Catalog, cab: CableRow, ends: tuple[CageEnd, CageEnd], protocol: str, plant: bool
) -> float:
    """A length up to which a cable of these parts between these cages breaks none of the
    rules ``_check_cables`` derives for one cable (-inf: it breaks one at any length).

    Of those rules only two read the length: the cable must have a stocked length that covers
    it (a stock at least the length less LENGTH_EPS_M) and stay within each module's reach
    (plus LENGTH_EPS_M). The limit is the longest stock and the shortest reach themselves,
    without the tolerance, so a cable under it passes both whatever the rounding; a cable
    above it is checked rule by rule. A link through the fibre plant is checked piece by
    piece (``check_plant``), so only its parts count here.
    """
    probe: list[str] = []
    verdicts: dict[tuple[object, ...], object] = {}
    part = catalog.cables.get(cab.media)
    if part is None:
        return -math.inf
    limit = math.inf
    if not plant:
        if _usable(verdicts, part, protocol, (ends[0].vendor, ends[1].vendor)):
            return -math.inf
        limit = max(part.lengths_m, default=-math.inf)
        if not part.optical:
            return -math.inf if any((cab.transceiver_a, cab.transceiver_b)) else limit
    mods = _modules(cab, ends, catalog, protocol, {}, probe, verdicts)
    if probe:
        return -math.inf
    if len(mods) == 2 and mods[0].interface != mods[1].interface:
        return -math.inf
    if plant:
        return math.inf
    for t in mods:
        if t.fibre != part.fibre:
            return -math.inf
        limit = min(limit, t.reach_m.value)
    return limit


def _usable(
    verdicts: dict[tuple[object, ...], object],
    part: Cable | Transceiver,
    protocol: str,
    vendors: tuple[str, ...],
) -> str:
    """``part.usable(protocol, vendors)``, worked out once per part, protocol and makers."""
    key = ("usable", part.id, protocol, vendors)
    if key not in verdicts:
        verdicts[key] = part.usable(protocol, list(vendors))
    return str(verdicts[key])
