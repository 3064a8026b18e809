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
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.design import Design
from railplan.errors import InfeasibleError
from railplan.physical.media_assign import (
    Assignment,
    LinkRun,
    _decide,
    _fibre_demand,
    _Notes,
    _refuse,
    _validate_runs,
    check_length,
    component_shape,
    components,
    design_runs,
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


@dataclass(frozen=True)
class Structure:
    """A design's runs at no length, their components and each component's shape (no fibre
    asked), or the error its shape raised (raised when that component is reached)."""

    runs: tuple[LinkRun, ...]
    groups: tuple[tuple[int, ...], ...]
    shapes: tuple[Component | InfeasibleError, ...]
    #: what ``_validate_runs`` refused in the cage structure (None: sound)
    problem: InfeasibleError | None


_STRUCTURES: dict[tuple[int, ...], tuple[tuple[object, ...], Structure]] = {}


def structure(design: Design, catalog: Catalog) -> Structure:
    """The design's cage structure (see ``Structure``), built once per design and catalog.

    Raises InfeasibleError when the node's NIC does not run the protocol of its switches.
    """
    held = (design.links, design.switches, design.devices, catalog, design.shape)
    key = tuple(id(x) for x in held)
    hit = _STRUCTURES.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], held, strict=True)):
        return hit[1]
    runs = tuple(design_runs(design, catalog))
    problem = None
    try:
        _validate_runs(runs)
    except InfeasibleError as exc:
        problem = exc
    groups = tuple(tuple(m) for m in components(runs))
    shapes: list[Component | InfeasibleError] = []
    for members in groups:
        try:
            shapes.append(component_shape(runs, members, ""))
        except InfeasibleError as exc:
            shapes.append(exc)
    out = Structure(runs, groups, tuple(shapes), problem)
    if len(_STRUCTURES) > 3:
        _STRUCTURES.clear()
    _STRUCTURES[key] = (held, out)
    return out


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
    plans, best, (skipped, plant_why) = hit
    n = len(comp.runs)
    if skipped is not None:
        reason, saving = skipped
        notes.skipped[reason] += n
        notes.skipped_example.setdefault(reason, (link, length_m, saving))
    if plant_why is not None:
        notes.plant[plant_why] += n
    return plans, best


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


def assign_design(
    design: Design,
    catalog: Catalog,
    lengths_m: Mapping[str, float],
    fibre: Mapping[str, str] | None = None,
    direct: Collection[str] = (),
) -> Assignment:
    """Media for every link of ``design`` at its routed length: the answer
    ``assign_cages(catalog, design_runs(design, catalog, lengths_m, fibre, direct))`` gives."""
    struct = structure(design, catalog)
    runs = struct.runs
    fibre = fibre or {}
    lengths: list[float] = []
    for run in runs:
        if run.link_id not in lengths_m:
            raise InfeasibleError(
                f"link {run.link_id} has no routed length; route every link first"
            )
        length = float(lengths_m[run.link_id])
        check_length(length)
        lengths.append(length)
    for run in runs:
        asked = fibre.get(run.link_id, "")
        if asked not in ("", "mmf", "smf"):
            raise InfeasibleError(f"link {run.link_id}: fibre {asked!r} is not mmf or smf")
    if struct.problem is not None:
        raise struct.problem
    idx = catalog_index(catalog)
    choices: dict[str, MediaChoice] = {}
    notes = _Notes([], Counter(), {}, Counter())
    for g, members in enumerate(struct.groups):
        asked = ""
        if fibre and any(runs[i].link_id in fibre for i in members):
            local = {
                i: dataclasses.replace(runs[i], fibre=fibre.get(runs[i].link_id, ""))
                for i in members
            }
            asked = _fibre_demand(local, members)
        comp = shape_of(struct, g, asked)
        longest = max(members, key=lambda i: (lengths[i], -i))
        length = lengths[longest]
        link = runs[longest].link_id
        only_direct = bool(direct) and any(runs[i].link_id in direct for i in members)
        plans, best = decide(idx, comp, length, link, notes, only_direct)
        if best is None:
            run = dataclasses.replace(runs[longest], length_m=length)
            _refuse(run, members, plans, length, asked)
        own = [lengths[i] for i in members]
        for i, choice in zip(members, split(idx, comp, best, own), strict=True):
            choices[runs[i].link_id] = choice
        if len(members) > 1 and best.plan.plant is None:
            shortest = min(own)
            stock = best.cables[0][0].stocked(shortest)
            if stock is not None and stock < best.cables[0][1]:
                notes.stretched.append((link, shortest, length))
    return Assignment(choices=choices, notes=notes.sentences())
