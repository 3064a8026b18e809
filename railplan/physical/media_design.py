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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, pairwise

import numpy as np

from railplan.array_groups import numbers_of, sort_groups
from railplan.catalog import LENGTH_EPS_M, Catalog
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
    structure_runs,
    validate_cages,
)
from railplan.physical.media_plans import (
    CatalogIndex,
    Component,
    MediaChoice,
    Plan,
    Priced,
    catalog_index,
    length_breakpoints,
    per_link_choices,
    plant_link_choices,
)
from railplan.physical.media_policy import OPTICS
from railplan.validate import wiring_known_sound


@dataclass(frozen=True)
class Structure:
    """A design's runs at no length, their components and each component's shape (no fibre
    asked), or the error its shape raised (raised when that component is reached)."""

    #: made only as they are read (``DesignRuns``)
    runs: Sequence[LinkRun]
    groups: tuple[tuple[int, ...], ...]
    shapes: tuple[Component | InfeasibleError, ...]
    #: what ``validate_cages`` refused in the cage structure (None: sound)
    problem: InfeasibleError | None
    #: per group, a number its shape shares with every equal shape (a cheap key for it)
    shape_ids: tuple[int, ...]
    #: per group, the ids of its links, aligned with ``groups``
    link_ids: tuple[tuple[str, ...], ...]
    #: the ids of the runs' links, in run order
    ids: tuple[str, ...]
    #: the groups as arrays, for passes over all of them at once: their rows one group after
    #: another, where each group starts among them, its size, its shape's number, and each
    #: row's group
    flat: np.ndarray = field(compare=False)
    starts: np.ndarray = field(compare=False)
    sizes: np.ndarray = field(compare=False)
    shape_no: np.ndarray = field(compare=False)
    group_of: np.ndarray = field(compare=False)
    #: each link's row, by id
    row: Mapping[str, int] = field(compare=False)
    #: per shape number: its first group and its links in all
    shape_first: np.ndarray = field(compare=False)
    shape_links: np.ndarray = field(compare=False)


_STRUCTURES: dict[tuple[int, ...], tuple[tuple[object, ...], Structure]] = {}


def structure(design: Design, catalog: Catalog) -> Structure:
    """The design's cage structure (see ``Structure``), built once per design and catalog.

    Raises InfeasibleError when the node's NIC does not run the protocol of its switches.
    """
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    return by_identity(_STRUCTURES, held, lambda: _structure(design, catalog))


def _structure(design: Design, catalog: Catalog) -> Structure:
    runs = structure_runs(design, catalog)
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
    flat = np.fromiter(chain.from_iterable(groups), np.int64, len(runs))
    in_order = list(map(table.ids.__getitem__, flat.tolist()))
    bounds = list(accumulate(map(len, groups), initial=0))
    link_ids = tuple(tuple(in_order[s:e]) for s, e in pairwise(bounds))
    sizes = np.fromiter(map(len, groups), np.int64, len(groups))
    group_of = np.empty(len(runs), np.int64)
    group_of[flat] = np.repeat(np.arange(len(groups)), sizes)
    shape_no = np.asarray(shape_ids, np.int64)
    shape_first = np.unique(shape_no, return_index=True)[1]
    shape_links = np.bincount(shape_no, sizes, len(numbered)).astype(np.int64)
    return Structure(
        runs=runs,
        groups=groups,
        shapes=tuple(shapes),
        problem=problem,
        shape_ids=tuple(shape_ids),
        link_ids=link_ids,
        ids=tuple(table.ids),
        flat=flat,
        starts=np.asarray(bounds[:-1], np.int64),
        sizes=sizes,
        shape_no=shape_no,
        group_of=group_of,
        row=table.row,
        shape_first=shape_first,
        shape_links=shape_links,
    )


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
    #: a new list of the traces (a pass over all components makes them only if asked again)
    traces: Callable[[], list[Trace]]


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
    lengths = _lengths(struct.ids, lengths_m)
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
        choices, traces = dict(last.choices), last.traces()
    else:
        whole = _whole(struct, catalog_index(catalog), lengths, wanted, direct)
        if whole is not None:
            choices, notes, traced = whole
            _LAST[:] = [_Pass(struct, lengths, wanted, direct, choices, traced)]
            return Assignment(choices=dict(choices), notes=notes.sentences())
        redo = range(len(struct.groups))  # a component is refused: walked to say which
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
    _LAST[:] = [_Pass(struct, lengths, wanted, direct, choices, traces.copy)]
    return Assignment(choices=dict(choices), notes=notes.sentences())


_NO_TRACE: Trace = ((None, None), 0, "", 0.0, None)


def _whole(
    struct: Structure,
    idx: CatalogIndex,
    lengths: list[float],
    fibre: Mapping[str, str],
    direct: frozenset[str],
) -> tuple[dict[str, MediaChoice], _Notes, Callable[[], list[Trace]]] | None:
    """What ``_Groups.decide`` gives every component and what the notes are told, worked out
    over arrays: every component's longest and shortest link at once, one decision per shape,
    fibre asked, point-to-point need and *length class* (``length_breakpoints``: the lengths a
    decision cannot tell apart), the notes counted per decision. None when a component is
    refused (the walk group by group then says which, as it always did)."""
    if not struct.groups:
        return None
    starts, sizes = struct.starts, struct.sizes
    here = np.asarray(lengths, np.float64)[struct.flat]
    # the first longest and first shortest, as max() and min() of the members pick them
    at = _first_equal(here, np.maximum.reduceat(here, starts), starts, sizes)
    low = _first_equal(here, np.minimum.reduceat(here, starts), starts, sizes)
    longest, shortest = here[at], here[low]
    ids = list(chain.from_iterable(struct.link_ids))
    try:
        code, asks = _shape_codes(struct, fibre, direct)
    except InfeasibleError:
        return None
    # (shape, best, what the notes are told, first group) of every decision; each group's
    dec = np.empty(len(struct.groups), np.int64)
    made: list[tuple[Component, Priced, Told, int]] = []
    by_code, firsts = sort_groups(code)
    for s, e in pairwise([*firsts.tolist(), len(by_code)]):
        same = by_code[s:e]  # the groups of one shape, fibre and need, in order
        first = int(same[0])
        if isinstance(struct.shapes[first], InfeasibleError):
            return None
        asked, only_direct = asks.get(int(code[first]), ("", False))
        comp = shape_of(struct, first, asked)
        stocks, limits = (np.asarray(x, np.float64) for x in length_breakpoints(idx, comp))
        far = longest[same]
        kind = np.searchsorted(stocks, far - LENGTH_EPS_M) * (len(limits) + 1)
        kind += np.searchsorted(limits, far)
        by_kind, kinds = sort_groups(kind)
        dec[same] = len(made) + numbers_of(by_kind, kinds)
        for g in same[by_kind[kinds]].tolist():  # each class's first group, deciding for it
            length = float(longest[g])
            _, best, told = decision(idx, comp, length, ids[at[g]], only_direct)
            if best is None:
                return None
            made.append((comp, best, told, g))
    # off the plant a decision's split reads no length; through it, each link's leg its own
    each: list[list[MediaChoice]] = []
    stretch = np.zeros(len(struct.groups), bool)
    for d, (comp, best, _, g) in enumerate(made):
        if best.plan.plant is not None:
            each.append([])
            continue
        each.append(split(idx, comp, best, [lengths[i] for i in struct.groups[g]]))
        # cut to the longest: a component whose shortest link a shorter stock would serve
        with_it = np.flatnonzero((dec == d) & (sizes > 1))
        stock = np.asarray(best.cables[0][0].lengths_m, np.float64)
        i = np.searchsorted(stock, shortest[with_it] - LENGTH_EPS_M)
        fits = i < len(stock)
        stretch[with_it[fits]] = stock[i[fits]] < best.cables[0][1]
    per_group = list(map(each.__getitem__, dec.tolist()))
    for d, (comp, best, _, _) in enumerate(made):
        if best.plan.plant is not None:
            through = np.flatnonzero(dec == d).tolist()
            own = ([lengths[i] for i in struct.groups[g]] for g in through)
            for g, row in zip(through, plant_link_choices(comp, best, own), strict=True):
                per_group[g] = row
    choices = dict(zip(ids, chain.from_iterable(per_group), strict=True))
    notes = _Notes([], Counter(), {}, Counter())
    links = np.bincount(dec, weights=sizes, minlength=len(made)).astype(np.int64).tolist()
    for d in sorted(range(len(made)), key=lambda d: made[d][3]):  # as the groups come
        g = made[d][3]
        tell(notes, made[d][2], links[d], ids[at[g]], float(longest[g]))
    cut = np.flatnonzero(stretch).tolist()
    notes.stretched = [(ids[at[g]], float(shortest[g]), float(longest[g])) for g in cut]

    def traces() -> list[Trace]:
        told = [m[2] for m in made]
        cuts = dict(zip(cut, notes.stretched, strict=True))
        rows = zip(dec.tolist(), sizes.tolist(), at.tolist(), longest.tolist(), strict=True)
        return [(told[d], n, ids[a], far, cuts.get(g)) for g, (d, n, a, far) in enumerate(rows)]

    return choices, notes, traces


def _first_equal(
    values: np.ndarray, target: np.ndarray, starts: np.ndarray, sizes: np.ndarray
) -> np.ndarray:
    """Per group (``starts``, ``sizes`` in ``values``), the index of its first value equal to
    its ``target``."""
    hit = values == np.repeat(target, sizes)
    return np.minimum.reduceat(np.where(hit, np.arange(len(values)), len(values)), starts)


def _shape_codes(
    struct: Structure, fibre: Mapping[str, str], direct: frozenset[str]
) -> tuple[np.ndarray, dict[int, tuple[str, bool]]]:
    """Each group's shape number, or a new number for a shape asked for a fibre or kept
    point-to-point, and what each new number asks (raises what ``_fibre_demand`` raises)."""
    rows = [struct.row[k] for k in chain(fibre, direct) if k in struct.row]
    code = struct.shape_no.copy()
    asks: dict[int, tuple[str, bool]] = {}
    if not rows:
        return code, asks
    runs, top = struct.runs, int(code.max()) + 1
    numbered: dict[tuple[int, str, bool], int] = {}
    for g in np.unique(struct.group_of[rows]).tolist():
        members, ids = struct.groups[g], struct.link_ids[g]
        asked = ""
        if fibre and any(link in fibre for link in ids):
            local = {i: runs[i]._replace(fibre=fibre.get(runs[i].link_id, "")) for i in members}
            asked = _fibre_demand(local, members)
        only_direct = bool(direct) and not direct.isdisjoint(ids)
        if asked or only_direct:
            number = numbered.setdefault((int(code[g]), asked, only_direct), top + len(numbered))
            asks[number] = (asked, only_direct)
            code[g] = number
    return code, asks


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


def _lengths(ids: tuple[str, ...], lengths_m: Mapping[str, float]) -> list[float]:
    """Each link's routed length, by id; refused when one is missing or not a length."""
    try:
        if type(lengths_m) is dict and tuple(lengths_m) == ids:  # keyed in link order (routed)
            out = list(map(float, lengths_m.values()))
        else:
            out = list(map(float, map(lengths_m.__getitem__, ids)))
    except KeyError as exc:
        raise InfeasibleError(
            f"link {exc.args[0]} has no routed length; route every link first"
        ) from None
    at = np.asarray(out, np.float64)
    if not ((at >= 0) & (at < math.inf)).all():  # NaN fails both comparisons
        for x in out:
            check_length(x)
    return out
