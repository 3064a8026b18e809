"""Phases of a build-out: each phase a subset of the final design, cut from it, never re-planned.

The final size is planned and laid out once. A phase keeps the first nodes (by index) of the
final design and, with ``fabric.whole_su``, every leaf of the scalable units they start; then,
tier by tier, every uplink of a kept switch and the switch it reaches. Racks, placements,
cable ids, labels, lengths and media are the final design's rows, so a link that a phase has
stays exactly as it is in every later phase: a phase's cabling is a subset of the next
phase's by construction, and ``subset_problems`` checks it (link ends, cable rows, placements)
rather than trusting the construction.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from railplan.catalog import Catalog
from railplan.change.delta import Delta, delta
from railplan.change.inventory import ends_of
from railplan.design import Design, PatchPanel
from railplan.errors import SpecError
from railplan.validate import check


@dataclass(frozen=True)
class Phase:
    """One phase: its name, GPUs and the design cut from the final one."""

    name: str
    gpus: int
    design: Design


def phase_nodes(final: Design, gpus: int) -> int:
    """Nodes a phase of ``gpus`` GPUs needs (whole nodes)."""
    return math.ceil(gpus / final.shape.gpus)


def cut(
    final: Design,
    gpus: int,
    name: str,
    lower_bound: int | None = None,
    catalog: Catalog | None = None,
) -> Design:
    """The part of laid-out ``final`` that a phase of ``gpus`` GPUs installs."""
    if not 1 <= gpus <= final.gpus:
        raise SpecError(
            f"phases: a phase of {gpus} GPUs does not fit the final design of {final.gpus} "
            "GPUs; give each phase at most cluster.gpus"
        )
    if gpus % final.shape.gpus:
        raise SpecError(
            f"phases: {gpus} GPUs is not whole {final.shape.gpus}-GPU nodes; give a multiple "
            f"of {final.shape.gpus}"
        )
    count = phase_nodes(final, gpus)
    active = sorted((n for n in final.nodes if not n.spare), key=lambda n: n.index)
    kept_nodes = {n.id for n in active[:count]}
    sus = {n.su for n in active[:count]}
    kept_nodes |= {n.id for n in final.nodes if n.spare and n.su in sus}
    keep: set[str] = set(kept_nodes)
    whole = final.sizing.whole_su
    for lk in final.links:
        if lk.kind == "node-leaf" and lk.a_device in kept_nodes:
            keep.add(lk.b_device)
    if whole:
        keep |= {s.id for s in final.switches if s.tier == 1 and s.su >= 0 and s.su in sus}
    devices = {d.id for d in final.devices if d.su in sus}
    for lk in final.links:
        if lk.kind == "device-leaf" and lk.b_device in keep:
            devices.add(lk.a_device)
    keep |= devices
    # tier by tier: every uplink of a kept switch, and the switch it reaches
    for kind in ("leaf-spine", "spine-core"):
        for lk in final.links:
            if lk.kind == kind and lk.a_device in keep:
                keep.add(lk.b_device)
    # spineless meshes (Matrix, rail-only ISLs): the mesh a kept leaf belongs to stands whole
    # from day one (a Matrix is a complete bipartite A x B: a part of it is no Matrix), with
    # the node ports of its leaves reserved for later phases
    mesh = [lk for lk in final.links if lk.kind == "leaf-leaf"]
    mesh_ids: set[str] = set()
    grown = True
    while grown:
        grown = False
        for lk in mesh:
            if lk.id not in mesh_ids and (lk.a_device in keep or lk.b_device in keep):
                mesh_ids.add(lk.id)
                keep |= {lk.a_device, lk.b_device}
                grown = True
    links = tuple(
        lk
        for lk in final.links
        if (lk.a_device in keep and lk.b_device in keep and lk.kind != "leaf-leaf")
        or lk.id in mesh_ids
    )
    link_ids = {lk.id for lk in links}
    segments = tuple(s for s in final.segments if s.link_id in link_ids)
    used: dict[str, set[str]] = {}
    for s in segments:
        for dev, port in ((s.a_device, s.a_port), (s.b_device, s.b_port)):
            used.setdefault(dev, set()).add(port.split("/")[0])
    panels = tuple(_fewer_plates(p, len(used[p.id]), catalog) for p in final.panels if p.id in used)
    on_floor = keep | {p.id for p in panels}
    placements = tuple(p for p in final.placements if p.device in on_floor)
    racks_used = {p.rack for p in placements}
    sizing = dataclasses.replace(
        final.sizing,
        sus=len({s.su for s in final.switches if s.id in keep and s.tier == 1 and s.su >= 0})
        or final.sizing.sus,
        pods=len({s.pod for s in final.switches if s.id in keep and s.pod >= 0}),
        lower_bound_switches=(
            lower_bound if lower_bound is not None else final.sizing.lower_bound_switches
        ),
        notes=(*final.sizing.notes, f"phase {name}: {gpus} of the final {final.gpus} GPUs"),
    )
    return dataclasses.replace(
        final,
        name=name,
        gpus=gpus,
        sizing=sizing,
        nodes=tuple(n for n in final.nodes if n.id in kept_nodes),
        switches=tuple(s for s in final.switches if s.id in keep),
        devices=tuple(d for d in final.devices if d.id in devices),
        links=links,
        racks=tuple(r for r in final.racks if r.id in racks_used),
        placements=placements,
        cables=tuple(c for c in final.cables if c.link_id in link_ids),
        panels=panels,
        segments=segments,
    )


def _fewer_plates(panel: PatchPanel, used: int, catalog: Catalog | None) -> PatchPanel:
    """The panel with the adapter plates its used ports need (the rest are bought later)."""
    per = catalog.cassettes[panel.cassette].ports if catalog is not None else 0
    plates = math.ceil(used / per) if per else panel.cassettes
    return dataclasses.replace(panel, used=used, cassettes=plates)


def subset_problems(before: Design, after: Design) -> list[str]:
    """Why ``before``'s cabling is not a subset of ``after``'s (empty when it is).

    Every link of ``before`` must be a link of ``after`` between the same two ports, with the
    same cable row (id, media, length, labels, physical id, colour), and every device and
    panel of ``before`` must stand in the same rack at the same U.
    """
    out: list[str] = []
    after_by_ends = {ends_of(lk): lk for lk in after.links}
    cab_a = {c.link_id: c for c in after.cables}
    cab_b = {c.link_id: c for c in before.cables}
    for lk in before.links:
        twin = after_by_ends.get(ends_of(lk))
        if twin is None:
            out.append(
                f"link {lk.id} ({lk.a_device} {lk.a_port} - {lk.b_device} {lk.b_port}) of "
                f"{before.name} is not in {after.name}"
            )
            continue
        cb, ca = cab_b.get(lk.id), cab_a.get(twin.id)
        if cb is None:
            continue
        if ca is None or cb != dataclasses.replace(ca, link_id=cb.link_id):
            out.append(
                f"cable {cb.id} of link {lk.id} is not the same cable (id, media, length, "
                f"labels) in {after.name}"
            )
    where = {p.device: (p.rack, p.u) for p in after.placements}
    for p in before.placements:
        if where.get(p.device) != (p.rack, p.u):
            out.append(
                f"{p.device} stands at {p.rack} U{p.u} in {before.name} but not in {after.name}"
            )
    return out


@dataclass(frozen=True)
class PhasePlan:
    """Every phase of a build-out, the final design, and the change from each phase to the next."""

    final: Design
    phases: tuple[Phase, ...]
    steps: tuple[Delta, ...]
    problems: tuple[str, ...]


def plan_phases(
    final: Design,
    phases: Sequence[tuple[str, int]],
    catalog: Catalog,
    lower_bounds: Sequence[int] | None = None,
) -> PhasePlan:
    """Cut each phase from ``final``; check each (``validate.check``) and each step's subset.

    Raises SpecError when the phases do not grow (GPUs must increase phase by phase).
    """
    sizes = [g for _, g in phases]
    if any(b <= a for a, b in itertools.pairwise(sizes)):
        raise SpecError(f"phases: GPUs must grow phase by phase, got {sizes}")
    designs = []
    for i, (name, gpus) in enumerate(phases):
        lb = lower_bounds[i] if lower_bounds is not None else None
        design = final if gpus == final.gpus else cut(final, gpus, name, lb, catalog)
        if gpus == final.gpus and design.name != name:
            design = dataclasses.replace(final, name=name)
        designs.append(Phase(name, gpus, design))
    problems: list[str] = []
    for ph in designs:
        problems += [f"phase {ph.name}: {p}" for p in check(ph.design, catalog)]
    steps = []
    for a, b in itertools.pairwise(designs):
        problems += [f"{a.name} -> {b.name}: {p}" for p in subset_problems(a.design, b.design)]
        steps.append(delta(a.design, b.design, catalog))
    return PhasePlan(final, tuple(designs), tuple(steps), tuple(problems))
