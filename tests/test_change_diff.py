"""railplan diff: two designs that differ by one swapped cable report exactly that swap."""

from __future__ import annotations

import dataclasses
import json

import pytest

from railplan.change.diff import diff
from railplan.design import design_to_json
from railplan.physical.bom import bom
from railplan.pipeline.build import build
from railplan.spec import load_spec
from railplan.validate import check
from tests.conftest import EXAMPLES


@pytest.fixture(scope="module")
def pair(catalog):
    a = build(load_spec(EXAMPLES / "seed001-64gpu.yaml"), catalog).design
    # two node cables on one leaf exchange their leaf ports (and, as installed, their labels)
    leaf = next(s.id for s in a.switches if s.tier == 1)
    x, y = [lk for lk in a.links if lk.kind == "node-leaf" and lk.b_device == leaf][:2]
    links = {
        x.id: dataclasses.replace(x, b_port=y.b_port),
        y.id: dataclasses.replace(y, b_port=x.b_port),
    }
    cab = {c.link_id: c for c in a.cables}
    cables = {
        x.id: dataclasses.replace(cab[x.id], label_b=cab[y.id].label_b),
        y.id: dataclasses.replace(cab[y.id], label_b=cab[x.id].label_b),
    }
    b = dataclasses.replace(
        a,
        name="swapped",
        links=tuple(links.get(lk.id, lk) for lk in a.links),
        cables=tuple(cables.get(c.link_id, c) for c in a.cables),
    )
    assert check(b, catalog) == []
    return a, b, cab[x.id].id, cab[y.id].id


def test_one_swapped_cable_is_reported_exactly(pair, catalog):
    a, b, cx, cy = pair
    d = diff(a, b, catalog, bom(a, catalog), bom(b, catalog))
    assert len(d.swapped) == 1
    assert {d.swapped[0][0].cable, d.swapped[0][1].cable} == {cx, cy}
    assert d.moved == () and d.links_added == () and d.links_removed == ()
    assert d.switches_added == d.switches_removed == d.switches_changed == ()
    assert d.bill == () and d.cost_a_usd == d.cost_b_usd
    # the four ports whose peer changed: two node ports and the two leaf ports
    assert len(d.ports_changed) == 4
    assert d.links_same == len(a.links) - 2
    assert not d.identical


def test_a_design_against_itself_is_identical(pair, catalog):
    a, _, _, _ = pair
    d = diff(a, a, catalog, bom(a, catalog), bom(a, catalog))
    assert d.identical and d.links_same == len(a.links)


def test_diff_cli_table_and_json(pair, cli, tmp_path):
    """A design.json with a cable swapped by hand no longer plans from its own spec, so the
    loader refuses it (design-file safety re-derives the wiring); the swap itself is found by
    the library (``test_one_swapped_cable_is_reported_exactly`` above)."""
    a, b, _cx, _cy = pair
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(design_to_json(a))
    pb.write_text(design_to_json(b))
    r = cli("diff", str(pa), str(pb), "--json")
    assert r.code == 2 and "fails railplan's checks" in r.err
    r = cli("diff", str(pa), str(pa), "--json")
    assert r.code == 0 and json.loads(r.out)["links"]["swapped"] == []
    assert cli("diff", str(pa), str(pa)).code == 0
