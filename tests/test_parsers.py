"""Parsers of real tool outputs: the sample files in fixtures/loop, good and broken."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import railplan
from railplan.errors import RailplanError
from railplan.field import ParseError, check_asbuilt
from railplan.field.parse_ib import ib_rate_gbps, parse_iblinkinfo_file, parse_ibnetdiscover_file
from railplan.field.parse_lldp import mau_rate_gbps, parse_lldp_file
from railplan.field.parse_nccl import parse_nccl_file, parse_nccl_log_file
from railplan.field.parse_node import (
    modules_loaded,
    parse_ibstat_file,
    parse_ibv_devinfo_file,
    parse_lspci_acs_file,
)
from railplan.field.parse_perftest import parse_perftest_file

FIX = Path(__file__).parent / "fixtures" / "loop"


# -- LLDP -----------------------------------------------------------------------------------------


def test_lldpcli_json0_host() -> None:
    n = parse_lldp_file(FIX / "lldp" / "good" / "node0001.json")
    assert n.reporters == (("node0001",),)
    by_port = {s.local_ports[0]: s for s in n.sightings}
    assert set(by_port) == {"eno1", "ens1f0np0", "ens2f0np0"}
    leaf = by_port["ens1f0np0"]
    assert leaf.remote_names[0] == "p0-leaf-su01-r0"
    assert leaf.remote_ports == ("etp1", "Ethernet0")
    assert leaf.rate_gbps == 400
    assert by_port["eno1"].rate_gbps == 1  # 1000BaseTFD
    assert re.search(r"node0001\.json line \d+", leaf.source)


def test_lldpcli_json_keyed_form() -> None:
    n = parse_lldp_file(FIX / "lldp" / "good" / "node0002.json")
    assert [(s.local_ports[0], s.remote_names[0], s.remote_ports[0]) for s in n.sightings] == [
        ("ens1f0np0", "p0-leaf-su01-r0", "etp2"),
        ("ens2f0np0", "p0-leaf-su01-r1", "etp2"),
    ]
    assert n.sightings[0].rate_gbps == 400 and n.sightings[1].rate_gbps is None


def test_lldpcli_plain_text() -> None:
    n = parse_lldp_file(FIX / "lldp" / "good" / "node0003.txt")
    first, second = n.sightings
    assert first.remote_names == ("p0-leaf-su01-r0", "b8:ce:f6:aa:00:01")
    assert first.remote_ports == ("etp3", "Ethernet16")
    assert first.rate_gbps == 400
    assert second.local_ports == ("ens2f0np0",) and second.remote_ports == ("etp3",)


def test_sonic_lldp_table() -> None:
    n = parse_lldp_file(FIX / "lldp" / "good" / "p0-leaf-su01-r0.txt")
    rows = [(s.local_ports[0], s.remote_names, s.remote_ports) for s in n.sightings]
    assert rows[0] == ("Ethernet0", ("node0001",), ("b8:3f:d2:12:34:50", "ens1f0np0"))
    assert rows[3] == ("Ethernet128", ("p0-spine-01",), ("etp1", "p0-leaf-su01-r0:etp17"))
    assert len(rows) == 5 and n.sightings[0].source.endswith("line 5")


def test_lldp_folder_against_a_design() -> None:
    """The good LLDP samples, read as a folder with the name map, match a 32-port ROFT."""
    spec = {
        "name": "fixtures",
        "cluster": {"gpus": 224, "gpus_per_node": 8, "nics_per_node": 2, "port_speed_gbps": 400},
        "fabric": {"switches": ["cx732q-n"]},
    }
    design = railplan.plan(railplan.spec_from_dict(spec))
    report = check_asbuilt(design, lldp=[FIX / "lldp" / "good"], names=FIX / "names.yaml")
    ok = {(c.a, c.b) for c in report.links if c.status == "ok"}
    assert ("node0001 nic0", "p0-leaf-su01-r0 P1") in ok
    assert ("node0003 nic1", "p0-leaf-su01-r1 P3") in ok
    assert ("p0-leaf-su01-r0 P17", "p0-spine-01 P1") in ok
    assert report.unexpected == ()  # the management network is not the fabric
    assert report.ignored >= 2


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [
        ("truncated.json", 17, "not valid JSON"),
        ("no_lldp_key.json", 1, "'lldp' key"),
        ("nameless_neighbour.json", 5, "neither a system name nor an id"),
        ("sonic_cut.txt", 7, "footer counts 4 entries"),
        ("sonic_short_row.txt", 5, "at least LocalPort"),
        ("not_lldp.txt", 1, "not LLDP output"),
        ("empty.txt", None, "empty"),
    ],
)
def test_broken_lldp_files_name_file_and_line(name: str, line: int | None, words: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_lldp_file(FIX / "lldp" / "bad" / name)
    message = str(info.value)
    assert name in message and words in message
    assert info.value.line == line
    if line:
        assert f"line {line}" in message
    assert isinstance(info.value, RailplanError)


def test_mau_rates() -> None:
    assert mau_rate_gbps("400GbaseCR8 - 400GBASE-R over 8 lanes") == 400
    assert mau_rate_gbps("100GBASE-SR4 - 100G multimode") == 100
    assert mau_rate_gbps("10GigBaseCX4 - X copper over 8 pair 100-Ohm balanced cable") == 10
    assert mau_rate_gbps("1000BaseTFD - Four-pair Category 5 UTP") == 1
    assert mau_rate_gbps("unknown") is None


# -- InfiniBand -----------------------------------------------------------------------------------


def test_ibnetdiscover_topology() -> None:
    n = parse_ibnetdiscover_file(FIX / "ib" / "fabric.topo")
    assert n.full_fabric
    assert len(n.sightings) == 10  # 5 links, each seen from both ends
    first = n.sightings[0]
    assert first.local_names == ("MF0;p0-leaf-su01-r0:MQM9700/U1", "S-fc6a1c0300a1b200")
    assert first.local_ports == ("1",)
    assert first.remote_names[0] == "node0001 mlx5_0"
    assert first.remote_ports[:2] == ("mlx5_0:1", "mlx5_0")
    assert first.rate_gbps == 400
    slow = [s for s in n.sightings if s.rate_gbps == 200]
    assert len(slow) == 2  # node0003 at HDR, from both ends
    assert first.source.endswith("fabric.topo line 11")


def test_ibnetdiscover_grouped_and_partial() -> None:
    grouped = parse_ibnetdiscover_file(FIX / "ib" / "grouped.topo")
    assert [s.local_ports[0] for s in grouped.sightings] == ["1", "mlx5_0:1"]
    partial = parse_ibnetdiscover_file(FIX / "ib" / "partial.topo")
    assert len(partial.sightings) == 2


def test_iblinkinfo_default_and_line_mode() -> None:
    n = parse_iblinkinfo_file(FIX / "ib" / "iblinkinfo.txt")
    rates = sorted(s.rate_gbps for s in n.sightings if s.rate_gbps is not None)
    assert len(n.sightings) == 6  # two down ports skipped
    assert rates.count(200.0) == 1 and rates.count(400.0) == 5
    lines = parse_iblinkinfo_file(FIX / "ib" / "iblinkinfo_lines.txt")
    assert [s.remote_names[0] for s in lines.sightings] == [
        "MF0;p0-leaf-su01-r0:MQM9700/U1",
        "MF0;p0-spine-01:MQM9700/U1",
    ]


def test_ib_against_a_design() -> None:
    spec = {
        "name": "ib",
        "cluster": {"gpus": 448, "gpus_per_node": 8, "nics_per_node": 2, "port_speed_gbps": 400},
        "fabric": {"switches": ["qm9700"]},
    }
    design = railplan.plan(railplan.spec_from_dict(spec))
    report = check_asbuilt(design, ibnetdiscover=FIX / "ib" / "fabric.topo")
    status = {(c.a, c.b): c.status for c in report.links}
    assert status[("node0001 nic0", "p0-leaf-su01-r0 P1/1")] == "ok"
    assert status[("node0003 nic0", "p0-leaf-su01-r0 P2/1")] == "wrong_speed"
    assert status[("p0-leaf-su01-r0 P17/1", "p0-spine-01 P1/1")] == "ok"
    assert report.counts()["missing"] > 0  # the sample shows a few links only


@pytest.mark.parametrize(
    ("path", "line", "words"),
    [
        ("ib/bad_line.topo", 9, "not an ibnetdiscover line"),
        ("ib/port_before_node.topo", 2, "before any Switch/Ca"),
        ("ib/iblinkinfo_bad.txt", 3, "cannot read the link state"),
        ("lldp/good/node0001.json", 1, "not an ibnetdiscover line"),
    ],
)
def test_broken_ib_files(path: str, line: int, words: str) -> None:
    parse = parse_iblinkinfo_file if "iblinkinfo" in path else parse_ibnetdiscover_file
    with pytest.raises(ParseError) as info:
        parse(FIX / path)
    assert f"{Path(path).name} line {line}" in str(info.value)
    assert words in str(info.value)


def test_ib_rates() -> None:
    assert ib_rate_gbps("4", "NDR") == 400
    assert ib_rate_gbps("2", "NDR") == 200
    assert ib_rate_gbps("4", "HDR") == 200
    assert ib_rate_gbps("4", "FDR") == 56
    assert ib_rate_gbps("4", "???") is None


# -- nccl-tests -----------------------------------------------------------------------------------


def test_nccl_text_with_interleaved_info_lines() -> None:
    r = parse_nccl_file(FIX / "nccl" / "all_reduce_2node.txt")
    assert r.collective == "all_reduce_perf"
    assert r.hosts == ("node0001", "node0002") and r.ranks == 16
    assert len(r.rows) == 4 and r.wrong == 0 and r.out_of_bounds == 0
    assert r.metric("busbw_gbs") == pytest.approx(85.40)
    assert r.metric("algbw_gbs") == pytest.approx(45.55)
    assert r.metric("avg_busbw_gbs") == pytest.approx(84.0952)


def test_nccl_alltoall_and_old_format() -> None:
    a2a = parse_nccl_file(FIX / "nccl" / "alltoall_2node.txt")
    assert a2a.metric("busbw_gbs") == pytest.approx(79.37)
    assert a2a.rows[0].ip_wrong is None  # N/A in-place check
    old = parse_nccl_file(FIX / "nccl" / "old_format.txt")
    assert old.metric("busbw_gbs") == pytest.approx(164.00)
    assert old.wrong == 0  # an "error" column is a max error, not a count of wrong values


def test_nccl_json() -> None:
    r = parse_nccl_file(FIX / "nccl" / "all_reduce.json")
    assert r.collective == "all_reduce_perf"
    assert r.hosts == ("node0001", "node0002")
    assert r.env["NCCL_ALGO"] == "Ring"
    assert r.metric("busbw_gbs") == pytest.approx(85.40)
    assert r.metric("avg_busbw_gbs") == pytest.approx(83.7075)


def test_nccl_failed_run_is_a_result_not_an_error() -> None:
    r = parse_nccl_file(FIX / "nccl" / "failed_run.txt")
    assert not r.rows and len(r.errors) == 3
    assert "Test NCCL failure" in r.errors[1]


@pytest.mark.parametrize(
    ("name", "line", "words"),
    [
        ("truncated.txt", None, "no nccl-tests result rows"),
        ("bad_row.txt", 5, "cut short"),
        ("bad_results.json", 4, "alg_bw is not a number"),
    ],
)
def test_broken_nccl_files(name: str, line: int | None, words: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_nccl_file(FIX / "nccl" / name)
    assert name in str(info.value) and words in str(info.value)
    assert info.value.line == line


def test_nccl_log_gdrdma() -> None:
    good = parse_nccl_log_file(FIX / "nccl" / "all_reduce_2node.txt")
    assert len(good.channels) == 5 and not good.without_gdrdma
    bad = parse_nccl_log_file(FIX / "nccl" / "no_gdrdma.log")
    assert [c.host for c in bad.without_gdrdma] == ["node0007", "node0007"]
    assert bad.without_gdrdma[0].transport == "NET/IB/0"
    assert "Disabled for HCA 0" in bad.gdr_disabled[0]


# -- perftest -------------------------------------------------------------------------------------


def test_ib_write_bw_gbits() -> None:
    r = parse_perftest_file(FIX / "perftest" / "ib_write_bw.txt")
    assert (r.kind, r.title, r.device, r.link_type) == ("bw", "RDMA_Write BW Test", "mlx5_0", "IB")
    assert r.metric("bw_avg_gbps") == pytest.approx(391.96)
    assert r.metric("bw_peak_gbps") == pytest.approx(392.35)


def test_ib_write_bw_mb_sweep_takes_the_largest_message() -> None:
    r = parse_perftest_file(FIX / "perftest" / "ib_write_bw_roce_sweep.txt")
    assert len(r.bw_rows) == 3 and r.link_type == "Ethernet"
    assert r.metric("bw_avg_gbps") == pytest.approx(46779.55 * 8 * 2**20 / 1e9)


def test_ib_write_lat_and_launcher_prefixes() -> None:
    lat = parse_perftest_file(FIX / "perftest" / "ib_write_lat.txt")
    assert lat.kind == "lat"
    assert lat.metric("lat_typical_us") == pytest.approx(2.51)
    assert lat.metric("lat_p99_us") == pytest.approx(2.71)
    assert lat.metric("lat_max_us") == pytest.approx(9.87)
    pre = parse_perftest_file(FIX / "perftest" / "launcher_prefixed.txt")
    assert pre.metric("bw_avg_gbps") == pytest.approx(361.67)


def test_perftest_failures() -> None:
    failed = parse_perftest_file(FIX / "perftest" / "connect_failed.txt")
    assert failed.metric("bw_avg_gbps") is None and "Couldn't connect" in failed.errors[0]
    with pytest.raises(ParseError, match=r"bad_row\.txt line 4: BW average is not a number"):
        parse_perftest_file(FIX / "perftest" / "bad_row.txt")
    with pytest.raises(ParseError, match=r"empty_table\.txt: has no perftest result rows"):
        parse_perftest_file(FIX / "perftest" / "empty_table.txt")


# -- node checks ----------------------------------------------------------------------------------


def test_lspci_acs() -> None:
    full = parse_lspci_acs_file(FIX / "node" / "lspci_full.txt")
    assert [c.device for c in full.controls] == ["0000:15:01.0", "0000:15:02.0"]
    assert not full.enabled
    grepped = parse_lspci_acs_file(FIX / "node" / "lspci_acs_on.txt")
    assert len(grepped.controls) == 3 and len(grepped.enabled) == 2
    denied = parse_lspci_acs_file(FIX / "node" / "lspci_denied.txt")
    assert denied.access_denied == 1 and not denied.controls
    with pytest.raises(ParseError, match=r"lspci_bad\.txt line 4: cannot read ACSCtl flag"):
        parse_lspci_acs_file(FIX / "node" / "lspci_bad.txt")


def test_ibstat_ibv_devinfo_lsmod() -> None:
    ports = parse_ibstat_file(FIX / "node" / "ibstat.txt")
    assert [(p.ca, p.active, p.rate_gbps) for p in ports] == [
        ("mlx5_0", True, 400.0),
        ("mlx5_1", False, 10.0),
    ]
    with pytest.raises(ParseError, match=r"ibstat_bad\.txt line 5: Rate is not a number"):
        parse_ibstat_file(FIX / "node" / "ibstat_bad.txt")
    with pytest.raises(ParseError, match="lists no CA ports"):
        parse_ibstat_file(FIX / "node" / "lsmod.txt")
    mtus = parse_ibv_devinfo_file(FIX / "node" / "ibv_devinfo.txt")
    assert mtus == (("mlx5_0", 1, 4096), ("mlx5_1", 1, 1024))
    assert "nvidia_peermem" in modules_loaded((FIX / "node" / "lsmod.txt").read_text())
    assert modules_loaded("") == frozenset()


def test_unreadable_inputs_are_parse_errors(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="does not exist"):
        parse_nccl_file(tmp_path / "nope.txt")
    with pytest.raises(ParseError, match="is a folder"):
        parse_perftest_file(tmp_path)
    binary = tmp_path / "core.bin"
    binary.write_bytes(b"\x7fELF\x00\x00\x01")
    with pytest.raises(ParseError, match="binary"):
        parse_lldp_file(binary)
