"""Cable rules re-derived from Design.cables: parts exist, reach, fit their cages, may be used.

A part may be used on a link when it lists the link's protocol (the protocol its switches
run) and, if it names a vendor, every device it plugs into is that vendor's. Links through the
fibre plant are checked piece by piece (``validate.plant``).
"""

from __future__ import annotations

from railplan.catalog import LENGTH_EPS_M, Cable, Catalog, Transceiver, cage_accepts
from railplan.design import Cable as CableRow
from railplan.design import Design
from railplan.design.ends import CageEnd, link_ends, link_protocols
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


def _check_cables(design: Design, catalog: Catalog) -> list[str]:
    out: list[str] = []
    if not design.cables:
        return out
    ends = link_ends(design, catalog)
    protocols = link_protocols(design, catalog)
    links = {lk.id: lk for lk in design.links}
    plant_links = {s.link_id for s in design.segments}
    module_of: dict[tuple[str, int], tuple[str, str]] = {}
    verdicts: dict[tuple[object, ...], object] = {}
    for cab in design.cables:
        if cab.link_id not in links:
            out.append(f"cable {cab.id} belongs to unknown link {cab.link_id}")
            continue
        if not 0 < cab.length_m < 1e6:
            out.append(f"cable {cab.id} is {cab.length_m:g} m long; a cable has a positive length")
            continue
        part = catalog.cables.get(cab.media)
        if part is None:
            out.append(f"cable {cab.id} uses {cab.media!r}, which is not in the catalog")
            continue
        a, b = ends[cab.link_id]
        protocol = protocols[cab.link_id]
        names = (cab.transceiver_a, cab.transceiver_b)
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
    if design.segments or design.panels:
        out.extend(check_plant(design, catalog, ends, protocols))
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
            other = catalog.transceivers.get(held[0])
            kinds = f" ({other.fibre} and {t.fibre})" if other and other.fibre != t.fibre else ""
            out.append(
                f"{end.name()} holds {held[0]} for link {held[1]} and {t.id} for link "
                f"{cab.link_id}{kinds}; one module serves the whole cage, so its links "
                "need the same optic and fibre type"
            )
    return mods


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
