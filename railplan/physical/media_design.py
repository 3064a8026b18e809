"""Media for every link of a design: its cage structure worked out once, decisions remembered.

``assign_design`` gives the answer ``media_assign.assign_cages`` gives for the design's runs, in
one pass per component, with three things kept between calls (a job asks for the design's
media, then asks again when a fibre-plant channel is out of reach, and placement and the panel
count ask for the components too):

- the design's *structure*: its runs at no length, their cage-tied components and the shape of
  each (``Component``), remembered by the identity of the objects it is computed from (a laid
  out design shares its links and switches with the design it was made from);
- each component's *decision* (``_decide``), keyed by exactly what the decision reads: the
  component's shape, whether it must stay point-to-point and its longest length;
- the per-link split of a point-to-point decision, which reads no length.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, pairwise

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.design.link_table import link_table
from railplan.design.memo import by_identity
from railplan.errors import InfeasibleError
from railplan.physical.cage_groups import cage_groups, group_shapes
from railplan.physical.media_assign import (
    Assignment,
    LinkRun,
    _decide,
    _fibre_demand,
    _Notes,
    _refuse,
    check_length,
    design_runs,
    validate_cages,
)
from railplan.physical.media_plans import (
    CatalogIndex,
    Component,
    MediaChoice,
    Plan,
    Priced,
    catalog_index,
    per_link_choices,
)
from railplan.physical.media_policy import OPTICS
from railplan.validate import wiring_known_sound


@dataclass(frozen=True)
class Structure:
    """A design's runs at no length, their components and each component's shape (no fibre
    asked), or the error its shape raised (raised when that component is reached)."""

    runs: tuple[LinkRun, ...]
    groups: tuple[tuple[int, ...], ...]
    shapes: tuple[Component | InfeasibleError, ...]
    #: what ``validate_cages`` refused in the cage structure (None: sound)
    problem: InfeasibleError | None
    #: per group, a number its shape shares with every equal shape (a cheap key for it)
    shape_ids: tuple[int, ...] = ()
    #: per group, the ids of its links, aligned with ``groups``
    link_ids: tuple[tuple[str, ...], ...] = ()


_STRUCTURES: dict[tuple[int, ...], tuple[tuple[object, ...], Structure]] = {}


def structure(design: Design, catalog: Catalog) -> Structure:
    """The design's cage structure (see ``Structure``), built once per design and catalog.

    Raises InfeasibleError when the node's NIC does not run the protocol of its switches.
    """
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_STRUCTURES, held, lambda: _structure(design, catalog))


def _structure(design: Design, catalog: Catalog) -> Structure:
    runs = tuple(design_runs(design, catalog))
    problem = None
    # the ends are cut from the wiring (``link_ends``), so every cage has one shape and every
    # slot lies in its cage; one link per slot is one link per port, which ``check`` proved
    # for a wiring it found sound: the cages are walked only for any other wiring
    if not wiring_known_sound(design):
        try:
            validate_cages(runs)
        except InfeasibleError as exc:
            problem = exc
    table = link_table(design, catalog)
    groups = tuple(cage_groups(table, runs))
    shapes = group_shapes(table, runs, groups)
    # groups of one signature share their shape object: each object is numbered once, equal
    # shapes by first appearance
    numbered: dict[Component | InfeasibleError, int] = {}
    of_object: dict[int, int] = {}
    shape_ids = []
    for shape in shapes:
        number = of_object.get(id(shape))
        if number is None:
            number = of_object[id(shape)] = numbered.setdefault(shape, len(numbered))
        shape_ids.append(number)
    in_order = list(map(table.ids.__getitem__, chain.from_iterable(groups)))
    bounds = list(accumulate(map(len, groups), initial=0))
    link_ids = tuple(tuple(in_order[s:e]) for s, e in pairwise(bounds))
    return Structure(runs, groups, tuple(shapes), problem, tuple(shape_ids), link_ids)


def shape_of(struct: Structure, group: int, fibre: str = "") -> Component:
    """The shape of component ``group`` with the fibre its links ask for."""
    shape = struct.shapes[group]
    if isinstance(shape, InfeasibleError):
        raise shape
    return shape if not fibre else dataclasses.replace(shape, fibre=fibre)


#: what a decision tells the notes: (part, why) skipped and the saving, plant reason
Told = tuple[tuple[tuple[str, str], float] | None, str | None]


def decide(
    idx: CatalogIndex, comp: Component, length_m: float, link: str, notes: _Notes, direct: bool
) -> tuple[tuple[Plan, ...], Priced | None]:
    """``media_assign._decide``, remembered per (shape, point-to-point only, length)."""
    plans, best, told = decision(idx, comp, length_m, link, direct)
    tell(notes, told, len(comp.runs), link, length_m)
    return plans, best


def decision(
    idx: CatalogIndex, comp: Component, length_m: float, link: str, direct: bool
) -> tuple[tuple[Plan, ...], Priced | None, Told]:
    """The plans, the cheapest and what the notes are told, remembered per (shape,
    point-to-point only, length); ``link`` only names the example a note gives."""
    key = (comp, direct, length_m)
    hit = idx.decided.get(key)
    if hit is None:
        probe = _Notes([], Counter(), {}, Counter())
        plans, best = _decide(idx, comp, length_m, link, probe, direct)
        skip = next(iter(probe.skipped), None)
        told: Told = (
            None if skip is None else (skip, probe.skipped_example[skip][2]),
            next(iter(probe.plant), None),
        )
        if len(idx.decided) > 200_000:
            idx.decided.clear()
        hit = (plans, best, told)
        idx.decided[key] = hit
    return hit


def tell(notes: _Notes, told: Told, n: int, link: str, length_m: float) -> None:
    """Count a decision of ``n`` links in the notes, as ``_decide`` would have."""
    skipped, plant_why = told
    if skipped is not None:
        reason, saving = skipped
        notes.skipped[reason] += n
        notes.skipped_example.setdefault(reason, (link, length_m, saving))
    if plant_why is not None:
        notes.plant[plant_why] += n


def split(
    idx: CatalogIndex, comp: Component, best: Priced, lengths_m: Sequence[float]
) -> list[MediaChoice]:
    """``per_link_choices``; a point-to-point plan's split reads no length, so it is kept."""
    if best.plan.plant is not None:
        return per_link_choices(comp, best, lengths_m)
    key = (comp, id(best))
    hit = idx.splits.get(key)
    if hit is None or hit[0] is not best:
        if len(idx.splits) > 200_000:
            idx.splits.clear()
        hit = (best, per_link_choices(comp, best, lengths_m))
        idx.splits[key] = hit
    return list(hit[1])


#: what a component's decision tells the notes, in group order: (told, links, example link,
#: length, the (link, shortest, longest) it adds to the stretched note or None)
Trace = tuple[Told, int, str, float, tuple[str, float, float] | None]


@dataclass
class _Pass:
    """The last assignment of a structure: its inputs and, per group, what it told the notes."""

    struct: Structure
    lengths: list[float]
    fibre: dict[str, str]
    direct: frozenset[str]
    choices: dict[str, MediaChoice]
    traces: list[Trace]


#: the last pass (the fibre-plant retry asks again with a few links changed: only their
#: components are decided again)
_LAST: list[_Pass] = []


def assign_design(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float],
    fibre: Mapping[str, str] | None = None,
    direct: Collection[str] = (),
) -> Assignment:
    """Media for every link of ``design`` at its routed length: the answer
    ``assign_cages(catalog, design_runs(design, catalog, lengths_m, fibre, direct))`` gives.

    Components alike in shape, fibre asked, point-to-point need and longest length share one
    decision and, off the plant, one per-link split: they are looked up by the shape's number
    (``Structure.shape_ids``), not by hashing the shape for every component. Asked again for
    the same structure at the same lengths, only the components with a link whose fibre or
    point-to-point need changed are decided again; the others keep their answers (which read
    nothing else) and the notes are told again in component order."""
    struct = structure(design, catalog)
    runs = struct.runs
    fibre = fibre or {}
    lengths = _lengths(runs, lengths_m)
    if any(v not in ("", "mmf", "smf", OPTICS) for v in fibre.values()):
        for run in runs:
            asked = fibre.get(run.link_id, "")
            if asked not in ("", "mmf", "smf", OPTICS):
                raise InfeasibleError(
                    f"link {run.link_id}: fibre {asked!r} is not mmf, smf or {OPTICS}"
                )
    if struct.problem is not None:
        raise struct.problem
    wanted = {k: v for k, v in fibre.items() if v}
    direct = frozenset(direct)
    last = _LAST[0] if _LAST else None
    if last is not None and last.struct is struct and last.lengths == lengths:
        changed = direct ^ last.direct
        changed |= {
            k for k in wanted.keys() | last.fibre.keys() if wanted.get(k) != last.fibre.get(k)
        }
        redo: Sequence[int] = [
            g for g, ids in enumerate(struct.link_ids) if not changed.isdisjoint(ids)
        ]
        choices, traces = dict(last.choices), list(last.traces)
    else:
        redo = range(len(struct.groups))
        choices, traces = {}, [_NO_TRACE] * len(struct.groups)
    groups = _Groups(struct, catalog_index(catalog), lengths, wanted, direct)
    for g in redo:
        each, traces[g] = groups.decide(g)
        choices.update(zip(struct.link_ids[g], each, strict=True))
    notes = _Notes([], Counter(), {}, Counter())
    for told, n, link, length, stretched in traces:
        tell(notes, told, n, link, length)
        if stretched is not None:
            notes.stretched.append(stretched)
    _LAST[:] = [_Pass(struct, lengths, wanted, direct, choices, traces)]
    return Assignment(choices=dict(choices), notes=notes.sentences())


_NO_TRACE: Trace = ((None, None), 0, "", 0.0, None)


class _Groups:
    """Decides components of one structure at given lengths, fibre asked and direct links,
    sharing decisions and splits between alike components."""

    def __init__(
        self,
        struct: Structure,
        idx: CatalogIndex,
        lengths: list[float],
        fibre: Mapping[str, str],
        direct: frozenset[str],
    ) -> None:
        self.struct, self.idx, self.lengths = struct, idx, lengths
        self.fibre, self.direct = fibre, direct
        # (shape number, fibre, point-to-point only, length) -> (shape, plans, best, told)
        self.decided: dict[
            tuple[int, str, bool, float], tuple[Component, tuple[Plan, ...], Priced | None, Told]
        ] = {}
        # (shape number, fibre, id of a point-to-point best) -> its per-link choices; every
        # best stays alive in ``decided`` meanwhile, so an id names one plan
        self.splits: dict[tuple[int, str, int], list[MediaChoice]] = {}

    def decide(self, g: int) -> tuple[list[MediaChoice], Trace]:
        """Component ``g``'s per-link choices and what it tells the notes."""
        struct, runs, lengths = self.struct, self.struct.runs, self.lengths
        members, ids = struct.groups[g], struct.link_ids[g]
        asked = ""
        if self.fibre and any(link in self.fibre for link in ids):
            local = {
                i: runs[i]._replace(fibre=self.fibre.get(runs[i].link_id, "")) for i in members
            }
            asked = _fibre_demand(local, members)
        own = [lengths[i] for i in members]
        length = max(own)
        at = own.index(length)  # the first longest: members run in order
        link = ids[at]
        only_direct = bool(self.direct) and not self.direct.isdisjoint(ids)
        key = (struct.shape_ids[g], asked, only_direct, length)
        hit = self.decided.get(key)
        if hit is None:
            comp = shape_of(struct, g, asked)
            hit = self.decided[key] = (comp, *decision(self.idx, comp, length, link, only_direct))
        comp, plans, best, told = hit
        if best is None:
            run = runs[members[at]]._replace(length_m=length)
            _refuse(run, members, plans, length, asked)
        if best.plan.plant is not None:
            return per_link_choices(comp, best, own), (told, len(members), link, length, None)
        skey = (key[0], asked, id(best))
        each = self.splits.get(skey)
        if each is None:
            each = self.splits[skey] = split(self.idx, comp, best, own)
        stretched = None
        if len(members) > 1:
            shortest = min(own)
            stock = best.cables[0][0].stocked(shortest)
            if stock is not None and stock < best.cables[0][1]:
                stretched = (link, shortest, length)
        return each, (told, len(members), link, length, stretched)


def _lengths(runs: Sequence[LinkRun], lengths_m: Mapping[str, float]) -> list[float]:
    """Each run's routed length, in run order; refused when one is missing or not a length."""
    try:
        out = [float(lengths_m[run.link_id]) for run in runs]
    except KeyError as exc:
        raise InfeasibleError(
            f"link {exc.args[0]} has no routed length; route every link first"
        ) from None
    if not all(0 <= x < math.inf for x in out):  # NaN fails both comparisons
        for x in out:
            check_length(x)
    return out
