"""Media for every link of a design at once, one decision per component of cage-tied links.

Links tied together by multi-port cages (a twin-port OSFP carries two links) form one
*component* and get one decision: the same optical interface, so the same fibre type, on
every link of a twin-port module (mixed types are refused), one module per cage, and every
cable of the component at its longest routed length rounded up to a stocked length (NVIDIA:
both fibres of a twin-port module should be about the same length). A component routed
through the fibre plant prices each link's leg at its own length instead: its legs ride
separate trunks or cords while the harness at each module keeps its fibres alike.

Only parts that run the link's protocol and are qualified for the equipment at their ends are
billed; when a part the rules exclude would have been cheaper, the assignment says so.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import NamedTuple, NoReturn, overload

from railplan.catalog import Catalog
from railplan.design import Design, Link
from railplan.design.ends import (
    CageEnd,
    every_end,
    link_ends,
    link_protocols,
    protocol_column,
    protocols_present,
)
from railplan.design.link_table import link_table
from railplan.errors import InfeasibleError
from railplan.physical.media_plans import (
    CatalogIndex,
    Component,
    MediaChoice,
    Plan,
    Priced,
    catalog_index,
    cheapest_for,
    longest_reach,
    per_link_choices,
    plans_for,
)
from railplan.physical.media_policy import OPTICS

FIX_HINT = "add one to catalogs/optics.yaml"


class LinkRun(NamedTuple):
    """A link to give media to: speed, routed length and its two cage ends.

    One per link of the design (a named tuple: built fast, immutable; ``_replace`` copies it
    with a field changed)."""

    link_id: str
    speed_gbps: int
    length_m: float
    a: CageEnd
    b: CageEnd
    #: "" for any media, "mmf" or "smf" to insist on optics of that fibre, OPTICS
    #: ("optics") on optics of either (``bill.media: copper-in-rack`` between racks)
    fibre: str = ""
    #: the protocol the link runs ("" = any part, whatever protocols it lists)
    protocol: str = ""
    #: True: point-to-point media only, where any exist (its fibre-plant channel could not be
    #: built within reach)
    direct: bool = False


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


def check_length(length_m: float) -> None:
    if not math.isfinite(length_m) or length_m < 0:
        raise InfeasibleError(f"cable length {length_m} m is not a length; give metres >= 0")


def describe(speed: int, a_ff: str, a_ppc: int, b_ff: str, b_ppc: int) -> str:
    extra = [
        f"{p} ports per cage at the {end} end" for end, p in (("a", a_ppc), ("b", b_ppc)) if p > 1
    ]
    return f"{speed}G {a_ff}-{b_ff}" + (f" ({', '.join(extra)})" if extra else "")


def unreachable(plans: Sequence[Plan], length_m: float, what: str) -> str:
    if not plans:
        return f"no catalog part connects {what} at any length; {FIX_HINT}"
    return (
        f"no catalog part reaches {length_m:.1f} m at {what} (the longest is "
        f"{longest_reach(plans):g} m); add a longer-reach optic to catalogs/optics.yaml"
    )


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
                if j == i:  # the cage's first run: nothing to join yet
                    continue
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
        check_length(run.length_m)
        if run.fibre not in ("", "mmf", "smf"):
            raise InfeasibleError(f"link {run.link_id}: fibre {run.fibre!r} is not mmf or smf")
        _check_ends(run, cages, used)


def validate_cages(runs: Sequence[LinkRun]) -> None:
    """``_validate_runs`` for runs of no length and no fibre asked: only their cages."""
    cages: dict[tuple[str, int], tuple[str, int]] = {}
    used: dict[tuple[str, int, int], str] = {}
    for run in runs:
        _check_ends(run, cages, used)


def _check_ends(
    run: LinkRun,
    cages: dict[tuple[str, int], tuple[str, int]],
    used: dict[tuple[str, int, int], str],
) -> None:
    """One shape per cage, a slot inside its cage, one link per slot."""
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
                f"links {used[port]} and {run.link_id} both use slot {end.slot + 1} of {end.name()}"
            )
        used[port] = run.link_id


def _fibre_demand(runs: Sequence[LinkRun] | Mapping[int, LinkRun], members: Sequence[int]) -> str:
    """What the component's links ask of its media: "" anything, OPTICS optics of either fibre
    (a cage-tied component is decided at once, so one link between racks puts all of it on
    optics), "mmf" or "smf" optics of that fibre (which also satisfies OPTICS)."""
    wanted: dict[str, str] = {}
    optics = False
    for i in members:
        if runs[i].fibre == OPTICS:
            optics = True
        elif runs[i].fibre:
            wanted.setdefault(runs[i].fibre, runs[i].link_id)
    if len(wanted) <= 1:
        return next(iter(wanted), OPTICS if optics else "")
    on_cage: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)
    for i in members:
        for end in (runs[i].a, runs[i].b):
            if end.ports_per_cage > 1 and runs[i].fibre not in ("", OPTICS):
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
    """The component's shape with its protocol and the maker of each cage's equipment."""
    index: dict[tuple[str, int], int] = {}
    cages: list[tuple[str, int]] = []
    vendors: list[str] = []
    lanes: list[tuple[int, ...]] = []
    shaped = []
    for i in members:
        run = runs[i]
        row = []
        for end in (run.a, run.b):
            if end.key not in index:
                index[end.key] = len(cages)
                cages.append((end.form_factor, end.ports_per_cage))
                vendors.append(end.vendor)
                lanes.append(end.lanes)
            row += [index[end.key], end.slot]
        shaped.append((row[0], row[1], row[2], row[3]))
    speeds = {runs[i].speed_gbps for i in members}
    if len(speeds) != 1:
        names = ", ".join(runs[i].link_id for i in members[:4])
        raise InfeasibleError(f"links {names} share a cage but run at different speeds")
    protocols = {runs[i].protocol for i in members}
    protocol = protocols.pop() if len(protocols) == 1 else ""
    return Component(
        speeds.pop(),
        tuple(cages),
        tuple(shaped),
        fibre,
        protocol,
        tuple(vendors) if any(vendors) else (),
        tuple(lanes) if any(lanes) else (),
    )


def apart(lo: float, hi: float) -> tuple[str, str]:
    """Two lengths in metres to a tenth, or finer where a tenth would print them alike
    (9.96 and 10.04 m are not "10.0 m and 10.0 m"); lengths are routed to the millimetre."""
    for digits in (1, 2, 3):
        short, long = f"{lo:.{digits}f}", f"{hi:.{digits}f}"
        if short != long:
            break
    return short, long


@dataclass
class _Notes:
    """What the assignment tells the user: parts the rules skipped, links through the plant."""

    stretched: list[tuple[str, float, float]]
    skipped: Counter[tuple[str, str]]
    skipped_example: dict[tuple[str, str], tuple[str, float, float]]
    plant: Counter[str]

    def sentences(self) -> tuple[str, ...]:
        out = []
        if self.stretched:
            link, lo, hi = self.stretched[0]
            short, long = apart(lo, hi)
            out.append(
                f"{len(self.stretched)} group(s) of links sharing twin-port cages were cut to "
                f"their longest member so both fibres of a module match (e.g. {short} m and "
                f"{long} m at link {link})"
            )
        for (part, why), n in sorted(self.skipped.items()):
            link, length, saving = self.skipped_example[(part, why)]
            out.append(
                f"{part} would cost less for {n} link(s) (e.g. link {link} at {length:.1f} m, "
                f"${saving:,.0f} less per component) but {why}; it was not billed"
            )
        for why, n in sorted(self.plant.items()):
            out.append(f"fibre plant (harness, panels, trunks) for {n} link(s): {why}")
        return tuple(out)


def _skip_reason(priced: Priced, comp: Component) -> tuple[str, str] | None:
    """The first part of a plan the protocol and qualification rules exclude, and why."""
    for cage, t in enumerate(priced.plan.modules):
        if t is not None:
            why = t.usable(comp.protocol, comp.vendors_of([cage]))
            if why:
                return t.id, why
    everyone = sorted(set(comp.vendors)) if comp.vendors else None
    for part, _ in priced.cables:
        why = part.usable(comp.protocol, everyone)
        if why:
            return part.id, why
    return None


def _decide(
    idx: CatalogIndex, comp: Component, length: float, link: str, notes: _Notes, only_direct: bool
) -> tuple[tuple[Plan, ...], Priced | None]:
    """The cheapest plan for ``comp`` at ``length`` (``only_direct``: a point-to-point one where
    there is one), noting what the rules cost."""
    n = len(comp.runs)
    plans = plans_for(idx, comp)
    which = "all"
    if only_direct and cheapest_for(idx, comp, length, "direct") is not None:
        which = "direct"
    best = cheapest_for(idx, comp, length, which)
    if comp.protocol or comp.vendors:
        free = cheapest_for(idx, comp.relaxed(), length, which)
        if free is not None and (best is None or free.cost_usd < best.cost_usd - 0.005):
            reason = _skip_reason(free, comp)
            if reason is not None:
                notes.skipped[reason] += n
                saving = (best.cost_usd if best else math.inf) - free.cost_usd
                notes.skipped_example.setdefault(reason, (link, length, saving))
    if best is not None and best.plan.plant is not None:
        direct = cheapest_for(idx, comp, length, "direct")
        why = (
            "no point-to-point cable joins their modules (both ends fan out)"
            if direct is None
            else "cheaper than point-to-point cables at their length"
        )
        notes.plant[why] += n
    return plans, best


def assign_cages(catalog: Catalog, runs: Sequence[LinkRun]) -> Assignment:
    """Media for every run, one decision per component of runs tied by multi-port cages.

    Pass every link that shares a multi-port cage in one call (simplest: all links of the
    design). Raises InfeasibleError naming the link and length when nothing reaches it, or the
    cage when its links ask for two fibre types.
    """
    _validate_runs(runs)
    idx = catalog_index(catalog)
    choices: dict[str, MediaChoice] = {}
    notes = _Notes([], Counter(), {}, Counter())
    for members in components(runs):
        fibre = _fibre_demand(runs, members)
        comp = component_shape(runs, members, fibre)
        longest = max(members, key=lambda i: (runs[i].length_m, -i))
        length = runs[longest].length_m
        direct = any(runs[i].direct for i in members)
        plans, best = _decide(idx, comp, length, runs[longest].link_id, notes, direct)
        if best is None:
            _refuse(runs[longest], members, plans, length, fibre)
        lengths = [runs[i].length_m for i in members]
        for i, choice in zip(members, per_link_choices(comp, best, lengths), strict=True):
            choices[runs[i].link_id] = choice
        if len(members) > 1 and best.plan.plant is None:
            shortest = min(lengths)
            own = best.cables[0][0].stocked(shortest)
            if own is not None and own < best.cables[0][1]:
                notes.stretched.append((runs[longest].link_id, shortest, length))
    return Assignment(choices=choices, notes=notes.sentences())


def _refuse(
    run: LinkRun, members: Sequence[int], plans: Sequence[Plan], length: float, fibre: str
) -> NoReturn:
    what = describe(
        run.speed_gbps,
        run.a.form_factor,
        run.a.ports_per_cage,
        run.b.form_factor,
        run.b.ports_per_cage,
    )
    if run.protocol:
        what = f"{run.protocol} {what}"
    if len(members) > 1 and plans:
        what += f" with the {len(members) - 1} other link(s) on its cages"
    raise InfeasibleError(
        f"link {run.link_id} ({run.a.device} to {run.b.device}): "
        + unreachable(plans, length, what + (f", {fibre} fibre" if fibre else ""))
    )


def design_runs(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float] | None = None,
    fibre: Mapping[str, str] | None = None,
    direct: Collection[str] = (),
) -> list[LinkRun]:
    """A LinkRun per design link; ``lengths_m`` by link id (routed lengths), 0 when None;
    ``fibre`` the fibre a link must run on, ``direct`` the links kept out of the fibre plant.

    Raises InfeasibleError when the node's NIC does not run the protocol of its switches.
    """
    if lengths_m is None and not fibre and not direct:  # the structure's runs
        return structure_runs(design, catalog).every()
    ends = every_end(link_ends(design, catalog))  # read for every link
    protocols = link_protocols(design, catalog).every()
    _nic_runs(design, catalog, set(protocols.values()))
    runs = []
    for link in design.links:
        if lengths_m is None:
            length = 0.0
        elif link.id in lengths_m:
            length = float(lengths_m[link.id])
        else:
            raise InfeasibleError(f"link {link.id} has no routed length; route every link first")
        a, b = ends[link.id]
        demand = (fibre or {}).get(link.id, "")
        runs.append(
            LinkRun(
                link.id,
                link.rate_gbps,
                length,
                a,
                b,
                demand,
                protocols[link.id],
                link.id in direct,
            )
        )
    return runs


_LINK_ID, _RATE = attrgetter("id"), attrgetter("rate_gbps")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_SPEED, _PROTOCOL = attrgetter("speed_gbps"), attrgetter("protocol")


def structure_runs(design: Design, catalog: Catalog) -> DesignRuns:
    """``design_runs(design, catalog)`` (no length, fibre or direct link), each run made when
    it is read (``DesignRuns``).

    Raises InfeasibleError when the node's NIC does not run the protocol of its switches.
    """
    ends = link_ends(design, catalog)
    protocols = link_protocols(design, catalog)
    _nic_runs(design, catalog, protocols_present(protocols))
    return DesignRuns(design.links, link_table(design, catalog).ids, ends, protocols)


class DesignRuns(Sequence[LinkRun]):
    """A design's runs at no length, made only when read: a job reads a few of 393,216 (its
    speeds and protocols come as columns), and making them all costs a quarter of a second.
    Iterating or slicing makes them all, once."""

    def __init__(
        self,
        links: Sequence[Link],
        ids: tuple[str, ...],
        ends: Mapping[str, tuple[CageEnd, CageEnd]],
        protocols: Mapping[str, str],
    ) -> None:
        """``ids``: the links' ids, in their order."""
        self._links, self._ids, self._ends, self._protocols = links, ids, ends, protocols
        self._every: list[LinkRun] | None = None

    def __len__(self) -> int:
        return len(self._links)

    @overload
    def __getitem__(self, i: int) -> LinkRun: ...
    @overload
    def __getitem__(self, i: slice) -> list[LinkRun]: ...
    def __getitem__(self, i: int | slice) -> LinkRun | list[LinkRun]:
        if self._every is not None or isinstance(i, slice):
            return self._made()[i]
        link = self._links[i]
        a, b = self._ends[link.id]
        protocol = self._protocols[link.id]
        return LinkRun(link.id, link.rate_gbps, 0.0, a, b, "", protocol, False)

    def __iter__(self) -> Iterator[LinkRun]:
        return iter(self._made())

    def every(self) -> list[LinkRun]:
        """Every run, in link order, in a new list."""
        return list(self._made())

    def _made(self) -> list[LinkRun]:
        """Every run, made once in one pass in C."""
        if self._every is None:
            ids = self._ids
            pairs = list(map(every_end(self._ends).__getitem__, ids))
            rows = zip(
                ids,
                map(_RATE, self._links),
                repeat(0.0),
                map(_FIRST, pairs),
                map(_SECOND, pairs),
                repeat(""),
                protocol_column(self._protocols, ids),
                repeat(False),
            )
            # each row made a LinkRun by tuple.__new__ (the named tuple's own __new__ is Python)
            self._every = list(map(tuple.__new__, repeat(LinkRun), rows))
        return self._every

    def columns(self) -> tuple[list[int], list[str]]:
        """Every run's speed and protocol, read off the links without making the runs."""
        speeds = list(map(_RATE, self._links))
        return speeds, protocol_column(self._protocols, self._ids)


def run_columns(runs: Sequence[LinkRun]) -> tuple[list[int], list[str]]:
    """Every run's speed and protocol (``DesignRuns`` gives them without making its runs)."""
    if isinstance(runs, DesignRuns):
        return runs.columns()
    return list(map(_SPEED, runs)), list(map(_PROTOCOL, runs))


def _nic_runs(design: Design, catalog: Catalog, protocols: set[str]) -> None:
    nic = catalog.nics.get(design.shape.nic_model)
    if nic is None:
        return
    for protocol in sorted(p for p in protocols if p and p not in nic.protocols):
        raise InfeasibleError(
            f"NIC {nic.id} ({nic.name}) does not run {protocol}, which the switches of this "
            f"fabric run; pick a NIC or node that does, or switches that run "
            f"{' or '.join(nic.protocols)}"
        )
