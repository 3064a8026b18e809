"""``build_cables`` over link columns gives what it gave when it looked each link up by id and
sorted and coloured link by link: that version is kept here as the oracle, run on bundled
designs (point-to-point media, twin-port DACs and splitters, the fibre plant, a template that
reads the cable) and on one whose link ids repeat."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from railplan import load_spec, plan
from railplan.catalog import Catalog, load_catalog
from railplan.design import Cable, Design, Link
from railplan.design.link_table import LinkTable, link_table
from railplan.physical import media
from railplan.physical.cabling import (
    _CABLE,
    _STOCKED,
    _TRANSCEIVER_A,
    _TRANSCEIVER_B,
    Cabling,
    Position,
    _numbering,
    _rendered_labels,
    _retry_notes,
    build_cables,
    positions,
    routed_lengths,
)
from railplan.physical.floor import Floor, build_floor
from railplan.physical.labels import PortNames, end_labeller, link_colours, short_names
from railplan.physical.media_policy import OPTICS, optics_demand
from railplan.physical.physical_ids import direct_ids
from railplan.physical.plant import PlantReachError, PlantResult, build_plant, shift_ids
from railplan.physical.plant_panels import required_panel_units
from railplan.solve.placement import naive_placement
from railplan.spec import Spec, spec_from_dict
from railplan.spec.labels import parse_label_template
from railplan.topology.shape import rack_scale_spec
from tests.conftest import make_spec
from tests.test_plant import PLANT_SPEC

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def sorted_order(design: Design, where: Mapping[str, Position], floor: Floor) -> list[Link]:
    rack = floor.rack_by_id
    spot = {}
    for dev, p in where.items():
        r = rack[p.rack]
        spot[dev] = (r.row, r.position, -p.u)
    return sorted(design.links, key=lambda lk: (spot[lk.a_device], lk.a_device, lk.a_port))


def media_and_plant_walk(design, floor, catalog, where, routed, order, table, optics):
    """``_media_and_plant`` as it was: direct ids looked up link by link."""
    fibre: dict[str, str] = dict(optics or {})
    direct: set[str] = set()
    planned: set[str] | None = None
    limit = len(design.links) * 4 + 10
    while True:
        assignment = media.assign_design(design, catalog, routed, fibre, direct)
        if planned is None:
            planned = {k for k, c in assignment.choices.items() if c.kind == "plant"}
        try:
            plant = build_plant(
                design, floor, catalog, where, assignment.choices, order, _numbering(limit)
            )
        except PlantReachError as exc:
            if exc.fibre == "mmf" and any(fibre.get(x, "") in ("", OPTICS) for x in exc.links):
                fibre.update({link: "smf" for link in exc.links})
            elif any(link not in direct for link in exc.links):
                direct.update(exc.links)
            else:
                raise
            continue
        break
    counter = iter(range(1, limit))
    phys, legs, cables = direct_ids(
        catalog, order, table, assignment.choices, lambda: f"P{next(counter):05d}"
    )
    plant = shift_ids(plant, cables)
    retried = {k: v for k, v in fibre.items() if v == "smf"}
    notes = _retry_notes(retried, direct, planned, assignment.choices)
    if notes:
        plant = dataclasses.replace(plant, notes=(*plant.notes, *notes))
    return assignment, (phys, legs), plant


def build_cables_walk(
    design, floor, catalog, where, lengths=None, media_policy="cheapest"
) -> Cabling:
    """``build_cables`` as it was: the links sorted by a Python key, looked up by id."""
    routed = dict(lengths) if lengths is not None else routed_lengths(design, floor, where)
    order = sorted_order(design, where, floor)
    table: LinkTable = link_table(design, catalog)
    optics = optics_demand(media_policy, design.links, where)
    assignment, (phys, legs), plant = media_and_plant_walk(
        design, floor, catalog, where, routed, order, table, optics
    )
    plant_result: PlantResult = plant
    names = short_names(design)
    switches = design.switch_by_id()
    template = parse_label_template(floor.layout.label_template)
    port_of = PortNames(design, switches)
    ids = [lk.id for lk in order]
    chosen = [assignment.choices[i] for i in ids]
    media_of = list(map(_CABLE, chosen))
    length_of = list(map(float, map(_STOCKED, chosen)))
    at = dict(zip(ids, range(len(ids)), strict=True)) if plant_result.cables else {}
    for link_id, (media_id, length, ph, leg) in plant_result.cables.items():
        i = at[link_id]
        media_of[i], length_of[i], phys[i], legs[i] = media_id, length, ph, leg
    end_labels = end_labeller(template, names, where, port_of)
    if end_labels is not None:
        rows = np.array([table.row[i] for i in ids], np.int64)
        label_a = end_labels.columns(table.devices, table.a.device[rows], table.a.port[rows])
        label_b = end_labels.columns(table.devices, table.b.device[rows], table.b.port[rows])
    else:
        label_a, label_b = _rendered_labels(template, order, where, names, port_of)
    cables = tuple(
        map(
            Cable,
            [f"C{n:05d}" for n in range(1, len(order) + 1)],
            ids,
            media_of,
            map(_TRANSCEIVER_A, chosen),
            map(_TRANSCEIVER_B, chosen),
            length_of,
            label_a,
            label_b,
            link_colours(order, switches, floor.layout.colour_by),
            phys,
            legs,
        )
    )
    return Cabling(
        cables=cables,
        notes=assignment.notes + plant_result.notes,
        cost_usd=assignment.cost_usd,
        power_w=assignment.power_w,
        routed_m=routed,
        panels=plant_result.panels,
        panel_placements=plant_result.placements,
        segments=plant_result.segments,
    )


def laid(spec: Spec, catalog: Catalog) -> tuple[Design, Floor, dict[str, Position]]:
    """A planned design, its floor and first-fit switch places (``complete`` before cabling)."""
    design = plan(spec, catalog)
    spec = rack_scale_spec(spec, catalog)
    floor = build_floor(design, spec.layout, catalog, required_panel_units(design, catalog))
    placed = naive_placement(design, floor, catalog)
    return design, floor, positions(design, floor, catalog, placed.rack, placed.u)


@cache
def spec_of(name: str) -> Spec:
    if name == "plant":
        return make_spec(
            int(PLANT_SPEC["gpus"]),  # type: ignore[call-overload]
            str(PLANT_SPEC["node"]),
            topology=PLANT_SPEC["topology"],
            switches=PLANT_SPEC["switches"],
        )
    if name == "cable-template":
        return spec_from_dict(
            {
                "cluster": {"gpus": 16, "node": "hgx-h100-8x400g"},
                "fabric": {"topology": "rail-only", "switches": ["cx732q-n"]},
                "layout": {"nodes_per_rack": 2, "label_template": "{cable}:{rack}/{device}.{port}"},
            }
        )
    return load_spec(EXAMPLES / f"{name}.yaml")


NAMES = (
    "seed001-64gpu",
    "basepod-8node",
    "seed003-matrix",
    "layout-64gpu-tray-graph",
    "gb200-nvl72-576",
    "plant",
    "cable-template",
)


@pytest.mark.parametrize("name", NAMES)
def test_build_cables_is_the_walk(name: str) -> None:
    catalog = load_catalog()
    design, floor, where = laid(spec_of(name), catalog)
    policy = spec_of(name).bill.media
    got = build_cables(design, floor, catalog, where, None, policy)
    assert got == build_cables_walk(design, floor, catalog, where, None, policy)
    assert [c.id for c in got.cables][:2] == ["C00001", "C00002"]


def outcome(f: Any, *args: Any) -> object:
    try:
        return f(*args)
    except Exception as exc:  # the same error either way
        return (type(exc), exc.args)


@pytest.mark.parametrize("name", ["seed001-64gpu", "plant"])
def test_build_cables_with_repeated_link_ids_is_the_walk(name: str) -> None:
    """Ids that repeat (a broken design.json) are looked up as the walk looked them up."""
    catalog = load_catalog()
    design, floor, where = laid(spec_of(name), catalog)
    links = list(design.links)
    for i in range(1, len(links), 7):
        links[i] = dataclasses.replace(links[i], id=links[i - 1].id)
    broken = dataclasses.replace(design, links=tuple(links))
    got = outcome(build_cables, broken, floor, catalog, where)
    assert got == outcome(build_cables_walk, broken, floor, catalog, where)
