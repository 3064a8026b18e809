"""Cabling: every example fully cabled from the floor geometry, media reach, twin-port cages, labels."""

from __future__ import annotations

import dataclasses
import os
import re
from collections import defaultdict
from pathlib import Path

import pytest

from railplan import load_spec, plan
from railplan.errors import InfeasibleError
from railplan.physical import media
from railplan.physical.bom import bom
from railplan.physical.cabling import Position, routed_lengths
from railplan.physical.floor import build_floor
from railplan.pipeline.layout import complete
from railplan.spec import spec_from_dict
from railplan.validate.cables import check_cables

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SPECS = sorted(EXAMPLES.glob("*.yaml"))
#: the 16k three-tier example is cabled here with RAILPLAN_SLOW=1 (.ci/run sets it for this
#: file), as tests/test_testplan.py's BIG examples are; every other example always
SLOW_SPECS = {"h100-16k-3tier"}
FLOOR_SPECS = [
    pytest.param(
        p,
        id=p.stem,
        marks=pytest.mark.skipif(
            p.stem in SLOW_SPECS and os.environ.get("RAILPLAN_SLOW") != "1",
            reason="16k GPUs: RAILPLAN_SLOW=1",
        ),
    )
    for p in SPECS
]


def routed_from_placements(design, spec, catalog):
    """Routed length of every link, recomputed from the floor and the design's placements."""
    floor = build_floor(design, spec.layout, catalog)
    where = {p.device: Position(p.rack, p.u, p.height_u) for p in design.placements}
    return routed_lengths(design, floor, where)


@pytest.mark.parametrize("path", FLOOR_SPECS)
def test_every_example_is_cabled_from_the_floor(catalog, path):
    spec = load_spec(path)
    design, report = complete(plan(spec, catalog), spec, catalog, time_limit_s=0.5)
    cables = {c.link_id: c for c in design.cables}
    assert len(cables) == len(design.links) == len(design.cables)
    assert len({c.id for c in design.cables}) == len(design.cables)
    routed = routed_from_placements(design, spec, catalog)
    ends = media.link_ends(design, catalog)
    # links tied by twin-port cages share one decision, cut at their longest routed length
    runs = [media.LinkRun(lk.id, lk.rate_gbps, routed[lk.id], *ends[lk.id]) for lk in design.links]
    longest: dict[str, float] = {}
    for members in media.components(runs):
        top = max(runs[i].length_m for i in members)
        for i in members:
            longest[runs[i].link_id] = top
    for link_id, cable in cables.items():
        part = catalog.cables[cable.media]
        assert routed[link_id] > 0
        assert cable.length_m >= routed[link_id] - 1e-9
        assert cable.length_m == part.stocked(longest[link_id])  # the stocked length covering it
        assert part.reach_m.value >= cable.length_m
        for t in (cable.transceiver_a, cable.transceiver_b):
            if t:
                assert catalog.transceivers[t].reach_m.value >= cable.length_m
    assert check_cables(design, catalog) == []
    # transceivers counted per cage: one module however many links the cage carries
    modules: dict[tuple[str, int], set[str]] = defaultdict(set)
    for cable in design.cables:
        a, b = ends[cable.link_id]
        for end, t in ((a, cable.transceiver_a), (b, cable.transceiver_b)):
            if t:
                modules[end.key].add(t)
    assert all(len(parts) == 1 for parts in modules.values())
    assert bom(design, catalog).totals.transceivers == len(modules)
    assert report.cables == len(design.cables)


def test_twin_port_cages_share_one_module(catalog):
    spec = spec_from_dict(
        {"cluster": {"gpus": 256, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"]}}
    )
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    ends = media.link_ends(design, catalog)
    per_cage: dict[tuple[str, int], list] = defaultdict(list)
    for cable in design.cables:
        a, b = ends[cable.link_id]
        per_cage[a.key].append((cable.transceiver_a, cable.length_m, cable.media))
        per_cage[b.key].append((cable.transceiver_b, cable.length_m, cable.media))
    twin = [v for v in per_cage.values() if len(v) == 2]
    assert twin, "DGX H100 nodes and QM9700 switches have twin-port cages"
    for (ta, la, ma), (tb, lb, mb) in twin:
        assert ta == tb and ma == mb  # one module (or one twin cable) per cage, one fibre type
        assert la == lb  # matched lengths on a twin-port module
    optics = [c for c in design.cables if c.transceiver_a]
    if optics:  # count modules per cage: fewer modules than optical link ends
        n_modules = bom(design, catalog).totals.transceivers
        assert n_modules < 2 * len(optics)


def test_mixed_optics_on_one_twin_cage_are_refused(catalog):
    spec = spec_from_dict(
        {"cluster": {"gpus": 256, "node": "dgx-h100"}, "fabric": {"switches": ["qm9700"]}}
    )
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    ends = media.link_ends(design, catalog)
    by_cage: dict[tuple[str, int], list[int]] = defaultdict(list)
    for i, cable in enumerate(design.cables):
        if cable.transceiver_b:
            by_cage[ends[cable.link_id][1].key].append(i)
    pair = next(v for v in by_cage.values() if len(v) == 2)
    cables = list(design.cables)
    first = cables[pair[0]]
    other = next(
        t.id
        for t in catalog.transceivers.values()
        if t.form_factor == "osfp"
        and t.ports == 2
        and t.port_speed_gbps == 400
        and t.id != first.transceiver_b
        and catalog.transceivers[first.transceiver_b].fibre != t.fibre
    )
    cables[pair[0]] = dataclasses.replace(first, transceiver_b=other)
    problems = check_cables(dataclasses.replace(design, cables=tuple(cables)), catalog)
    assert any("one module serves the whole cage" in p for p in problems)


def test_a_cable_too_long_for_any_part_names_link_and_length(catalog):
    # compute row 1 and a network row 2; the only tray between them detours 3 km away
    points = [
        {"id": "a", "x_m": 0.0, "y_m": 0.6},
        {"id": "b", "x_m": 3000.0, "y_m": 0.6},
        {"id": "c", "x_m": 3000.0, "y_m": 3.0},
        {"id": "d", "x_m": 0.0, "y_m": 3.0},
    ]
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 16, "node": "hgx-h100-8x400g"},
            "fabric": {"topology": "rail-only", "switches": ["cx732q-n"]},
            "layout": {
                "nodes_per_rack": 2,
                "network_racks": "network-row",
                "trays": {
                    "routing": "graph",
                    "points": points,
                    "segments": [["a", "b"], ["b", "c"], ["c", "d"]],
                },
            },
        }
    )
    with pytest.raises(InfeasibleError) as err:
        complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    message = str(err.value)
    assert re.search(r"link NL\d{6} \(node000\d to p0-rail-all\)", message)
    assert re.search(r"reaches 60\d\d\.\d m", message)  # ~6 km routed
    assert "add a longer-reach optic" in message


def test_labels_colours_and_technician_order(catalog):
    spec = load_spec(EXAMPLES / "h100-1k.yaml")
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    label = re.compile(r"^R\d{4}-U\d{2}-(N\d+|P0-LF-SU\d+-R\d+|P0-SP-\d+)-(nic\d+|P\d+(/\d)?)$")
    assert all(label.match(c.label_a) and label.match(c.label_b) for c in design.cables)
    links = {lk.id: lk for lk in design.links}
    tia = ["blue", "orange", "green", "brown", "slate", "white", "red", "black"]
    for cable in design.cables:
        lk = links[cable.link_id]
        if lk.kind == "node-leaf":
            assert cable.colour == tia[lk.rail]
    # cable ids run rack by rack: the a-end rack never goes back
    where = {p.device: p.rack for p in design.placements}
    order = {r.id: (r.row, r.position) for r in design.racks}
    seq = [order[where[links[c.link_id].a_device]] for c in design.cables]
    assert seq == sorted(seq)
    assert [c.id for c in design.cables] == sorted(c.id for c in design.cables)


def test_label_template_is_configurable(catalog):
    spec = spec_from_dict(
        {
            "cluster": {"gpus": 16, "node": "hgx-h100-8x400g"},
            "fabric": {"topology": "rail-only", "switches": ["cx732q-n"]},
            "layout": {"nodes_per_rack": 2, "label_template": "{cable}:{rack}/{u}/{device}.{port}"},
        }
    )
    design, _ = complete(plan(spec, catalog), spec, catalog, time_limit_s=1)
    first = design.cables[0]
    assert first.label_a == f"{first.id}:R0101/10/N2.nic0"
    assert first.label_b.startswith(f"{first.id}:R0102/40/P0-RL-ALL.P")  # p0-rail-all
