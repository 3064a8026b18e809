"""Media selection: the cheapest part whose reach covers the length, twin-port cage rules."""

from __future__ import annotations

import math

import pytest

from railplan.catalog import Catalog
from railplan.design import Cable, Design
from railplan.errors import InfeasibleError
from railplan.physical import media
from railplan.physical.costers import DesignCoster
from railplan.physical.media import CageEnd, LinkRun
from railplan.validate.cables import check_cables
from tests.conftest import make_spec

# link classes: (speed, a form factor, a ports per cage, b form factor, b ports per cage, parallel)
# a ConnectX-7 flat-top OSFP cage (osfp-rhs) facing a twin-port finned switch cage (osfp)
HGX_TO_TWIN = dict(
    speed_gbps=400, a_form_factor="osfp-rhs", b_form_factor="osfp", b_ports_per_cage=2
)
HGX_TO_TWIN_IB = {**HGX_TO_TWIN, "protocol": "infiniband"}
HGX_TO_TWIN_ETH = {**HGX_TO_TWIN, "protocol": "ethernet"}
QSFP112 = dict(
    speed_gbps=400, a_form_factor="qsfp112", b_form_factor="qsfp112", protocol="ethernet"
)
TWIN_GRID = dict(
    speed_gbps=400,
    a_form_factor="osfp",
    b_form_factor="osfp",
    a_ports_per_cage=2,
    b_ports_per_cage=2,
    protocol="infiniband",
)


def pick(catalog: Catalog, length: float, **cls: object) -> media.MediaChoice:
    return media.select(catalog, length_m=length, **cls)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("cls", "length", "kind", "cable"),
    [
        # InfiniBand NDR: NVIDIA copper to 5 m, then transceivers and MPO fibre (no AEC/AOC)
        (HGX_TO_TWIN_IB, 2.0, "dac", "dac-osfp-800g-2x400g-osfp"),
        (HGX_TO_TWIN_IB, 5.0, "acc", "acc-osfp-800g-2x400g-osfp"),
        (HGX_TO_TWIN_IB, 6.0, "fibre", "fibre-mmf-mpo12-apc"),
        (HGX_TO_TWIN_IB, 20.0, "fibre", "fibre-mmf-mpo12-apc"),
        (HGX_TO_TWIN_IB, 40.0, "fibre", "fibre-mmf-mpo12-apc"),
        # Ethernet: multi-vendor copper, AEC and AOC are allowed
        (HGX_TO_TWIN_ETH, 2.0, "dac", "eth-dac-osfp-800g-2x400g-osfp-rhs"),
        (HGX_TO_TWIN_ETH, 6.0, "aec", "aec-osfp-800g-2x400g-osfp"),
        (HGX_TO_TWIN_ETH, 20.0, "aoc", "aoc-osfp-800g-2x400g-osfp"),
        (QSFP112, 2.0, "dac", "dac-qsfp112-400g"),
        (QSFP112, 5.0, "aec", "aec-qsfp112-400g"),
        (QSFP112, 6.0, "aec", "aec-qsfp112-400g"),
        (QSFP112, 20.0, "aoc", "aoc-qsfp112-400g"),
        (QSFP112, 150.0, "fibre", "fibre-os2-mpo12-apc"),
        (QSFP112, 1000.0, "fibre", "fibre-smf-lc"),
        (TWIN_GRID, 20.0, "fibre", "fibre-mmf-mpo12-apc"),
        (TWIN_GRID, 150.0, "fibre", "fibre-os2-mpo12-apc"),
        (TWIN_GRID, 1000.0, "fibre", "fibre-smf-lc"),
    ],
)
def test_media_ladder_by_length(
    catalog: Catalog, cls: dict[str, object], length: float, kind: str, cable: str
) -> None:
    choice = pick(catalog, length, **cls)
    assert (choice.kind, choice.cable) == (kind, cable)
    assert choice.stocked_length_m >= length


def test_dr4_at_150m_and_fr4_at_1km_use_the_named_optics(catalog: Catalog) -> None:
    dr4 = pick(catalog, 150.0, **TWIN_GRID)
    assert (dr4.transceiver_a, dr4.transceiver_b, dr4.interface) == (
        "osfp-800g-2xdr4",
        "osfp-800g-2xdr4",
        "400g-dr4",
    )
    assert dr4.fibre == "smf" and dr4.stocked_length_m == 150.0
    fr4 = pick(catalog, 1000.0, **QSFP112)
    assert (fr4.transceiver_a, fr4.transceiver_b) == ("qsfp112-400g-fr4", "qsfp112-400g-fr4")
    sr4 = pick(catalog, 40.0, **HGX_TO_TWIN_IB)  # the node end is a, the twin switch cage b
    assert (sr4.transceiver_a, sr4.transceiver_b) == ("osfp-400g-sr4", "osfp-800g-2xsr4")


def test_too_long_for_any_part_names_length_and_class(catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError) as err:
        pick(catalog, 212.0, **HGX_TO_TWIN)
    assert str(err.value) == (
        "no catalog part reaches 212.0 m at 400G osfp-rhs-osfp (2 ports per cage at the b end) "
        "(the longest is 100 m); add a longer-reach optic to catalogs/optics.yaml"
    )
    with pytest.raises(InfeasibleError, match=r"reaches 2500\.0 m at 400G osfp-osfp .*2000 m"):
        pick(catalog, 2500.0, **TWIN_GRID)


def test_a_pair_nothing_connects_says_so(catalog: Catalog) -> None:
    with pytest.raises(
        InfeasibleError, match=r"no catalog part connects 400G osfp-osfp .*any length"
    ):
        pick(catalog, 2.0, speed_gbps=400, a_form_factor="osfp", b_form_factor="osfp",
             b_ports_per_cage=4)  # fmt: skip


def test_rounds_up_to_a_stocked_length(catalog: Catalog) -> None:
    assert pick(catalog, 2.2, **HGX_TO_TWIN_IB).stocked_length_m == 2.5
    assert pick(catalog, 2.0, **HGX_TO_TWIN_IB).stocked_length_m == 2.0
    assert pick(catalog, 2.0000001, **HGX_TO_TWIN_IB).stocked_length_m == 2.0


def test_per_link_cost_shares_twin_parts(catalog: Catalog) -> None:
    dac = pick(catalog, 2.0, **HGX_TO_TWIN_IB)  # one 1:2 splitter serves two links
    part = catalog.cables["dac-osfp-800g-2x400g-osfp"]
    assert dac.cost_usd == pytest.approx(part.price_at(2.0) / 2)
    assert dac.links_per_cable == 2
    sr = pick(catalog, 40.0, **HGX_TO_TWIN_IB)  # half a twin module, a whole single-port one
    t = catalog.transceivers
    cord = catalog.cables["fibre-mmf-mpo12-apc"].price_at(50.0)
    expected = t["osfp-800g-2xsr4"].price_usd.value / 2 + t["osfp-400g-sr4"].price_usd.value
    assert sr.cost_usd == pytest.approx(expected + cord)
    assert sr.power_w == pytest.approx(15 / 2 + 8)


def test_parallel_twin_cages_may_share_one_cable(catalog: Catalog) -> None:
    grid = pick(catalog, 2.0, **TWIN_GRID)  # links of a cage go to different cages
    assert grid.kind == "fibre"
    par = pick(catalog, 2.0, **TWIN_GRID, parallel=True)  # both links between the same cages
    assert (par.kind, par.cable, par.links_per_cable) == ("dac", "dac-osfp-800g-twin", 2)


def test_form_factors_are_honoured(catalog: Catalog) -> None:
    q = pick(catalog, 2.0, speed_gbps=400, a_form_factor="qsfp112", b_form_factor="osfp",
             b_ports_per_cage=2, protocol="infiniband")  # fmt: skip
    assert q.cable == "dac-osfp-800g-2x400g-qsfp112"
    # a finned (IHS) plug never goes into a flat-top (RHS) cage and the other way round
    rhs = pick(catalog, 40.0, **HGX_TO_TWIN_IB)
    assert catalog.transceivers[rhs.transceiver_a].form_factor == "osfp-rhs"
    assert catalog.transceivers[rhs.transceiver_b].form_factor == "osfp"
    # a QSFP56 plug fits the QSFP112 cage of a 200G NIC facing a QSFP-DD 2 x 200G cage
    dd = pick(catalog, 60.0, speed_gbps=200, a_form_factor="qsfp112", b_form_factor="qsfp-dd",
              b_ports_per_cage=2)  # fmt: skip
    assert (dd.transceiver_a, dd.transceiver_b) == ("qsfp56-200g-sr4", "qsfp-dd-400g-sr8-2x200g")
    assert dd.cable == "fibre-mmf-mpo16-upc-2x-mpo12"  # one MPO-16 split to two MPO-12


def test_cost_table_and_steps_agree_with_select(catalog: Catalog) -> None:
    lengths = [1.0, 2.2, 4.5, 6.0, 25.0, 45.0, 90.0, 150.0]
    table = media.cost_table(catalog, lengths_m=lengths, **HGX_TO_TWIN_IB)  # type: ignore[arg-type]
    for length, cost in zip(lengths[:-1], table[:-1], strict=True):
        assert cost == pick(catalog, length, **HGX_TO_TWIN_IB).cost_usd
    assert table[-1] == math.inf
    assert table[:-1] == sorted(table[:-1])
    steps = media.cost_steps(catalog, **HGX_TO_TWIN_IB)  # type: ignore[arg-type]
    assert steps[-1][0] == 100.0  # the longest reach of this class
    for length, cost in zip(lengths[:-1], table[:-1], strict=True):
        assert next(c for upto, c in steps if upto >= length) == cost


def test_bad_inputs_are_refused(catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError, match="not a length"):
        pick(catalog, -1.0, **QSFP112)
    with pytest.raises(InfeasibleError, match="breakout 3 does not fit cages of 1 and 2 ports"):
        pick(catalog, 2.0, **HGX_TO_TWIN, breakout=3)


# -- twin-port cages ---------------------------------------------------------------------------


def fan(lengths: tuple[float, float], fibre: tuple[str, str] = ("", "")) -> list[LinkRun]:
    """Two ConnectX-7 NICs (flat-top OSFP cages) on the two ports of one twin-port cage of an
    NVIDIA InfiniBand switch."""
    return [
        LinkRun(
            f"L{i}",
            400,
            lengths[i],
            CageEnd(f"node{i}", 0, 0, "osfp-rhs", 1, "NVIDIA"),
            CageEnd("leaf", 3, i, "osfp", 2, "NVIDIA"),
            fibre[i],
            "infiniband",
        )
        for i in range(2)
    ]


def test_one_twin_port_transceiver_serves_two_links(catalog: Catalog) -> None:
    got = media.assign_cages(catalog, fan((40.0, 40.0)))
    a, b = got.choices["L0"], got.choices["L1"]
    assert a.transceiver_b == b.transceiver_b == "osfp-800g-2xsr4"
    assert a.transceiver_a == b.transceiver_a == "osfp-400g-sr4"
    twin = catalog.transceivers["osfp-800g-2xsr4"].price_usd.value
    single = catalog.transceivers["osfp-400g-sr4"].price_usd.value
    cords = 2 * catalog.cables["fibre-mmf-mpo12-apc"].price_at(50.0)
    assert got.cost_usd == pytest.approx(twin + 2 * single + cords)  # one twin module, not two


def test_mixed_fibre_types_on_a_twin_cage_are_refused(catalog: Catalog) -> None:
    with pytest.raises(InfeasibleError) as err:
        media.assign_cages(catalog, fan((40.0, 40.0), fibre=("mmf", "smf")))
    assert str(err.value) == (
        "cage 4 of leaf carries links that ask for mmf (L0) and smf (L1); a twin-port module "
        "takes one fibre type, so give both links the same fibre"
    )


def test_asked_fibre_is_used_on_both_links(catalog: Catalog) -> None:
    got = media.assign_cages(catalog, fan((40.0, 40.0), fibre=("smf", "")))
    assert {c.fibre for c in got.choices.values()} == {"smf"}
    assert {c.transceiver_b for c in got.choices.values()} == {"osfp-800g-2xdr4"}


def test_fibres_of_a_twin_module_are_cut_to_the_longer(catalog: Catalog) -> None:
    got = media.assign_cages(catalog, fan((35.0, 45.0)))
    assert [c.stocked_length_m for c in got.choices.values()] == [50.0, 50.0]
    short = media.assign_cages(catalog, fan((12.0, 45.0)))
    assert {c.stocked_length_m for c in short.choices.values()} == {50.0}
    assert "cut to their longest member" in short.notes[0]


def test_the_longest_link_of_a_group_is_named_when_nothing_reaches(catalog: Catalog) -> None:
    with pytest.raises(
        InfeasibleError, match=r"^link L1 \(node1 to leaf\): no catalog part reaches 150\.0 m"
    ):
        media.assign_cages(catalog, fan((20.0, 150.0)))


def test_a_port_used_twice_is_refused(catalog: Catalog) -> None:
    runs = fan((2.0, 2.0))
    runs[1] = LinkRun("L1", 400, 2.0, CageEnd("node1", 0, 0, "osfp-rhs", 1), runs[0].b)
    with pytest.raises(InfeasibleError, match="both use slot 1 of cage 4 of leaf"):
        media.assign_cages(catalog, runs)


def cabled_at_20m(catalog: Catalog) -> tuple[Design, list[Cable]]:
    """A planned 32-GPU QM9700 design and one cable per link from its media at 20 m."""
    from railplan.pipeline.plan import plan

    design = plan(make_spec(32, "dgx-h100", switches=["qm9700"]), catalog)
    got = media.assign_design(design, catalog, {lk.id: 20.0 for lk in design.links})
    cables = [
        Cable(f"C{i}", lk.id, got.choices[lk.id].cable, got.choices[lk.id].transceiver_a,
              got.choices[lk.id].transceiver_b, got.choices[lk.id].stocked_length_m, "", "", "")
        for i, lk in enumerate(design.links)
    ]  # fmt: skip
    return design, cables


def test_check_cables_flags_two_optics_in_one_cage(catalog: Catalog) -> None:
    import dataclasses

    design, cables = cabled_at_20m(catalog)
    sound = dataclasses.replace(design, cables=tuple(cables))
    assert check_cables(sound, catalog) == []
    # DGX twin-port cages carry rails 0 and 1: put a DR4 module on rail 1 only
    first = next(
        i for i, lk in enumerate(design.links) if lk.kind == "node-leaf" and lk.a_port == 1
    )
    c = cables[first]
    cables[first] = dataclasses.replace(
        c,
        media="fibre-smf-mpo12-apc",
        transceiver_a="osfp-rhs-800g-2xdr4",
        transceiver_b="osfp-800g-2xdr4",
    )
    mixed = dataclasses.replace(design, cables=tuple(cables))
    problems = check_cables(mixed, catalog)
    assert any("one module serves the whole cage" in p and "(mmf and smf)" in p for p in problems)


def test_design_assignment_is_deterministic_and_matches_select(catalog: Catalog) -> None:
    from railplan.pipeline.plan import plan

    design = plan(make_spec(256, "hgx-h100-8x400g", switches=["cx864e-n"]), catalog)
    lengths = {lk.id: (2.0 if lk.kind == "node-leaf" else 150.0) for lk in design.links}
    one = media.assign_design(design, catalog, lengths)
    two = media.assign_design(design, catalog, lengths)
    assert one == two
    node_leaf = [
        c
        for lk, c in zip(design.links, one.choices.values(), strict=True)
        if lk.kind == "node-leaf"
    ]
    # an Asterfusion switch takes no NVIDIA-qualified cable: the multi-vendor Ethernet DAC
    assert {c.cable for c in node_leaf} == {"eth-dac-osfp-800g-2x400g-osfp-rhs"}
    assert node_leaf[0].cost_usd == pick(catalog, 2.0, **HGX_TO_TWIN, protocol="ethernet").cost_usd
    coster = DesignCoster(design, catalog)
    links = design.links
    assert coster.key(links[0]) == coster.key(links[1])
    assert coster.cost(coster.key(links[0]), 2.0, links[0]) == node_leaf[0].cost_usd
    assert coster.cost(coster.key(links[0]), 500.0, links[0]) == media.UNREACHABLE_USD


def test_a_stretched_pair_prints_its_two_lengths_apart():
    """The note's example shows two different lengths: to a tenth of a metre, or finer when
    a tenth would print them alike (4,096 GPUs of cx732q-n printed "10.0 m and 10.0 m")."""
    from railplan.physical.media_assign import apart

    assert apart(14.7, 15.1) == ("14.7", "15.1")
    assert apart(9.96, 10.04) == ("9.96", "10.04")
    assert apart(9.996, 10.004) == ("9.996", "10.004")
    assert apart(10.0, 10.0) == ("10.000", "10.000")
