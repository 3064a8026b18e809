"""Media per cable: the cheapest catalog cable and optics whose reach covers the routed length.

Three calls, from cheap to exact:

- ``select(catalog, speed_gbps=, a_form_factor=, b_form_factor=, length_m=, ...)`` prices one
  link in the usual context of its cages (a twin-port cage full, its links to other cages);
- ``cost_table`` / ``cost_steps`` give that price as a function of length (placement);
- ``assign_design(design, catalog, lengths)`` (or ``assign_cages(catalog, runs)``) decides the
  media of every link at once, cage by cage. Links tied together by multi-port cages (a
  twin-port OSFP carries two links) form one *component* and get one decision: the same
  optical interface, so the same fibre type, on every link of a twin-port module (mixed types
  are refused), one module per cage, and every cable of the component at its longest routed
  length, rounded up to a stocked length (NVIDIA: both fibres of a twin-port module should be
  about the same length). Use ``MediaChoice.stocked_length_m`` as the cable's length.

Options a component can take (every catalog part that fits is priced; the cheapest wins, ties
go to DAC, ACC, AEC, AOC, fibre in that order, then by id):

- a straight built-in cable (DAC/ACC/AEC/AOC) when its links all run between the same two
  cages, slot for slot (one link between single-port cages, or two parallel links between two
  twin-port cages); straight copper is lane-transparent: an 800G twin-port DAC carries
  2 x 400G, 1 x 800G or 4 x 200G;
- a 1:N splitter cable when one N-port cage fans out to N single-port cages;
- optics: a module per cage (ports = the cage's ports, same interface at both ends of a link),
  a straight fibre cord per connector pair, or a 1:N splitter fibre where one connector carries
  N ports and each far module one.

Costs and power are per link: a module serving two links counts half on each, a splitter
cable serving two links half on each.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.ends import CageEnd, link_ends
from railplan.errors import InfeasibleError
from railplan.physical.media_plans import (
    Component,
    MediaChoice,
    Plan,
    catalog_index,
    cheapest,
    longest_reach,
    per_link_choices,
    plans_for,
)

#: cost a placement objective sees for a link nothing in the catalog reaches at that length
UNREACHABLE_USD = 10_000_000.0
FIX_HINT = "add one to catalogs/optics.yaml"

__all__ = ["CageEnd", "MediaChoice", "link_ends"]


@dataclass(frozen=True, slots=True)
class LinkRun:
    """A link to give media to: speed, routed length and its two cage ends."""

    link_id: str
    speed_gbps: int
    length_m: float
    a: CageEnd
    b: CageEnd
    #: "" for any media, "mmf" or "smf" to insist on optics of that fibre
    fibre: str = ""


@dataclass(frozen=True, slots=True)
class Assignment:
    """Media for every link (by link id) and sentences about what the rules changed."""

    choices: dict[str, MediaChoice]
    notes: tuple[str, ...] = ()

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.choices.values())

    @property
    def power_w(self) -> float:
        return sum(c.power_w for c in self.choices.values())


# -- one link in its usual context ------------------------------------------------------------


def _typical(
    speed: int, a_ff: str, a_ppc: int, b_ff: str, b_ppc: int, breakout: int, parallel: bool
) -> Component:
    """The component a link usually sits in, given its cages (run 0 is the link asked about)."""
    if a_ppc < 1 or b_ppc < 1:
        raise InfeasibleError("ports per cage must be at least 1")
    big, small = max(a_ppc, b_ppc), min(a_ppc, b_ppc)
    fits = {1, big // small} if big % small == 0 else {1}
    if breakout not in fits:
        raise InfeasibleError(
            f"breakout {breakout} does not fit cages of {a_ppc} and {b_ppc} ports; use "
            + " or ".join(str(f) for f in sorted(fits))
        )
    if breakout > 1:  # the cage's links fan out to separate cages
        parallel = False
    if a_ppc == 1 and b_ppc == 1:
        return Component(speed, ((a_ff, 1), (b_ff, 1)), ((0, 0, 1, 0),))
    if a_ppc == b_ppc and parallel:
        runs = tuple((0, s, 1, s) for s in range(a_ppc))
        return Component(speed, ((a_ff, a_ppc), (b_ff, b_ppc)), runs)
    if b_ppc == 1:  # a end fans out to single-port cages
        cages = ((a_ff, a_ppc), *tuple((b_ff, 1) for _ in range(a_ppc)))
        return Component(speed, cages, tuple((0, s, 1 + s, 0) for s in range(a_ppc)))
    if a_ppc == 1:
        cages = ((b_ff, b_ppc), *tuple((a_ff, 1) for _ in range(b_ppc)))
        runs = tuple((1 + s, 0, 0, s) for s in range(b_ppc))
        return Component(speed, cages, runs)
    # grid: b_ppc a-cages each with a_ppc links, one to each of a_ppc b-cages
    cages = tuple((a_ff, a_ppc) for _ in range(b_ppc)) + tuple((b_ff, b_ppc) for _ in range(a_ppc))
    runs = tuple((i, j, b_ppc + j, i) for i in range(b_ppc) for j in range(a_ppc))
    return Component(speed, cages, runs)


def _describe(speed: int, a_ff: str, a_ppc: int, b_ff: str, b_ppc: int) -> str:
    extra = [
        f"{p} ports per cage at the {end} end" for end, p in (("a", a_ppc), ("b", b_ppc)) if p > 1
    ]
    return f"{speed}G {a_ff}-{b_ff}" + (f" ({', '.join(extra)})" if extra else "")


def select(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    length_m: float,
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
) -> MediaChoice:
    """The cheapest media for one link of ``length_m`` (routed), per link.

    Cages with several ports are assumed full: a twin-port cage facing single-port cages fans
    out (splitter cable or a twin-port module with a fibre per link); two multi-port cages face
    each other with a module each and a fibre per link, unless ``parallel`` says every link on
    them runs between the same two cages (then one twin-port cable may carry them). ``breakout``
    is inferred from the cages; 1 or their port ratio are accepted. Raises InfeasibleError
    naming the length when nothing reaches it.
    """
    _check_length(length_m)
    comp, plans, what = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    best = cheapest(plans, length_m)
    if best is None:
        raise InfeasibleError(_unreachable(plans, length_m, what))
    return per_link_choices(comp, best)[0]


def _class_plans(
    catalog: Catalog,
    speed_gbps: int,
    a_form_factor: str,
    a_ports_per_cage: int,
    b_form_factor: str,
    b_ports_per_cage: int,
    breakout: int,
    parallel: bool,
) -> tuple[Component, tuple[Plan, ...], str]:
    """One link class: its typical component, every way to cable it, and how to name it."""
    comp = _typical(
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    what = _describe(speed_gbps, a_form_factor, a_ports_per_cage, b_form_factor, b_ports_per_cage)
    return comp, plans_for(catalog_index(catalog), comp), what


def _check_length(length_m: float) -> None:
    if not math.isfinite(length_m) or length_m < 0:
        raise InfeasibleError(f"cable length {length_m} m is not a length; give metres >= 0")


def _unreachable(plans: Sequence[Plan], length_m: float, what: str) -> str:
    if not plans:
        return f"no catalog part connects {what} at any length; {FIX_HINT}"
    return (
        f"no catalog part reaches {length_m:.1f} m at {what} (the longest is "
        f"{longest_reach(plans):g} m); add a longer-reach optic to catalogs/optics.yaml"
    )


def cost_table(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    lengths_m: Iterable[float],
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
) -> list[float]:
    """Per-link cost at each length (``math.inf`` where nothing reaches), as ``select`` prices it."""
    comp, plans, what = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    if not plans:
        raise InfeasibleError(_unreachable(plans, 0.0, what))
    out = []
    for length in lengths_m:
        best = cheapest(plans, length)
        out.append(per_link_choices(comp, best)[0].cost_usd if best else math.inf)
    return out


def cost_steps(
    catalog: Catalog,
    *,
    speed_gbps: int,
    a_form_factor: str,
    b_form_factor: str,
    a_ports_per_cage: int = 1,
    b_ports_per_cage: int = 1,
    breakout: int = 1,
    parallel: bool = False,
) -> list[tuple[float, float]]:
    """Per-link cost as a step function: ``[(up_to_length_m, cost_usd), ...]``, increasing.

    A link of length L costs the first step whose length is >= L; past the last step nothing
    in the catalog reaches.
    """
    comp, plans, _ = _class_plans(
        catalog,
        speed_gbps,
        a_form_factor,
        a_ports_per_cage,
        b_form_factor,
        b_ports_per_cage,
        breakout,
        parallel,
    )
    marks = sorted(
        {s for p in plans for inst in p.instances for part in inst.parts for s in part.lengths_m}
        | {p.reach_m for p in plans if math.isfinite(p.reach_m)}
    )
    steps: list[tuple[float, float]] = []
    for mark in marks:
        best = cheapest(plans, mark)
        if best is None:
            continue
        cost = per_link_choices(comp, best)[0].cost_usd
        if steps and math.isclose(steps[-1][1], cost):
            steps[-1] = (mark, cost)
        else:
            steps.append((mark, cost))
    return steps


# -- every link of a design, cage by cage -----------------------------------------------------


def components(runs: Sequence[LinkRun]) -> list[list[int]]:
    """Runs tied together by sharing a multi-port cage, in order of their first run."""
    parent = list(range(len(runs)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first: dict[tuple[str, int], int] = {}
    for i, run in enumerate(runs):
        for end in (run.a, run.b):
            if end.ports_per_cage > 1:
                j = first.setdefault(end.key, i)
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(runs)):
        groups[find(i)].append(i)
    return [groups[k] for k in sorted(groups)]


def _validate_runs(runs: Sequence[LinkRun]) -> None:
    cages: dict[tuple[str, int], tuple[str, int]] = {}
    used: dict[tuple[str, int, int], str] = {}
    for run in runs:
        _check_length(run.length_m)
        if run.fibre not in ("", "mmf", "smf"):
            raise InfeasibleError(f"link {run.link_id}: fibre {run.fibre!r} is not mmf or smf")
        for end in (run.a, run.b):
            shape = (end.form_factor, end.ports_per_cage)
            if cages.setdefault(end.key, shape) != shape:
                raise InfeasibleError(
                    f"{end.name()} is given as {cages[end.key]} and as {shape} (form factor, "
                    "ports per cage); a cage has one shape"
                )
            if not 0 <= end.slot < end.ports_per_cage:
                raise InfeasibleError(
                    f"link {run.link_id}: slot {end.slot} is outside {end.name()} of "
                    f"{end.ports_per_cage} ports"
                )
            port = (end.device, end.cage, end.slot)
            if port in used:
                raise InfeasibleError(
                    f"links {used[port]} and {run.link_id} both use slot {end.slot + 1} of "
                    f"{end.name()}"
                )
            used[port] = run.link_id


def _fibre_demand(runs: Sequence[LinkRun], members: Sequence[int]) -> str:
    wanted: dict[str, str] = {}
    for i in members:
        if runs[i].fibre:
            wanted.setdefault(runs[i].fibre, runs[i].link_id)
    if len(wanted) <= 1:
        return next(iter(wanted), "")
    on_cage: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    for i in members:
        for end in (runs[i].a, runs[i].b):
            if end.ports_per_cage > 1 and runs[i].fibre:
                on_cage[end.key].setdefault(runs[i].fibre, runs[i].link_id)
    for (device, cage), kinds in sorted(on_cage.items()):
        if len(kinds) > 1:
            _mixed(f"cage {cage + 1} of {device}", kinds)
    _mixed("a chain of twin-port cages", wanted)


def _mixed(where: str, kinds: Mapping[str, str]) -> NoReturn:
    raise InfeasibleError(
        f"{where} carries links that ask for mmf ({kinds['mmf']}) and smf ({kinds['smf']}); a "
        "twin-port module takes one fibre type, so give both links the same fibre"
    )


def component_shape(runs: Sequence[LinkRun], members: Sequence[int], fibre: str) -> Component:
    index: dict[tuple[str, int], int] = {}
    cages: list[tuple[str, int]] = []
    shaped = []
    for i in members:
        run = runs[i]
        row = []
        for end in (run.a, run.b):
            if end.key not in index:
                index[end.key] = len(cages)
                cages.append((end.form_factor, end.ports_per_cage))
            row += [index[end.key], end.slot]
        shaped.append((row[0], row[1], row[2], row[3]))
    speeds = {runs[i].speed_gbps for i in members}
    if len(speeds) != 1:
        names = ", ".join(runs[i].link_id for i in members[:4])
        raise InfeasibleError(f"links {names} share a cage but run at different speeds")
    return Component(speeds.pop(), tuple(cages), tuple(shaped), fibre)


def assign_cages(catalog: Catalog, runs: Sequence[LinkRun]) -> Assignment:
    """Media for every run, one decision per component of runs tied by multi-port cages.

    Pass every link that shares a multi-port cage in one call (simplest: all links of the
    design). Raises InfeasibleError naming the link and length when nothing reaches it, or the
    cage when its links ask for two fibre types.
    """
    _validate_runs(runs)
    idx = catalog_index(catalog)
    choices: dict[str, MediaChoice] = {}
    stretched: list[tuple[str, float, float]] = []
    for members in components(runs):
        fibre = _fibre_demand(runs, members)
        comp = component_shape(runs, members, fibre)
        longest = max(members, key=lambda i: (runs[i].length_m, -i))
        length = runs[longest].length_m
        plans = plans_for(idx, comp)
        best = cheapest(plans, length)
        if best is None:
            run = runs[longest]
            what = _describe(
                run.speed_gbps,
                run.a.form_factor,
                run.a.ports_per_cage,
                run.b.form_factor,
                run.b.ports_per_cage,
            )
            if len(members) > 1 and plans:
                what += f" with the {len(members) - 1} other link(s) on its cages"
            raise InfeasibleError(
                f"link {run.link_id} ({run.a.device} to {run.b.device}): "
                + _unreachable(plans, length, what + (f", {fibre} fibre" if fibre else ""))
            )
        for i, choice in zip(members, per_link_choices(comp, best), strict=True):
            choices[runs[i].link_id] = choice
        shortest = min(runs[i].length_m for i in members)
        if len(members) > 1:
            own = best.cables[0][0].stocked(shortest)
            if own is not None and own < best.cables[0][1]:
                stretched.append((runs[longest].link_id, shortest, length))
    notes = []
    if stretched:
        link, lo, hi = stretched[0]
        notes.append(
            f"{len(stretched)} group(s) of links sharing twin-port cages were cut to their "
            f"longest member so both fibres of a module match (e.g. {lo:.1f} m and {hi:.1f} m "
            f"at link {link})"
        )
    return Assignment(choices=choices, notes=tuple(notes))


# -- from a Design ----------------------------------------------------------------------------


def design_runs(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float] | None = None,
    fibre: Mapping[str, str] | None = None,
) -> list[LinkRun]:
    """A LinkRun per design link; ``lengths_m`` by link id (routed lengths), 0 when None."""
    ends = link_ends(design, catalog)
    runs = []
    for link in design.links:
        if lengths_m is None:
            length = 0.0
        elif link.id in lengths_m:
            length = float(lengths_m[link.id])
        else:
            raise InfeasibleError(f"link {link.id} has no routed length; route every link first")
        a, b = ends[link.id]
        runs.append(LinkRun(link.id, link.rate_gbps, length, a, b, (fibre or {}).get(link.id, "")))
    return runs


def assign_design(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float],
    fibre: Mapping[str, str] | None = None,
) -> Assignment:
    """Media for every link of ``design`` at its routed length (see ``assign_cages``)."""
    return assign_cages(catalog, design_runs(design, catalog, lengths_m, fibre))
