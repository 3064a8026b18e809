"""Link quality: the plan's step per fabric kind, the parsers on real formats, and grade naming
the cable of a port whose BER or error counters fail."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from railplan.design import Design
from railplan.field.common import ParseError
from railplan.field.grade import grade
from railplan.field.names import NameMap
from railplan.field.parse_linkq import (
    parse_ethtool_stats_file,
    parse_fec_stats_file,
    parse_net_dump_ext,
)
from railplan.testplan import PlanTest, expectations
from railplan.testplan.link_quality import (
    BRINGUP,
    ETH_PRE_FEC_BER_LIMIT,
    IB_MIN_UPTIME_S,
    soak_seconds,
)
from tests.test_testplan import cabled, example_params, example_plan

LINKQ = Path(__file__).parent / "fixtures" / "loop" / "linkq"
HEADER = (
    "Ty : # : #IB : GUID : LID : Sta : PhysSta : LWA : LSA : Conn LID (#) : FEC mode : RTR : "
    "Raw BER : Effective BER : Symbol BER : Symbol Err : Effective Err : Node Desc"
)


def dump_row(kind: str, desc: str, port: int, eff: str = "1.5e-254", sym: str = "1.5e-254",
             sym_err: int = 0, guid: str = "0x1") -> str:  # fmt: skip
    """One port line in ibdiagnet2.net_dump_ext's layout (see the fixtures' README)."""
    return (f"{kind} : {port} : {port} : {guid} : 5 (0x5) : ACT : LINK_UP : 4x : 100 : "
            f"6 (0x6) : RS : NO-RTR : 2e-08 : {eff} : {sym} : {sym_err} : 0 : \"{desc}\"")  # fmt: skip


def net_dump_ext(design: Design, bad: dict[tuple[str, int], dict[str, object]]) -> str:
    """Both ends of every cable of ``design``: CA rows as ``node mlx5_k`` port 1, switch rows as
    ``MF0;<switch>:MQM9700/U1`` with the switch's port number; ``bad`` overrides fields."""
    lines = [HEADER]
    switches = {s.id for s in design.switches}
    for lk in design.links:
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            over = bad.get((dev, port), {})
            if dev in switches:
                row = dump_row("SW", f"MF0;{dev}:MQM9700/U1", port + 1, **over)  # type: ignore[arg-type]
            else:
                row = dump_row("CA", f"{dev} mlx5_{port}", 1, **over)  # type: ignore[arg-type]
            lines.append(row)
    return "\n".join(lines) + "\n"


# -- the plan --------------------------------------------------------------------------------------


def test_soak_is_three_over_ber_bits_at_line_rate_rounded_to_a_minute() -> None:
    # 3 / 1e-12 = 3e12 bits: 7.5 s at 400 Gb/s -> 60 s; 120 s at 25 Gb/s
    assert soak_seconds(1e-12, 400) == 60
    assert soak_seconds(1e-12, 25) == 120
    assert soak_seconds(1e-14, 400) == 60 * math.ceil(3e14 / 400e9 / 60)


@pytest.mark.parametrize("name", example_params())
def test_every_plan_has_a_link_quality_step_for_its_fabric(name: str) -> None:
    plan = example_plan(name)
    keys = [s.key for s in plan.sections]
    assert keys.index("linkq") < keys.index("rdma")  # start before the soak
    tests = plan.section("linkq").tests
    design = cabled(name)
    for t in tests:
        metrics = {c.metric: c for c in t.checks}
        soak = metrics["lq_soak_s"].expected
        if plan.protocol == "infiniband":  # 125 minutes up before BER is judged
            assert soak == IB_MIN_UPTIME_S == 7500
        else:
            assert soak == soak_seconds(1e-12, plan.line_rate_gbps)
        assert metrics["lq_ports_with_errors"].threshold == 0
    if plan.protocol == "infiniband":
        (t,) = tests
        assert t.id == "LQ-FABRIC"
        assert "--pc --reset_phy_info" in t.command[0] and "--get_phy_info" in t.command[1]
        assert "ibqueryerrors" in t.command[2]
        targets = {c.metric: c.target for c in t.checks}
        assert targets["lq_ports_over_ber"] == 1e-14  # NDR/HDR Symbol BER error line
        assert targets["lq_ports_over_effective_ber"] == 1e-11
        return
    nodes = [t for t in tests if t.nodes]
    switch_tests = [t for t in tests if not t.nodes]
    cabled_switches = {d for lk in design.links for d in (lk.a_device, lk.b_device)} & {
        s.id for s in design.switches
    }
    assert {t.id[3:] for t in switch_tests} == cabled_switches
    assert all(t.command == ("show interfaces counters fec-stats   # SONiC; start and finish",)
               for t in switch_tests)  # fmt: skip
    if plan.devices[0].startswith("mlx5"):
        assert [t.nodes[0] for t in nodes] == [n.id for n in design.nodes]
        assert all(
            {c.metric: c.target for c in t.checks}["lq_ports_over_ber"] == ETH_PRE_FEC_BER_LIMIT
            for t in nodes
        )
    else:  # Broadcom: the mlx5 counter names do not apply, the switch side judges the links
        assert not nodes and "switch side" in plan.section("linkq").intro


# -- parsers -------------------------------------------------------------------------------------


def test_sonic_fec_stats_as_sonic_utilities_prints_them() -> None:
    rows = parse_fec_stats_file(LINKQ / "sonic-fec-stats.txt")
    assert list(rows) == ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet9"]
    e0 = rows["Ethernet0"]
    assert (e0.state, e0.corrected, e0.uncorrectable, e0.symbol_errors) == ("D", 130402, 3, 4)
    period = parse_fec_stats_file(LINKQ / "sonic-fec-stats-period.txt")
    assert period["Ethernet8"].uncorrectable == 0 and len(period) == 4
    with pytest.raises(ParseError, match="IFACE STATE FEC_CORR"):
        parse_fec_stats_file(LINKQ / "ethtool-mlx5-phy.txt")


def test_ethtool_stats_of_a_connectx_port() -> None:
    stats = parse_ethtool_stats_file(LINKQ / "ethtool-mlx5-phy.txt")
    assert stats["rx_pcs_symbol_err_phy"] == 386
    assert stats["rx_corrected_bits_phy"] == 17750739
    assert stats["rx_err_lane_3_phy"] + stats["rx_err_lane_0_phy"] == 17750739  # per-lane sum
    with pytest.raises(ParseError, match="no 'name: value' counters"):
        parse_ethtool_stats_file(LINKQ / "sonic-fec-stats.txt")


def test_net_dump_ext_reads_columns_by_name_and_descriptions_with_colons() -> None:
    text = "\n".join([
        "# ibdiagnet2.net_dump_ext",
        HEADER,
        dump_row("SW", "MF0;leaf01:MQM9700/U1", 17, eff="3.2e-11", sym_err=4),
        dump_row("CA", "node0003 mlx5_2", 1, sym="N/A"),
    ])  # fmt: skip
    sw, ca = parse_net_dump_ext(text, "x")
    assert (sw.desc, sw.port, sw.effective_ber, sw.symbol_errors) == (
        "MF0;leaf01:MQM9700/U1",
        17,
        3.2e-11,
        4,
    )
    assert (ca.desc, ca.port, ca.symbol_ber, ca.raw_ber) == ("node0003 mlx5_2", 1, None, 2e-08)
    with pytest.raises(ParseError, match="header"):
        parse_net_dump_ext("Ty : # : GUID\nCA : 1 : 0x1\n", "x")
    with pytest.raises(ParseError, match="line 2: a BER is not a number"):
        parse_net_dump_ext(HEADER + "\n" + dump_row("CA", "n mlx5_0", 1, eff="bad"), "x")


# -- grade ---------------------------------------------------------------------------------------


def _soak(folder: Path, seconds: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "start.epoch").write_text("1700000000\n")
    (folder / "finish.epoch").write_text(f"{1700000000 + seconds}\n")


def _cable(design: Design, device: str, port: int) -> str:
    link = next(
        lk
        for lk in design.links
        if (device, port) in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port))
    )
    return next(c.id for c in design.cables if c.link_id == link.id)


def test_grade_names_the_cable_of_an_infiniband_port_over_ber(tmp_path: Path) -> None:
    name = "h100-1k"
    design, plan = cabled(name), example_plan(name)
    up = next(lk for lk in design.links if lk.kind != "node-leaf")
    bad = {("node0003", 2): {"eff": "5e-11"}, (up.b_device, up.b_port): {"sym_err": 7}}
    folder = tmp_path / "LQ-FABRIC"
    (folder / "finish").mkdir(parents=True)
    (folder / "finish" / "ibdiagnet2.net_dump_ext").write_text(net_dump_ext(design, bad))
    (folder / "finish" / "ibqueryerrors.txt").write_text("")
    _soak(folder, 7800)
    exps = [e for e in expectations(plan) if e.kind == "linkq"]
    report = grade(design, exps, tmp_path)
    got = {r.metric: r for r in report.results}
    assert (got["lq_soak_s"].status, got["lq_soak_s"].measured) == ("pass", 7800.0)
    over, errors = got["lq_ports_over_effective_ber"], got["lq_ports_with_errors"]
    assert (over.status, over.measured) == ("fail", 1.0)
    assert got["lq_ports_over_ber"].status == "pass"
    assert f"cable {_cable(design, 'node0003', 2)} [" in over.detail
    assert "] (node0003 nic2) Effective BER 5.0e-11 > error line 1e-11" in over.detail
    assert (errors.status, errors.measured) == ("fail", 1.0)
    assert f"cable {_cable(design, up.b_device, up.b_port)} [" in errors.detail
    assert f"] ({up.b_device} " in errors.detail
    assert "7 symbol errors" in errors.detail
    # the same fabric clean, but the counters span 30 s: too short a soak to vouch for 1e-12
    (folder / "finish" / "ibdiagnet2.net_dump_ext").write_text(net_dump_ext(design, {}))
    _soak(folder, 30)
    report = grade(design, exps, tmp_path)
    assert {r.metric: r.status for r in report.results} == {
        "lq_ports_over_ber": "pass",
        "lq_ports_over_effective_ber": "pass",
        "lq_ports_with_errors": "pass",
        "lq_link_downs": "pass",
        "lq_modules_out_of_limits": "missing",  # no ibdiagnet2.db_csv: not measured
        "lq_soak_s": "fail",
    }


def module_text(temp_c: float = 41.5, rx_mw: tuple[float, ...] = (0.97, 0.98, 1.13, 1.13)) -> str:
    """``ethtool -m`` of a QSFP module (SFF-8636 layout as ethtool's qsfp.c and sff-common.c
    print it): its temperature, per-lane RX power and its own alarm and warning thresholds."""
    import math

    def pw(mw: float) -> str:
        return f"{mw:.4f} mW / {10 * math.log10(mw):.2f} dBm" if mw > 0 else "0.0000 mW / -inf dBm"

    lanes = "".join(f"\tRcvr signal avg optical power (Channel {k}) : {pw(v)}\n"
                    for k, v in enumerate(rx_mw, 1))  # fmt: skip
    return (
        "\tIdentifier                                : 0x11 (QSFP28)\n"
        f"\tModule temperature                        : {temp_c:.2f} degrees C / "
        f"{temp_c * 9 / 5 + 32:.2f} degrees F\n"
        + lanes
        + "\tModule temperature high alarm threshold   : 75.00 degrees C / 167.00 degrees F\n"
        "\tModule temperature low alarm threshold    : -5.00 degrees C / 23.00 degrees F\n"
        "\tModule temperature high warning threshold : 70.00 degrees C / 158.00 degrees F\n"
        "\tModule temperature low warning threshold  : 0.00 degrees C / 32.00 degrees F\n"
        f"\tLaser rx power high alarm threshold       : {pw(3.4673)}\n"
        f"\tLaser rx power low alarm threshold        : {pw(0.0467)}\n"
        f"\tLaser rx power high warning threshold     : {pw(1.7378)}\n"
        f"\tLaser rx power low warning threshold      : {pw(0.0933)}\n"
    )


def _ethtool(corrected: int, pcs: int = 0, crc: int = 0) -> str:
    return (f"NIC statistics:\n     rx_crc_errors_phy: {crc}\n     rx_symbol_err_phy: {crc}\n"
            f"     rx_pcs_symbol_err_phy: {pcs}\n     rx_corrected_bits_phy: {corrected}\n")  # fmt: skip


def test_grade_judges_ethtool_growth_per_port_and_names_its_cable(tmp_path: Path) -> None:
    name = "seed001-64gpu"
    design, plan = cabled(name), example_plan(name)
    node = design.nodes[0].id
    folder = tmp_path / f"LQ-{node}"
    _soak(folder, 600)
    bits = 400e9 * 600
    for k in range(8):
        start = _ethtool(10**9, pcs=386, crc=386)  # old counts from before the soak: not judged
        finish = _ethtool(
            10**9 + (int(bits * 1e-3) if k == 5 else 1000), pcs=386 + (k == 2), crc=386
        )
        (folder / f"ethtool-mlx5_{k}-start.txt").write_text(start)
        (folder / f"ethtool-mlx5_{k}-finish.txt").write_text(finish)
    exps = [e for e in expectations(plan) if e.test_id == f"LQ-{node}"]
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    assert (got["lq_ports_over_ber"].status, got["lq_ports_over_ber"].measured) == ("fail", 1.0)
    assert f"] ({node} nic5) pre-FEC BER 1.0e-03" in got["lq_ports_over_ber"].detail
    assert f"cable {_cable(design, node, 5)} [" in got["lq_ports_over_ber"].detail
    assert (got["lq_ports_with_errors"].status, got["lq_ports_with_errors"].measured) == (
        "fail",
        1.0,
    )
    assert f"] ({node} nic2) rx_pcs_symbol_err_phy +1" in got["lq_ports_with_errors"].detail
    assert f"cable {_cable(design, node, 2)} [" in got["lq_ports_with_errors"].detail
    assert got["lq_soak_s"].status == "pass"
    (folder / "ethtool-mlx5_7-finish.txt").unlink()
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    assert (
        got["lq_ports_with_errors"].status == "error"
        and "mlx5_7" in got["lq_ports_with_errors"].detail
    )


def test_grade_reads_switch_fec_stats_growth(tmp_path: Path) -> None:
    name = "seed001-64gpu"
    design, plan = cabled(name), example_plan(name)
    test = next(t for t in plan.section("linkq").tests if not t.nodes)
    switch = test.id[3:]
    folder = tmp_path / test.id
    _soak(folder, 600)
    text = (LINKQ / "sonic-fec-stats.txt").read_text()
    (folder / "fec-stats-start.txt").write_text(text)
    (folder / "fec-stats-finish.txt").write_text(text.replace(
        "Ethernet8      N/A     100,317             0", "Ethernet8      N/A     100,917            12"))  # fmt: skip
    exps = [e for e in expectations(plan) if e.test_id == test.id]
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    errors = got["lq_ports_with_errors"]
    assert (errors.status, errors.measured) == ("fail", 1.0)
    port = NameMap.load(design, None).port(switch, "Ethernet8")  # SONiC lane numbering
    assert port is not None
    assert (
        f"cable {_cable(design, switch, port)} [" in errors.detail
        and f"({switch} " in errors.detail
    )
    assert "FEC_UNCORR +12" in errors.detail
    (folder / "fec-stats-finish.txt").write_text(text)
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    assert got["lq_ports_with_errors"].status == "pass"


def write_linkq_results(design: Design, test: PlanTest, folder: Path) -> None:
    """A healthy link-quality result in the layout 50_link_quality.sh writes: 130 minutes' soak,
    a few corrected bits and no uncorrectable error on any port."""
    out = folder / test.id
    _soak(out, 7800)
    if test.id == "LQ-FABRIC":
        (out / "finish").mkdir()
        (out / "finish" / "ibdiagnet2.net_dump_ext").write_text(net_dump_ext(design, {}))
        (out / "finish" / "ibqueryerrors.txt").write_text("")
        from tests.test_firmware_modules import db_csv

        (out / "finish" / "ibdiagnet2.db_csv").write_text(db_csv(design))
    elif test.nodes:
        for dev in dict.fromkeys(test.devices):
            (out / f"ethtool-{dev}-start.txt").write_text(_ethtool(5000))
            (out / f"ethtool-{dev}-finish.txt").write_text(_ethtool(9000))
            (out / f"module-{dev}.txt").write_text(module_text())
    else:
        text = (LINKQ / "sonic-fec-stats-period.txt").read_text()
        (out / "fec-stats-start.txt").write_text(text)
        (out / "fec-stats-finish.txt").write_text(text)


def test_bonded_connectx_nics_are_judged_from_the_switch_side() -> None:
    """A RoCE LAG device (mlx5_bond_k) hides its member ports' physical counters: no node test
    pretends to read them, every cabled switch still has its test, and the plan says why."""
    import railplan
    from railplan.testplan import build_testplan

    spec = {"name": "bond-bf3",
            "cluster": {"gpus": 32, "gpus_per_node": 8, "nics_per_node": 4,
                        "nic": "bf3-b3220-2x200g", "bonding": "bond"},
            "fabric": {"topology": "matrix", "switches": ["cx864e-n"], "whole_su": False}}  # fmt: skip
    design = railplan.plan(railplan.spec_from_dict(spec))
    plan = build_testplan(design, railplan.load_catalog())
    assert plan.devices[0] == "mlx5_bond_0"
    section = plan.section("linkq")
    switches = {s.id for s in design.switches}
    assert section.tests and all(not t.nodes and t.id[3:] in switches for t in section.tests)
    assert "Bonded NICs" in section.intro and "switch side" in section.intro


# -- NVIDIA's bring-up rules (issue 30) -----------------------------------------------------------


def _labels(design: Design, cable: str) -> tuple[str, str]:
    c = next(c for c in design.cables if c.id == cable)
    return c.label_a, c.label_b


def test_ib_thresholds_and_windows_are_the_cited_nvidia_figures() -> None:
    """Read from the plan: the NDR fabric's lines are the bring-up procedure's, each cited by
    the document's name in the check's reason; the window is 125 minutes."""
    plan = example_plan("h100-1k")
    (t,) = plan.section("linkq").tests
    checks = {c.metric: c for c in t.checks}
    assert checks["lq_ports_over_ber"].target == 1e-14
    assert checks["lq_ports_over_effective_ber"].target == 1e-11
    assert checks["lq_soak_s"].expected == checks["lq_soak_s"].threshold == 125 * 60
    assert checks["lq_link_downs"].threshold == 0
    for metric in (
        "lq_ports_over_ber",
        "lq_ports_over_effective_ber",
        "lq_soak_s",
        "lq_link_downs",
    ):
        assert BRINGUP in checks[metric].reason, metric
    assert BRINGUP == "NVIDIA InfiniBand Cluster Bring-up Procedure v1.0"
    # an EDR (100G, NRZ) fabric falls back to ibdiagnet's documented 10^-12
    from railplan.testplan.link_quality import ib_ber_lines

    assert ib_ber_lines(100).symbol_error == 1e-12 and ib_ber_lines(400).symbol_error == 1e-14


def test_injected_ber_and_two_link_downs_in_24h_are_named_with_cable_labels(
    tmp_path: Path,
) -> None:
    name = "h100-1k"
    design, plan = cabled(name), example_plan(name)
    up = next(lk for lk in design.links if lk.kind != "node-leaf")
    # Symbol BER 3e-14 on node0005's port 1: above the 1e-14 error line, under effective 1e-11
    bad = {("node0005", 1): {"sym": "3e-14"}}
    folder = tmp_path / "LQ-FABRIC"
    (folder / "finish").mkdir(parents=True)
    (folder / "finish" / "ibdiagnet2.net_dump_ext").write_text(net_dump_ext(design, bad))
    # a leaf-spine port that went down twice in the 24 h burn-in (ibqueryerrors' own layout)
    sw = up.b_device
    (folder / "finish" / "ibqueryerrors.txt").write_text(
        f'Errors for 0xb83fd203009a1c00 "MF0;{sw}:MQM9700/U1"\n'
        f"   GUID 0xb83fd203009a1c00 port {up.b_port + 1}: [LinkDownedCounter == 2 (2.000 )] "
        "[LinkErrorRecoveryCounter == 2 (2.000 )]\n"
    )
    _soak(folder, 24 * 3600)
    exps = [e for e in expectations(plan) if e.kind == "linkq"]
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    ber = got["lq_ports_over_ber"]
    cable = _cable(design, "node0005", 1)
    a, b = _labels(design, cable)
    assert (ber.status, ber.measured) == ("fail", 1.0)
    assert f"cable {cable} [{a} | {b}] (node0005 nic1) Symbol BER 3.0e-14" in ber.detail
    assert got["lq_ports_over_effective_ber"].status == "pass"
    downs = got["lq_link_downs"]
    cable = _cable(design, sw, up.b_port)
    a, b = _labels(design, cable)
    assert (downs.status, downs.measured) == ("fail", 1.0)
    assert f"cable {cable} [{a} | {b}] ({sw} " in downs.detail
    assert "2 link-down(s) in 24.0 h (2.0 per 24 h)" in downs.detail
    assert got["lq_soak_s"].status == "pass"


# -- module temperature and per-lane RX power against the module's own thresholds -------------


def test_module_readings_are_judged_against_the_module_thresholds() -> None:
    from railplan.field.parse_module import parse_ethtool_module

    ok = parse_ethtool_module(module_text())
    assert ok.judged and ok.temperature_c == 41.5 and len(ok.rx_mw) == 4
    assert ok.temp_limits == (75.0, -5.0, 70.0, 0.0) and ok.rx_limits[0] == 3.4673
    assert ok.findings() == ([], [])
    hot = parse_ethtool_module(module_text(temp_c=78.0))
    assert hot.findings()[0] == ["temperature 78 C outside its alarm range -5..75 C"]
    warm = parse_ethtool_module(module_text(temp_c=72.0))
    assert warm.findings()[0] == [] and len(warm.findings()[1]) == 1
    dark = parse_ethtool_module(module_text(rx_mw=(0.97, 0.0, 1.1, 1.1)))
    assert dark.findings()[0] == ["lane 2 RX -inf dBm outside its alarm range -13.31 dBm..5.40 dBm"]
    # older ethtool prints "power(Channel 1)" without the space; a DAC prints no diagnostics
    old = parse_ethtool_module(module_text().replace("power (Channel", "power(Channel"))
    assert old.rx_mw == ok.rx_mw
    assert not parse_ethtool_module("\tIdentifier : 0x11 (QSFP28)\n").judged
    # thresholds a module does not implement read as zeros: not judged
    zeros = module_text(rx_mw=(0.97,)).replace("3.4673 mW / 5.40 dBm", "0.0000 mW / -inf dBm")
    assert parse_ethtool_module(zeros).findings() == ([], [])


def test_grader_names_the_module_out_of_limits_by_cable(tmp_path: Path) -> None:
    plan = example_plan("seed000-2node")
    design = cabled("seed000-2node")
    test = next(t for t in plan.section("linkq").tests if t.nodes)
    write_linkq_results(design, test, tmp_path)
    (tmp_path / test.id / "module-mlx5_2.txt").write_text(module_text(rx_mw=(0.97, 0.02, 1.1, 1.1)))
    exp = next(
        e
        for e in expectations(plan)
        if e.test_id == test.id and e.metric == "lq_modules_out_of_limits"
    )
    from railplan.field.linkq import LinkQuality

    files = sorted((tmp_path / test.id).iterdir())
    value, detail, status = LinkQuality(design, NameMap(design))(exp, files)
    cable = next(
        c
        for c in design.cables
        if c.link_id
        == next(lk.id for lk in design.links if lk.a_device == test.nodes[0] and lk.a_port == 2)
    )
    assert value == 1.0 and status == "" and not exp.passes(value)
    assert "lane 2 RX" in detail and cable.id in detail
