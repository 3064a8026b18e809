"""Cable rules re-derived from Design.cables: parts exist, reach their length, fit their cages."""

from __future__ import annotations

from railplan.catalog import LENGTH_EPS_M, Catalog, cage_accepts
from railplan.design import Design
from railplan.design.ends import link_ends


def check_cables(design: Design, catalog: Catalog) -> list[str]:
    """Every cable rule re-derived from Design.cables, as sentences (empty: sound)."""
    out: list[str] = []
    if not design.cables:
        return out
    ends = link_ends(design, catalog)
    links = {lk.id: lk for lk in design.links}
    module_of: dict[tuple[str, int], tuple[str, str]] = {}
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
        if part.stocked(cab.length_m) is None:
            out.append(
                f"cable {cab.id} ({cab.media}) is {cab.length_m:g} m, beyond its longest "
                f"stocked length {part.lengths_m[-1]:g} m"
            )
        a, b = ends[cab.link_id]
        names = (cab.transceiver_a, cab.transceiver_b)
        if part.kind != "fibre":
            if any(names):
                out.append(f"cable {cab.id} is a {part.kind} with built-in ends but lists optics")
            continue
        mods = []
        for end, name in zip((a, b), names, strict=True):
            t = catalog.transceivers.get(name)
            if t is None:
                out.append(f"cable {cab.id}: fibre needs a transceiver at {end.name()}")
                continue
            mods.append(t)
            if t.ports != end.ports_per_cage or not cage_accepts(end.form_factor, t.form_factor):
                out.append(
                    f"cable {cab.id}: {t.id} ({t.ports} port(s), {t.form_factor}) does not fit "
                    f"{end.name()} ({end.ports_per_cage} port(s), {end.form_factor})"
                )
            held = module_of.setdefault(end.key, (t.id, cab.link_id))
            if held[0] != t.id:
                other = catalog.transceivers.get(held[0])
                kinds = (
                    f" ({other.fibre} and {t.fibre})" if other and other.fibre != t.fibre else ""
                )
                out.append(
                    f"{end.name()} holds {held[0]} for link {held[1]} and {t.id} for link "
                    f"{cab.link_id}{kinds}; one module serves the whole cage, so its links "
                    "need the same optic and fibre type"
                )
            if t.fibre != part.fibre:
                out.append(f"cable {cab.id}: {part.fibre} cord on the {t.fibre} module {t.id}")
            elif cab.length_m > t.reach_m.value + LENGTH_EPS_M:
                out.append(
                    f"cable {cab.id}: {cab.length_m:g} m is beyond the {t.reach_m.value:g} m "
                    f"reach of {t.id}"
                )
        if len(mods) == 2 and mods[0].interface != mods[1].interface:
            out.append(
                f"cable {cab.id}: {mods[0].id} ({mods[0].interface}) and {mods[1].id} "
                f"({mods[1].interface}) do not talk to each other"
            )
    return out
