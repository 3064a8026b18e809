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
    loader refuses it (design-file safety re-derives the wiring); the CLI's second design is
    then the fabric as captured (the tests below)."""
    a, b, _cx, _cy = pair
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(design_to_json(a))
    pb.write_text(design_to_json(b))
    r = cli("diff", str(pa), str(pb), "--json")
    assert r.code == 2 and "fails railplan's checks" in r.err
    r = cli("diff", str(pa), str(pa), "--json")
    assert r.code == 0 and json.loads(r.out)["links"]["swapped"] == []
    assert cli("diff", str(pa), str(pa)).code == 0


# -- B = A as a capture shows it cabled -----------------------------------------------------------


def _swap_json(cli, design_path, *capture):
    r = cli("diff", str(design_path), *capture, "--json")
    assert r.code == 1, r.err
    return json.loads(r.out)


def _exactly_one_swap(out, design, cable_x, cable_y):
    links = out["links"]
    assert links["moved"] == [] and links["added"] == [] and links["removed"] == []
    assert out["switches"] == {"added": [], "removed": [], "changed": []}
    assert out["cables"]["changed"] == [] and out["bill"]["compared"] is False
    assert len(links["swapped"]) == 1
    cab = {c.id: c for c in design.cables}
    got = {m["cable"]: m for m in links["swapped"][0]}
    assert set(got) == {cable_x, cable_y}
    for cid, m in got.items():  # each named with the labels its sheets print
        assert (m["label_a"], m["label_b"]) == (cab[cid].label_a, cab[cid].label_b)
    assert got[cable_x]["from"] == got[cable_y]["to"] and got[cable_x]["to"] == got[cable_y]["from"]
    assert len(out["ports"]["changed"]) == 4
    assert links["same"] == len(design.links) - 2


def test_diff_cli_plan_against_ibnetdiscover_names_the_swapped_cable(cli):
    """examples/field/ibnetdiscover.txt is the IB example with two node cables crossed on one
    leaf: diff names exactly those two cables (the swap the as-built check reports)."""
    from railplan.design import design_from_json

    path = EXAMPLES / "field" / "ib-design.json"
    design = design_from_json(path.read_text(encoding="utf-8"))
    capture = ("--ibnetdiscover", str(EXAMPLES / "field" / "ibnetdiscover.txt"))
    check = cli("asbuilt", str(path), *capture, "--json")
    swaps = [f for f in json.loads(check.out)["findings"] if f["kind"] == "swap"]
    assert len(swaps) == 1
    cx, cy = swaps[0]["labels"]
    _exactly_one_swap(_swap_json(cli, path, *capture), design, cx, cy)


def test_diff_cli_plan_against_lldp_with_one_swap(cli, tmp_path):
    """An LLDP capture of the 2-node example with two cables exchanged at the switch: exactly
    that pair, by id and labels; the healthy capture is the same fabric (exit 0)."""
    from railplan.design import design_from_json
    from railplan.field.names import Endpoint
    from tests import test_asbuilt as asb

    path = EXAMPLES / "field" / "design.json"
    design = design_from_json(path.read_text(encoding="utf-8"))
    names = asb.site_name_map(design, tmp_path / "names.yaml")
    edges = asb.planned_edges(design)
    i, j = 2, 5  # node0001 and node0002 cables of two rails, both on the rail switch
    (a0, b0, r0), (a1, b1, r1) = edges[i], edges[j]
    edges[i], edges[j] = (a0, Endpoint(b1.device, b1.port), r0), (a1, b0, r1)
    asb.render_lldp(design, edges, tmp_path / "lldp")
    link_cable = {c.link_id: c.id for c in design.cables}
    cx, cy = link_cable[design.links[i].id], link_cable[design.links[j].id]
    out = _swap_json(cli, path, "--lldp", str(tmp_path / "lldp"), "--names", str(names))
    _exactly_one_swap(out, design, cx, cy)
    r = cli("diff", str(path), "--lldp", str(tmp_path / "lldp"), "--names", str(names))
    assert r.code == 1 and "1 swapped" in r.out and cx in r.out and cy in r.out
    healthy = tmp_path / "healthy"
    asb.render_lldp(design, asb.planned_edges(design), healthy)
    r = cli("diff", str(path), "--lldp", str(healthy), "--names", str(names))
    assert r.code == 0 and "same fabric" in r.out


def test_diff_cli_moved_cable_and_bad_arguments(cli, tmp_path):
    """A cable re-plugged into a free switch port is one moved cable, not a swap; design B and
    a capture together (or neither) is refused with exit 2."""
    from railplan.design import design_from_json
    from tests import test_asbuilt as asb

    path = EXAMPLES / "field" / "design.json"
    design = design_from_json(path.read_text(encoding="utf-8"))
    names = asb.site_name_map(design, tmp_path / "names.yaml")
    edges = asb.planned_edges(design)
    a0, b0, r0 = edges[0]
    edges[0] = (a0, asb.free_port(design, b0.device), r0)
    asb.render_lldp(design, edges, tmp_path / "lldp")
    out = _swap_json(cli, path, "--lldp", str(tmp_path / "lldp"), "--names", str(names))
    cable = next(c for c in design.cables if c.link_id == design.links[0].id)
    assert out["links"]["swapped"] == [] and out["links"]["added"] == []
    assert [m["cable"] for m in out["links"]["moved"]] == [cable.id]
    assert out["links"]["moved"][0]["label_b"] == cable.label_b
    for args in ((str(path),), (str(path), str(path), "--lldp", str(tmp_path / "lldp"))):
        r = cli("diff", *args)
        assert r.code == 2 and "capture" in r.err and "Traceback" not in r.err


def test_diff_cli_missing_cable_is_a_removed_link(cli, tmp_path):
    """A planned cable neither end of which the capture shows (both hosts and the switch
    report): that link is removed in the as-built design; nothing else differs."""
    from railplan.design import design_from_json
    from tests import test_asbuilt as asb

    path = EXAMPLES / "field" / "design.json"
    design = design_from_json(path.read_text(encoding="utf-8"))
    names = asb.site_name_map(design, tmp_path / "names.yaml")
    edges = asb.planned_edges(design)
    del edges[4]
    asb.render_lldp(design, edges, tmp_path / "lldp")
    out = _swap_json(cli, path, "--lldp", str(tmp_path / "lldp"), "--names", str(names))
    assert out["links"]["removed"] == [design.links[4].id]
    assert out["links"]["moved"] == out["links"]["swapped"] == out["links"]["added"] == []
    assert out["links"]["same"] == len(design.links) - 1
