"""Fibre-plant rules re-derived from Design.segments and Design.panels.

Every plant link is a chain of pieces from its a-end port to its b-end port through panel
ports; each piece is one leg of a physical item whose part exists, is stocked at its length
and fits what it plugs into; a panel port's front and rear each take one leg; the channel
(the pieces together) stays within the reach of the modules and of any splitter in it.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from itertools import compress
from operator import attrgetter

from railplan.catalog import LENGTH_EPS_M, Cable, Catalog, Transceiver
from railplan.design import Cable as CableRow
from railplan.design import Design, Link, PlantSegment
from railplan.design.ends import CageEnd
from railplan.design.port_names import PortNames

MAX_PLANT_PROBLEMS = 20
_LINK_ID, _ID = attrgetter("link_id"), attrgetter("id")


def check_plant(
    design: Design,
    catalog: Catalog,
    ends: Mapping[str, tuple[CageEnd, CageEnd]],
    protocols: Mapping[str, str],
) -> list[str]:
    """Every plant rule as a sentence (empty: sound)."""
    out = _panels(design, catalog)
    pieces: dict[str, list[PlantSegment]] = defaultdict(list)
    for s in design.segments:
        pieces[s.link_id].append(s)
    cables, links = _plant_cables_and_links(design, catalog, pieces)
    name = PortNames(design, design.switch_by_id())
    ports_used: dict[tuple[str, str], str] = {}
    items: dict[str, tuple[str, float]] = {}
    checked: dict[tuple[object, ...], list[str]] = {}  # parts' problems by what decides them
    for link_id in sorted(pieces):
        if len(out) >= MAX_PLANT_PROBLEMS:
            break
        lk = links.get(link_id)
        cab = cables.get(link_id)
        if lk is None or cab is None:
            out.append(f"fibre-plant pieces name link {link_id}, which has no cable")
            continue
        chain = sorted(pieces[link_id], key=lambda s: s.seq)

        want = (
            (lk.a_device, name(lk.a_device, lk.a_port)),
            (lk.b_device, name(lk.b_device, lk.b_port)),
        )
        mods = [catalog.transceivers.get(n) for n in (cab.transceiver_a, cab.transceiver_b)]
        out.extend(_chain(link_id, chain, want, cab.length_m, mods))
        a, b = ends[link_id]
        protocol, vendors = protocols[link_id], (a.vendor, b.vendor)
        out.extend(_parts(link_id, chain, catalog, protocol, vendors, mods, checked))
        for s in chain:
            for device, port in ((s.a_device, s.a_port), (s.b_device, s.b_port)):
                if "/" in port:
                    held = ports_used.setdefault((device, port), link_id)
                    if held != link_id:
                        out.append(f"{device} port {port} carries links {held} and {link_id}")
            seen = items.setdefault(s.physical, (s.part, s.length_m))
            if seen != (s.part, s.length_m):
                out.append(
                    f"physical cable {s.physical} is {seen} and ({s.part}, {s.length_m:g} m)"
                )
    return out[:MAX_PLANT_PROBLEMS]


def _plant_cables_and_links(
    design: Design, catalog: Catalog, pieces: Mapping[str, object]
) -> tuple[dict[str, CableRow], dict[str, Link]]:
    """The cables and links of the plant's links, by link id (the last of one id, as a dict
    built over the whole lists keeps it): picked by link-table row (``cable_rows``) when the
    design has a table, else filtered by id in C (a plant is a few per cent of the links)."""
    import numpy as np

    from railplan.design.cable_rows import table_and_rows  # numpy loads here

    found = table_and_rows(design, catalog)
    if found is None:
        wanted = pieces.__contains__
        by_link = compress(design.cables, map(wanted, map(_LINK_ID, design.cables)))
        kept = compress(design.links, map(wanted, map(_ID, design.links)))
        return {c.link_id: c for c in by_link}, {lk.id: lk for lk in kept}
    table, rows = found
    known = sorted(r for r in map(table.row.get, pieces) if r is not None)
    in_plant = np.zeros(len(table) + 1, bool)  # the last: a cable of an unknown link (-1)
    in_plant[np.array(known, np.int64)] = True
    cables = design.cables
    pick = in_plant[rows]
    unknown = np.flatnonzero(rows < 0).tolist()  # a cable of a link not in the design
    pick[unknown] = [cables[i].link_id in pieces for i in unknown]
    picked = {cables[i].link_id: cables[i] for i in np.flatnonzero(pick).tolist()}
    return picked, {design.links[r].id: design.links[r] for r in known}


def _panels(design: Design, catalog: Catalog) -> list[str]:
    out = []
    placed = {p.device for p in design.placements}
    for p in design.panels:
        panel = catalog.panels.get(p.part)
        cassette = catalog.cassettes.get(p.cassette)
        if panel is None or cassette is None:
            out.append(f"patch panel {p.id} uses {p.part}/{p.cassette}, not in the catalog")
            continue
        if panel.id not in cassette.fits:
            out.append(f"patch panel {p.id}: {cassette.id} does not fit a {panel.id}")
        if p.ports != panel.slots * cassette.ports or not 0 < p.used <= p.ports:
            out.append(f"patch panel {p.id}: {p.used} of {p.ports} ports used does not fit")
        if p.cassettes != math.ceil(p.used / cassette.ports) or p.height_u != panel.rack_units:
            out.append(f"patch panel {p.id}: {p.cassettes} plates and {p.height_u} U are wrong")
        if p.id not in placed:
            out.append(f"patch panel {p.id} has no place in rack {p.rack}")
    return out


def _chain(
    link_id: str,
    chain: Sequence[PlantSegment],
    want: tuple[tuple[str, str], tuple[str, str]],
    length_m: float,
    mods: Sequence[Transceiver | None],
) -> list[str]:
    out = []
    if [s.seq for s in chain] != list(range(1, len(chain) + 1)) or len(chain) < 2:
        return [f"link {link_id}: fibre-plant pieces are not numbered 1..n from its a end"]
    if (chain[0].a_device, chain[0].a_port) != want[0]:
        out.append(f"link {link_id}: its first piece does not start at {want[0][0]} {want[0][1]}")
    if (chain[-1].b_device, chain[-1].b_port) != want[1]:
        out.append(f"link {link_id}: its last piece does not end at {want[1][0]} {want[1][1]}")
    for s, t in itertools.pairwise(chain):
        if s.b_device != t.a_device or s.b_port.split("/")[0] != t.a_port.split("/")[0]:
            out.append(f"link {link_id}: pieces {s.seq} and {t.seq} do not meet at one panel port")
        if s.b_port == t.a_port:
            out.append(f"link {link_id}: pieces {s.seq} and {t.seq} both use {s.b_port}")
    channel = sum(s.length_m for s in chain)
    if not math.isclose(channel, length_m, abs_tol=1e-3):
        out.append(
            f"link {link_id}: its pieces add to {channel:g} m, its cable says {length_m:g} m"
        )
    reaches = [t.reach_m.value for t in mods if t is not None]
    if reaches and channel > min(reaches) + LENGTH_EPS_M:
        out.append(
            f"link {link_id}: its {channel:g} m channel is beyond its modules' {min(reaches):g} m"
        )
    return out


def _parts(
    link_id: str,
    chain: Sequence[PlantSegment],
    catalog: Catalog,
    protocol: str,
    vendors: tuple[str, str],
    mods: Sequence[Transceiver | None],
    memo: dict[tuple[object, ...], list[str]],
) -> list[str]:
    """What is wrong with the parts of a link's chain, in sentences naming the link. The
    answer depends only on the pieces' numbers, parts and lengths, the protocol, the makers
    and the modules: links alike in those (most of a plant) are checked once (``memo``)."""
    key = (
        tuple((s.seq, s.part, s.length_m) for s in chain),
        protocol,
        vendors,
        tuple(t.id if t is not None else None for t in mods),
    )
    found = memo.get(key)
    if found is None:
        found = memo[key] = _part_problems(chain, catalog, protocol, vendors, mods)
    return [f"link {link_id}: {problem}" for problem in found]


def _part_problems(
    chain: Sequence[PlantSegment],
    catalog: Catalog,
    protocol: str,
    vendors: tuple[str, str],
    mods: Sequence[Transceiver | None],
) -> list[str]:
    out = []
    parts: list[Cable] = []
    for s in chain:
        part = catalog.cables.get(s.part)
        if part is None or not part.optical:
            out.append(f"piece {s.seq} uses {s.part!r}, not a catalog fibre part")
            return out
        parts.append(part)
        if part.stocked(s.length_m) != s.length_m:
            out.append(f"{part.id} is not stocked at {s.length_m:g} m")
        why = part.usable(protocol, list(vendors))
        if why:
            out.append(f"{part.id} {why}")
    channel = sum(s.length_m for s in chain)
    for part in parts:
        if part.breakout > 1 and channel > part.reach_m.value + LENGTH_EPS_M:
            out.append(
                f"{channel:g} m channel is beyond the {part.reach_m.value:g} m "
                f"a splitter channel ({part.id}) allows"
            )
    for end, t, fan in (("a", mods[0], parts[0]), ("b", mods[1], parts[-1])):
        if t is None:
            continue
        per = t.ports_per_connector
        if fan.end_a != t.connector or fan.fibre != t.fibre or fan.breakout != per:
            out.append(
                f"{fan.id} at its {end} end does not fan out a {t.connector} "
                f"connector of {per} port(s) on {t.id}"
            )
    for part in parts[1:-1]:
        if part.breakout != 1 or part.fibre != parts[0].fibre:
            out.append(f"{part.id} cannot carry a leg between panels")
    return out
