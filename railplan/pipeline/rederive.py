"""A loaded design.json re-derived, not trusted: its wiring planned again from its own spec.

A design.json carries the spec it was planned from. Everything the planner derives from that
spec (topology family, GPUs, planes, node shape, sizing, routing, nodes, switches, links,
attached devices) is built again here by the same closed-form generator with the switch model
of each tier the file names (which the spec must allow), and compared with the file field by
field; the floor (racks, the compute rack of each node) is laid out again the same way. Any
disagreement is refused with the JSON path of the first differing value, so a file whose
sizing, rails, family or spec were edited can no longer pass for what railplan wrote.

What the site may own (switch placement, cable labels and media, lengths) is judged by
``railplan.validate.check`` instead, plus the rule that one physical cable starts at one device.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from railplan.catalog import Catalog, SwitchModel
from railplan.design import Design, Device, Node
from railplan.errors import RailplanError
from railplan.identifiers import shorten
from railplan.spec import Spec, spec_from_dict
from railplan.topology import GENERATORS
from railplan.topology.shape import check_capacity, resolve_shape
from railplan.topology.tiers import TierModels, tier_shortlists, tier_speeds

#: at most this many disagreements are listed
MAX_LISTED = 10
_TIER_OF_ROLE = {"leaf": "leaf", "tor": "leaf", "leaf-a": "leaf", "leaf-b": "leaf", "rail": "leaf"}
#: the design's fields the generator derives from the spec, in the order they are compared
_DERIVED = (
    "topology",
    "gpus",
    "planes",
    "shape",
    "sizing",
    "routing",
    "nodes",
    "devices",
    "switches",
    "links",
)


def _show(value: Any) -> str:
    return shorten(repr(value), 80)


def _differences(path: str, got: Any, want: Any, out: list[str]) -> None:
    """Append 'path: file has X, its spec gives Y' for the first differences found."""
    if len(out) >= MAX_LISTED or got == want:
        return
    if dataclasses.is_dataclass(got) and type(got) is type(want):
        for f in dataclasses.fields(got):
            if f.compare:
                _differences(f"{path}.{f.name}", getattr(got, f.name), getattr(want, f.name), out)
        return
    if isinstance(got, tuple) and isinstance(want, tuple):
        if len(got) != len(want):
            out.append(f"{path}: {len(got):,} entries, its spec gives {len(want):,}")
            return
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            _differences(f"{path}[{i}]", a, b, out)
            if len(out) >= MAX_LISTED:
                return
        return
    out.append(f"{path}: {_show(got)} in the file, its spec gives {_show(want)}")


def _tier_models(design: Design, catalog: Catalog) -> tuple[dict[str, SwitchModel], list[str]]:
    """The switch model of each tier the design uses; a tier of two models is a problem."""
    models: dict[str, set[str]] = {}
    for sw in design.switches:
        models.setdefault(_TIER_OF_ROLE.get(sw.role, sw.role), set()).add(sw.model)
    problems, out = [], {}
    for tier, ids in sorted(models.items()):
        if len(ids) > 1:
            problems.append(
                f"switches: the {tier} tier mixes {', '.join(sorted(ids))}; railplan plans "
                "one model per tier"
            )
            continue
        (model,) = ids
        if model not in catalog.switches:
            problems.append(f"switches: model {model} is not in the catalog")
            continue
        out[tier] = catalog.switch(model)
    return out, problems


def replanned(design: Design, spec: Spec, catalog: Catalog) -> tuple[Design | None, list[str]]:
    """The design its spec gives with the file's switch model per tier, or the reasons not."""
    family = design.topology
    if spec.fabric.topology != family:
        return None, [f"topology: {family!r} in the file, its spec plans {spec.fabric.topology!r}"]
    if spec.name != design.name:
        return None, [f"name: {design.name!r} in the file, its spec names {spec.name!r}"]
    used, problems = _tier_models(design, catalog)
    if problems:
        return None, problems
    if "leaf" not in used:
        return None, ["switches: the design has no leaf tier"]
    try:
        shape = resolve_shape(spec, catalog)
        speeds = tier_speeds(spec, shape)
        allowed = tier_shortlists(spec, catalog, speeds, family)
        for tier, model in sorted(used.items()):
            ids = [m.id for m in allowed.get(tier, [])]
            if model.id not in ids:
                problems.append(
                    f"switches: the {tier} tier is {model.id}, which its spec does not allow "
                    f"there ({', '.join(ids) or 'none'})"
                )
        if problems:
            return None, problems
        leaf = used["leaf"]
        spine = used.get("spine", leaf)
        tiers = TierModels(leaf, spine, used.get("core", spine))
        gbps = [speeds.leaf_down, speeds.leaf_up, speeds.spine_up]
        check_capacity(spec, shape, [tiers.leaf, tiers.spine, tiers.core], gbps)
        again = GENERATORS[family](spec, shape, tiers.leaf if tiers.uniform else tiers)
    except RailplanError as exc:
        return None, [f"spec: it does not plan this design ({shorten(str(exc), 200)})"]
    by_role = dict(sorted({sw.role: sw.model for sw in again.switches}.items()))
    if len(set(by_role.values())) > 1:  # the note switch choice adds (solve/switch_choice.py)
        note = ", ".join(f"{role} {m}" for role, m in by_role.items())
        notes = (*again.sizing.notes, f"switch models by tier: {note}")
        if design.sizing.notes == notes:
            again = dataclasses.replace(
                again, sizing=dataclasses.replace(again.sizing, notes=notes)
            )
    return again, []


def _physical(design: Design, spec: Spec, catalog: Catalog) -> list[str]:
    """Racks laid out again from the spec; each node's placement in its compute rack; one
    physical cable starting at one device."""
    problems: list[str] = []
    if design.racks:
        from railplan.physical.floor import build_floor
        from railplan.physical.plant_panels import required_panel_units

        try:
            floor = build_floor(design, spec.layout, catalog, required_panel_units(design, catalog))
        except RailplanError as exc:
            return [f"racks: its spec does not lay them out ({shorten(str(exc), 200)})"]
        _differences("racks", design.racks, floor.racks, problems)
        where = {p.device: p.rack for p in design.placements}
        held: tuple[tuple[str, Sequence[Node | Device]], ...] = (
            ("nodes", design.nodes),
            ("devices", design.devices),
        )
        for key, rows in held:
            for i, row in enumerate(rows):
                want = floor.compute_racks[row.rack] if row.rack < len(floor.compute_racks) else ""
                if row.id in where and where[row.id] != want:
                    problems.append(
                        f"{key}[{i}].rack: {row.id} stands in {where[row.id]}, its rack index "
                        f"{row.rack} is {want or 'no compute rack'}"
                    )
                    if len(problems) >= MAX_LISTED:
                        return problems
    ends: dict[str, tuple[int, set[str], set[str], set[str]]] = {}
    links = {lk.id: lk for lk in design.links} if design.cables else {}
    for i, cable in enumerate(design.cables):
        link = links.get(cable.link_id)
        if not cable.physical or link is None:
            continue
        _, a_ends, b_ends, media = ends.setdefault(cable.physical, (i, set(), set(), set()))
        a_ends.add(link.a_device)
        b_ends.add(link.b_device)
        media.add(cable.media)
    for physical, (i, a_ends, b_ends, media) in ends.items():
        if (len(a_ends) > 1 and len(b_ends) > 1) or len(media) > 1:
            problems.append(
                f"cables[{i}].physical: {physical} joins {', '.join(sorted(a_ends))} to "
                f"{', '.join(sorted(b_ends))} ({', '.join(sorted(media))}); the legs of one "
                "physical cable share a device at one end and one part"
            )
            if len(problems) >= MAX_LISTED:
                break
    return problems


def rederivation_problems(design: Design, catalog: Catalog) -> list[str]:
    """Where the file disagrees with what its own spec plans (JSON paths), else []."""
    if not design.spec:
        return ["spec: missing; a design.json carries the spec it was planned from"]
    try:
        spec = spec_from_dict(design.spec, "spec")
    except RailplanError as exc:
        return str(exc).splitlines()
    again, problems = replanned(design, spec, catalog)
    if again is None:
        return problems
    for name in _DERIVED:
        _differences(name, getattr(design, name), getattr(again, name), problems)
    if problems:
        return problems
    return _physical(design, spec, catalog)
