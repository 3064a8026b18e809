"""`bill.media: copper-in-rack`: copper (DAC/ACC) only between two ends in one rack, optics and
fibre for every link between racks; counts checked on the 4-SU DGX SuperPOD example, where the
policy sits between the cheapest bill and NVIDIA's all-fibre one."""

from __future__ import annotations

from collections import Counter
from functools import cache

import pytest

from railplan.catalog import load_catalog
from railplan.physical.media_policy import OPTICS, optics_demand
from railplan.pipeline.build import Build, build
from railplan.spec.load import load_spec
from tests.conftest import EXAMPLES

SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"


@cache
def built(policy: str) -> Build:
    return build(load_spec(SUPERPOD, [f"bill.media={policy}"]), load_catalog())


def _racks(b: Build) -> dict[str, str]:
    return {p.device: p.rack for p in b.design.placements}


def _split(b: Build) -> tuple[Counter[str], Counter[str]]:
    """(media kind of in-rack links, media kind of links between racks), by link."""
    cat, rack = load_catalog(), _racks(b)
    links = {link.id: link for link in b.design.links}
    inside: Counter[str] = Counter()
    between: Counter[str] = Counter()
    for c in b.design.cables:
        link = links[c.link_id]
        part = cat.cables.get(c.media)
        kind = "plant" if part is None else ("optical" if part.optical else "copper")
        same = rack[link.a_device] == rack[link.b_device]
        (inside if same else between)[kind] += 1
    return inside, between


def test_copper_stays_inside_racks_and_every_link_between_racks_is_fibre() -> None:
    inside, between = _split(built("copper-in-rack"))
    assert "copper" not in between and sum(between.values()) > 0
    # the 4-SU hall: 256 links run leaf to node inside a rack, all on twin-port copper
    assert inside == Counter({"copper": 256})
    # and the cheapest bill also runs copper between adjacent racks, which this policy refuses
    cheap_inside, cheap_between = _split(built("cheapest"))
    assert cheap_inside == inside and cheap_between["copper"] > 0


def test_the_bill_counts_lie_between_the_cheapest_and_the_all_fibre_bill() -> None:
    bills = {p: built(p).bom for p in ("cheapest", "copper-in-rack", "fibre")}
    assert bills["copper-in-rack"] is not None
    counts = {
        p: Counter({k: b.count(k) for k in ("cable", "transceiver", "fibre") if b.count(k)})
        for p, b in bills.items()
        if b is not None
    }
    # measured on the 4-SU example: copper 256 -> 128 twin-port cables (256 links), the
    # other 256 links that cheapest ran on copper between racks get two modules' worth of
    # optics each side (1,536 -> 1,792 modules) and fibre (1,532 -> 1,788 cords)
    assert counts["cheapest"] == Counter({"cable": 256, "transceiver": 1536, "fibre": 1532})
    assert counts["copper-in-rack"] == Counter({"cable": 128, "transceiver": 1792, "fibre": 1788})
    assert counts["fibre"] == Counter({"transceiver": 2048, "fibre": 2044})
    cost = {p: b.totals.cost_usd for p, b in bills.items() if b is not None}
    assert cost["cheapest"] < cost["copper-in-rack"] < cost["fibre"]


def test_optics_demand_reads_the_racks_of_both_ends() -> None:
    class P:
        def __init__(self, rack: str) -> None:
            self.rack = rack

    class L:
        def __init__(self, i: str, a: str, b: str) -> None:
            self.id, self.a_device, self.b_device = i, a, b

    where = {"n1": P("r1"), "s1": P("r1"), "s2": P("r2")}
    links = [L("in", "n1", "s1"), L("out", "n1", "s2")]
    assert optics_demand("copper-in-rack", links, where) == {"out": OPTICS}
    assert optics_demand("cheapest", links, where) == optics_demand("fibre", links, where) == {}


def test_an_unknown_policy_names_the_three() -> None:
    from railplan.errors import SpecError
    from railplan.physical.media_policy import catalog_for

    with pytest.raises(SpecError, match="cheapest, fibre, copper-in-rack"):
        catalog_for(load_catalog(), "copper-only")
