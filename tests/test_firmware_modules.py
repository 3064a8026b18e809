"""Firmware consistency (FW-FABRIC) and InfiniBand module readings (LQ-FABRIC, CABLE_INFO).

The captures are built in the layouts the real tools write (see ``railplan.field.
parse_ibdiag_csv``): ibdiagnet2.db_csv tables between START_/END_ lines, NODES with
NodeDesc/NodeType/NodeGUID/DeviceID, NODES_INFO with hex FWInfo_Extended_* (as public readers
of real captures decode them), CABLE_INFO with the fields of ibdiagnet's CombinedCableInfo
record; ``ethtool -i`` as the kernel prints it (driver:, firmware-version:); SONiC's ``show
version`` as sonic-utilities' Command Reference shows it; ibdiagnet2.cables as ibdiagnet's
cable-diagnostics page documents it. A healthy capture passes; one switch on an older
firmware fails naming that switch; a module over its temperature alarm or under its RX
threshold is named with its cable id and labels; a missing tool is "not measured".
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.field.firmware import outliers, reference_version
from railplan.field.grade import grade
from railplan.field.parse_ibdiag_csv import cable_modules, parse_cables_text, parse_db_csv
from railplan.testplan import build_testplan, expectations
from tests.conftest import write_scripts
from tests.test_testplan import cabled

IB = "basepod-8node"
SW_FW = (0x1F, 0x7DC, 0x42C)  # 31.2012.1068 in NODES_INFO's hex cells
HCA_FW = (0x1C, 0x27, 0x3EA)  # 28.39.1002
MODULE_FW = "46.120.0"
CABLE_COLUMNS = (
    "NodeGuid,PortGuid,PortNum,Vendor,PN,SN,Rev,FWVersion,Temperature,RX1Power,RX2Power,"
    "RX3Power,RX4Power,RXPowerHighThresh,RXPowerLowThresh,AlarmTemperatureHighThresh,"
    "AlarmTemperatureLowThresh,HighTemperatureAlarm,LowTemperatureAlarm,HighRX1PowerAlarm,"
    "LowRX1PowerAlarm,HighRX2PowerAlarm,LowRX2PowerAlarm"
)


@cache
def _plan(name: str) -> tuple[Design, object]:
    design = cabled(name)
    return design, build_testplan(design, load_catalog())


def _ends(design: Design) -> list[tuple[str, str, int]]:
    """(node description, guid, IB port) of both ends of every cable, as ibdiagnet names them:
    a switch ``MF0;<switch>:MQM9700/U1`` with port+1, an HCA ``<node> mlx5_<k>`` port 1."""
    switches = {s.id for s in design.switches}
    out = []
    for lk in design.links:
        for dev, port in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            if dev in switches:
                out.append((f"MF0;{dev}:MQM9700/U1", _guid(dev), port + 1))
            else:
                out.append((f"{dev} mlx5_{port}", _guid(f"{dev}/{port}"), 1))
    return out


def _guid(name: str) -> str:
    return f"0x{abs(hash(name)) % (1 << 48):016x}"


def db_csv(design: Design, *, switch_fw: dict[str, tuple[int, int, int]] | None = None,
           module: dict[tuple[str, int], dict[str, str]] | None = None) -> str:  # fmt: skip
    """An ibdiagnet2.db_csv of the whole design: NODES, NODES_INFO and CABLE_INFO."""
    switch_fw = switch_fw or {}
    module = module or {}
    ends = _ends(design)
    nodes = {d: g for d, g, _ in ends}
    lines = ["START_NODES",
             "NodeDesc,NumPorts,NodeType,ClassVersion,BaseVersion,SystemImageGUID,NodeGUID,"
             "PortGUID,DeviceID"]  # fmt: skip
    info = ["START_NODES_INFO",
            "NodeGUID,HWInfo_DeviceID,FWInfo_PSID,FWInfo_Extended_Major,FWInfo_Extended_Minor,"
            "FWInfo_Extended_SubMinor"]  # fmt: skip
    for desc, guid in sorted(nodes.items()):
        switch = desc.startswith("MF0;")
        kind, dev = ("2", "0xd2f2") if switch else ("1", "0x1021")
        lines.append(f'"{desc}",{65 if switch else 1},{kind},1,1,{guid},{guid},{guid},{dev}')
        fw = SW_FW if switch else HCA_FW
        if switch:
            fw = switch_fw.get(desc.split(";")[1].split(":")[0], fw)
        psid = "MT_0000000063" if switch else "MT_0000000838"
        info.append(f"{guid},{dev},{psid},0x{fw[0]:x},0x{fw[1]:x},0x{fw[2]:x}")
    lines += ["END_NODES", "", *info, "END_NODES_INFO", "", "START_CABLE_INFO", CABLE_COLUMNS]
    for n, (desc, guid, port) in enumerate(ends):
        row = {"NodeGuid": guid, "PortGuid": guid, "PortNum": str(port), "Vendor": "Nvidia",
               "PN": "MMA4Z00-NS", "SN": f"MT2330FT{n:05d}", "Rev": "A6",
               "FWVersion": MODULE_FW, "Temperature": "45C", "RX1Power": "8512",
               "RX2Power": "8400", "RX3Power": "8650", "RX4Power": "8590",
               "RXPowerHighThresh": "34673", "RXPowerLowThresh": "467",
               "AlarmTemperatureHighThresh": "80C", "AlarmTemperatureLowThresh": "-5C"}  # fmt: skip
        for key in CABLE_COLUMNS.split(",")[17:]:
            row[key] = "0"
        host = desc.split(";")[1].split(":")[0] if desc.startswith("MF0;") else desc.split()[0]
        k = port - 1 if desc.startswith("MF0;") else int(desc.split("mlx5_")[1])
        row.update(module.get((host, k), {}))
        lines.append(",".join(row[c] for c in CABLE_COLUMNS.split(",")))
    lines.append("END_CABLE_INFO")
    return "\n".join(lines) + "\n"


def write_firmware_results(design: Design, test: object, folder: Path) -> None:
    """A healthy FW-FABRIC folder in the layout 16_firmware.sh writes: ibdiagnet2.db_csv on
    InfiniBand; ethtool -i per node device and show version per switch on Ethernet."""
    out = folder / "FW-FABRIC"
    if any(c.metric == "fw_module_outliers" for c in test.checks):  # type: ignore[attr-defined]
        out.mkdir(parents=True)
        (out / "ibdiagnet2.db_csv").write_text(db_csv(design))
        return
    (out / "nodes").mkdir(parents=True)
    (out / "switches").mkdir()
    for node in design.nodes:
        for dev in dict.fromkeys(test.devices):  # type: ignore[attr-defined]
            (out / "nodes" / f"{node.id}-{dev}.txt").write_text(
                "driver: mlx5_core\nfirmware-version: 28.39.1002 (MT_0000000838)\n"
            )
    for sw in design.switches:
        (out / "switches" / f"{sw.id}.txt").write_text(
            "SONiC Software Version: SONiC.202311.1-8c08d87\nHwSKU: Mellanox-SN2700\n"
        )


def _cable(design: Design, device: str, port: int) -> tuple[str, str, str]:
    link = next(lk for lk in design.links
                if (device, port) in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)))  # fmt: skip
    c = next(c for c in design.cables if c.link_id == link.id)
    return c.id, c.label_a, c.label_b


def _grade(design: Design, plan: object, tmp_path: Path, text: str) -> dict[str, object]:
    """Grade FW-FABRIC and LQ-FABRIC's module check on one db_csv."""
    (tmp_path / "FW-FABRIC").mkdir(exist_ok=True)
    (tmp_path / "FW-FABRIC" / "ibdiagnet2.db_csv").write_text(text)
    lq = tmp_path / "LQ-FABRIC"
    (lq / "finish").mkdir(parents=True, exist_ok=True)
    (lq / "finish" / "ibdiagnet2.db_csv").write_text(text)
    (lq / "start.epoch").write_text("1700000000\n")
    (lq / "finish.epoch").write_text("1700007800\n")
    exps = [e for e in expectations(plan)  # type: ignore[arg-type]
            if e.test_id == "FW-FABRIC" or e.metric == "lq_modules_out_of_limits"]  # fmt: skip
    return {r.metric: r for r in grade(design, exps, tmp_path).results}


# -- the plan --------------------------------------------------------------------------------------


def test_plan_has_a_firmware_test_and_an_ib_module_check() -> None:
    _, plan = _plan(IB)
    ib, fw = plan.section("fabric").tests  # type: ignore[attr-defined]
    assert ib.id == "FABRIC-IB"
    assert fw.id == "FW-FABRIC" and fw.command[0].startswith("ibdiagnet --get_cable_info ")
    assert [c.metric for c in fw.checks] == ["fw_switch_outliers", "fw_nic_outliers",
                                             "fw_module_outliers"]  # fmt: skip
    assert all(c.threshold == 0 for c in fw.checks)
    (lq,) = plan.section("linkq").tests  # type: ignore[attr-defined]
    modules = next(c for c in lq.checks if c.metric == "lq_modules_out_of_limits")
    assert "reg_access_switch_layouts.h" in modules.reason and "Alarm" in modules.reason
    assert "--get_cable_info" in lq.command[1]
    _, roce = _plan("seed000-2node")
    (eth,) = roce.section("fabric").tests  # type: ignore[attr-defined]
    assert [c.metric for c in eth.checks] == ["fw_switch_outliers", "fw_nic_outliers"]
    assert "ethtool -i" in eth.command[0] and "show version" in eth.command[1]


# -- parsers ---------------------------------------------------------------------------------------


def test_db_csv_tables_and_module_thresholds() -> None:
    design, _ = _plan(IB)
    sections = parse_db_csv(db_csv(design))
    assert {"NODES", "NODES_INFO", "CABLE_INFO"} <= set(sections)
    mods = cable_modules(sections)
    assert len(mods) == 2 * len(design.links)
    m = mods[0]
    assert (m.temperature_c, m.temp_alarm, m.rx_limits) == (45.0, (80.0, -5.0), (34673.0, 467.0))
    assert m.fw == MODULE_FW and m.judged and m.findings() == []
    assert reference_version(["1.2", "1.10", "1.10", "1.2"]) == "1.10"  # tie: the newest
    count, bad, measured = outliers(
        [("switch", "m", "1", "a"), ("switch", "m", "1", "b"), ("switch", "m", "0", "c")], "switch"
    )
    assert (count, measured) == (1, 3) and bad[0].startswith("c on 0, not 1")


def test_ibdiagnet_cables_text_as_documented() -> None:
    """The stanza of ibdiagnet's cable-diagnostics page (a passive DAC: no thresholds)."""
    text = (
        "-------------------------------------------------------\n"
        "Port=1 Lid=0x00a4 GUID=0xf45214030046a0a1 Port Name=coral-ufm-001/U1/P1\n"
        "-------------------------------------------------------\n\n"
        "Vendor: Mellanox\nOUI: 0x2c9\nPN: MCP1600-E002\nSN: MT1739VS02126\nRev: A3\n"
        "Length: 2 m\nType: Copper cable- unequalized\nTemperature: N/A\nFW Version: N/A\n"
        "RX power type: OMA\nRX1 Power: 0.000 mW, -999.999 dBm\nRX2 Power: 0.000 mW, -999.999 dBm\n"
    )
    (m,) = parse_cables_text(text)
    assert (m.port, m.desc, m.pn, m.sn, m.fw, m.temperature_c) == (
        1, "coral-ufm-001/U1", "MCP1600-E002", "MT1739VS02126", "", None)  # fmt: skip
    assert m.rx == (0.0, 0.0) and not m.judged


def test_mlxlink_module_info_with_its_alarm_thresholds() -> None:
    """``mlxlink -m``'s Module Info: value [low..high], the PDDR alarm thresholds."""
    from railplan.field.parse_module import parse_mlxlink_module

    text = (
        "Module Info\n-----------\n"
        "Temperature [C]                    : 54 [-5..75]\n"
        "Voltage [mV]                       : 3261.2 [2970..3630]\n"
        "Rx Power Current [dBm]             : 1.886,1.989,-14.2,1.976 [-10.41..6]\n"
        "Vendor Name                        : CLT\n"
    )
    r = parse_mlxlink_module(text)
    assert r.temperature_c == 54 and r.temp_limits[:2] == (75.0, -5.0) and len(r.rx_mw) == 4
    alarms, _ = r.findings()
    assert alarms == ["lane 3 RX -14.20 dBm outside its alarm range -10.41 dBm..6.00 dBm"]
    assert not parse_mlxlink_module("Temperature [C] : N/A\nRx Power Current [dBm] : N/A\n").judged


# -- grading ---------------------------------------------------------------------------------------


def test_healthy_capture_passes(tmp_path: Path) -> None:
    design, plan = _plan(IB)
    got = _grade(design, plan, tmp_path, db_csv(design))
    assert {m: r.status for m, r in got.items()} == {  # type: ignore[attr-defined]
        "fw_switch_outliers": "pass", "fw_nic_outliers": "pass",
        "fw_module_outliers": "pass", "lq_modules_out_of_limits": "pass"}  # fmt: skip
    assert f"{len(design.switches)} switches measured" in got["fw_switch_outliers"].detail  # type: ignore[attr-defined]


def test_one_switch_on_an_older_firmware_is_named(tmp_path: Path) -> None:
    design, plan = _plan(IB)
    old = sorted(s.id for s in design.switches)[1]
    got = _grade(design, plan, tmp_path, db_csv(design, switch_fw={old: (0x1F, 0x7D0, 0x3E8)}))
    sw = got["fw_switch_outliers"]
    assert (sw.status, sw.measured) == ("fail", 1.0)  # type: ignore[attr-defined]
    assert f"{old} on 31.2000.1000, not 31.2012.1068 as the other DeviceID 54002" in sw.detail  # type: ignore[attr-defined]
    assert got["fw_nic_outliers"].status == "pass"  # type: ignore[attr-defined]


def test_module_over_its_temperature_alarm_is_named_with_its_cable_label(tmp_path: Path) -> None:
    design, plan = _plan(IB)
    lk = next(lk for lk in design.links if lk.kind == "node-leaf")
    hot = {(lk.a_device, lk.a_port): {"Temperature": "83C", "HighTemperatureAlarm": "1"}}
    got = _grade(design, plan, tmp_path, db_csv(design, module=hot))
    mod = got["lq_modules_out_of_limits"]
    cable, a, b = _cable(design, lk.a_device, lk.a_port)
    assert (mod.status, mod.measured) == ("fail", 1.0)  # type: ignore[attr-defined]
    assert f"cable {cable} [{a} | {b}]" in mod.detail  # type: ignore[attr-defined]
    assert "temperature 83 C outside its alarm range -5..80 C" in mod.detail  # type: ignore[attr-defined]
    assert "alarm flags set: HighTemperatureAlarm" in mod.detail  # type: ignore[attr-defined]


def test_module_under_its_rx_threshold_and_module_firmware_outlier(tmp_path: Path) -> None:
    design, plan = _plan(IB)
    up = next(lk for lk in design.links if lk.kind != "node-leaf")
    faint = {(up.b_device, up.b_port): {"RX2Power": "120", "FWVersion": "46.100.0"}}
    got = _grade(design, plan, tmp_path, db_csv(design, module=faint))
    mod, fw = got["lq_modules_out_of_limits"], got["fw_module_outliers"]
    cable, a, b = _cable(design, up.b_device, up.b_port)
    assert (mod.status, mod.measured) == ("fail", 1.0)  # type: ignore[attr-defined]
    assert f"cable {cable} [{a} | {b}]" in mod.detail  # type: ignore[attr-defined]
    assert "lane 2 RX 120 outside its RX thresholds 467..34673" in mod.detail  # type: ignore[attr-defined]
    assert (fw.status, fw.measured) == ("fail", 1.0)  # type: ignore[attr-defined]
    assert f"cable {cable} [{a} | {b}]" in fw.detail and "on 46.100.0, not 46.120.0" in fw.detail  # type: ignore[attr-defined]


def test_missing_tool_is_not_measured(tmp_path: Path) -> None:
    design, plan = _plan(IB)
    got = _grade(design, plan, tmp_path, "railplan: not measured: ibdiagnet not installed on x\n")
    assert {r.status for r in got.values()} == {"missing"}  # type: ignore[attr-defined]
    assert all("not measured" in r.detail for r in got.values())  # type: ignore[attr-defined]


def test_ethernet_nic_and_switch_firmware_from_ethtool_and_show_version(tmp_path: Path) -> None:
    design, plan = _plan("seed000-2node")
    devices = plan.devices  # type: ignore[attr-defined]
    fw = tmp_path / "FW-FABRIC"
    (fw / "nodes").mkdir(parents=True)
    (fw / "switches").mkdir()
    odd = (design.nodes[1].id, devices[2])
    for node in design.nodes:
        for dev in dict.fromkeys(devices):
            ver = "28.39.1002" if (node.id, dev) != odd else "28.36.1010"
            (fw / "nodes" / f"{node.id}-{dev}.txt").write_text(
                f"driver: mlx5_core\nversion: 6.8.0-45-generic\nfirmware-version: {ver} "
                "(MT_0000000838)\nbus-info: 0000:1a:00.0\nsupports-statistics: yes\n"
            )
    for sw in design.switches:
        (fw / "switches" / f"{sw.id}.txt").write_text(
            "SONiC Software Version: SONiC.202311.1-8c08d87\nDistribution: Debian 11.8\n"
            "Platform: x86_64-mlnx_msn2700-r0\nHwSKU: Mellanox-SN2700\nASIC: mellanox\n"
        )
    exps = [e for e in expectations(plan) if e.test_id == "FW-FABRIC"]  # type: ignore[arg-type]
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    nic = got["fw_nic_outliers"]
    port = devices.index(odd[1])
    cable, a, b = _cable(design, odd[0], port)
    assert (nic.status, nic.measured) == ("fail", 1.0)
    assert (
        f"cable {cable} [{a} | {b}]" in nic.detail and "on 28.36.1010 (MT_0000000838)" in nic.detail
    )
    assert got["fw_switch_outliers"].status == "pass"
    # a node without ethtool: its ports are not measured, never failed
    for dev in dict.fromkeys(devices):
        (fw / "nodes" / f"{odd[0]}-{dev}.txt").write_text(
            "railplan: not measured: ethtool not installed\n"
        )
    got = {r.metric: r for r in grade(design, exps, tmp_path).results}
    assert got["fw_nic_outliers"].status == "pass"
    assert "not measured" in got["fw_nic_outliers"].detail


# -- the generated step ----------------------------------------------------------------------------


def _firmware_step(tmp_path: Path, text: str | None) -> tuple[str, Path]:
    """Run 16_firmware.sh against a stand-in ibdiagnet on a PATH the test controls."""
    design, plan = _plan(IB)
    folder = tmp_path / "scripts"
    write_scripts(plan, design, folder)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "capture.csv").write_text(text or "")
    ssh = '#!/usr/bin/env bash\nwhile [[ "$1" == -* ]]; do shift; done\nshift\nexec bash -c "$*"\n'
    tools = {"ssh": ssh}
    if text is not None:
        tools["ibdiagnet"] = (
            '#!/usr/bin/env bash\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done\n'
            f'mkdir -p "$out"\ncp "{tmp_path / "capture.csv"}" "$out/ibdiagnet2.db_csv"\n'
        )
    for tool, body in tools.items():
        (bin_dir / tool).write_text(body)
        (bin_dir / tool).chmod(0o755)
    base = tmp_path / "base"
    base.mkdir()
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "tee", "date", "tail", "dirname", "sort",
                 "cp", "wc"):  # fmt: skip
        if (found := shutil.which(tool)) is not None:
            (base / tool).symlink_to(found)
    env = {"PATH": f"{bin_dir}:{base}", "SSH": str(bin_dir / "ssh"), "HOME": str(tmp_path),
           "RESULTS": str(tmp_path / "results")}  # fmt: skip
    done = subprocess.run(["bash", str(folder / "16_firmware.sh")], env=env, capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr[-1500:]
    verdict = (tmp_path / "results" / "summary" / "verdicts.txt").read_text().strip()
    return verdict, tmp_path / "results" / "FW-FABRIC" / "ibdiagnet2.db_csv"


@pytest.mark.parametrize("case", ["healthy", "old switch", "absent"])
def test_firmware_step_judges_the_capture(case: str, tmp_path: Path) -> None:
    design, plan = _plan(IB)
    old = sorted(s.id for s in design.switches)[1]
    text = {"healthy": db_csv(design),
            "old switch": db_csv(design, switch_fw={old: (0x1F, 0x7D0, 0x3E8)}),
            "absent": None}[case]  # fmt: skip
    verdict, path = _firmware_step(tmp_path, text)
    word = {"healthy": "OK", "old switch": "FAIL", "absent": "OK"}[case]
    assert verdict.split()[:2] == ["FW-FABRIC", word], verdict
    if case == "old switch":
        assert "DeviceID 54002: 31.2000.1000 31.2012.1068" in verdict
    if case == "absent":
        assert "not measured: ibdiagnet not installed" in verdict
    (tmp_path / "g").mkdir()
    got = _grade(design, plan, tmp_path / "g", path.read_text())  # the grader agrees
    assert got["fw_switch_outliers"].status == {"healthy": "pass", "old switch": "fail",  # type: ignore[attr-defined]
                                                "absent": "missing"}[case]  # fmt: skip
    if shutil.which("shellcheck"):
        check = subprocess.run(["shellcheck", "-x", "16_firmware.sh"], cwd=tmp_path / "scripts",
                               capture_output=True, text=True)  # fmt: skip
        assert check.returncode == 0, check.stdout


def test_ethernet_firmware_step_names_the_spread_and_says_not_measured(tmp_path: Path) -> None:
    """16_firmware.sh on a RoCE design: a stand-in ethtool answers -i per netdev (one node's
    second device on an older firmware), a stand-in SONiC switch answers show version."""
    design, plan = _plan("seed000-2node")
    folder = tmp_path / "scripts"
    write_scripts(plan, design, folder)
    devices = list(dict.fromkeys(plan.devices))  # type: ignore[attr-defined]
    sysfs = tmp_path / "sys"
    for k, dev in enumerate(devices):
        (sysfs / "class" / "infiniband" / dev / "device" / "net" / f"eth{k}").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ssh = ('#!/usr/bin/env bash\nwhile [[ "$1" == -* ]]; do shift; done\nhost="$1"; shift\n'
           'if [ "$*" = "show version " ]; then printf "SONiC Software Version: SONiC.202311.1\\n'
           'HwSKU: Mellanox-SN2700\\n"; exit 0; fi\nexport HOST="$host"\nexec bash -c "$*"\n')  # fmt: skip
    odd = design.nodes[1].id
    ethtool = ('#!/usr/bin/env bash\nv=28.39.1002\n'
               f'[ "$HOST" = {odd} ] && [ "$2" = eth1 ] && v=28.36.1010\n'
               'printf "driver: mlx5_core\\nfirmware-version: %s\\n" "$v"\n')  # fmt: skip
    for tool, body in {"ssh": ssh, "ethtool": ethtool}.items():
        (bin_dir / tool).write_text(body)
        (bin_dir / tool).chmod(0o755)
    base = tmp_path / "base"
    base.mkdir()
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "tee", "date", "tail", "dirname", "sort",
                 "wc"):  # fmt: skip
        if (found := shutil.which(tool)) is not None:
            (base / tool).symlink_to(found)
    env = {"PATH": f"{bin_dir}:{base}", "SSH": str(bin_dir / "ssh"), "HOME": str(tmp_path),
           "RESULTS": str(tmp_path / "results"), "SYSFS": str(sysfs)}  # fmt: skip
    done = subprocess.run(["bash", str(folder / "16_firmware.sh")], env=env, capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr[-1500:]
    verdict = (tmp_path / "results" / "summary" / "verdicts.txt").read_text().strip()
    assert verdict.split()[:2] == ["FW-FABRIC", "FAIL"], verdict
    assert "NIC mlx5_core: 28.36.1010 28.39.1002" in verdict
    exps = [e for e in expectations(plan) if e.test_id == "FW-FABRIC"]  # type: ignore[arg-type]
    got = {r.metric: r for r in grade(design, exps, tmp_path / "results").results}
    cable, a, b = _cable(design, odd, plan.devices.index(devices[1]))  # type: ignore[attr-defined]
    assert got["fw_nic_outliers"].status == "fail" and f"cable {cable} [{a} | {b}]" in got[
        "fw_nic_outliers"].detail  # fmt: skip
    assert got["fw_switch_outliers"].status == "pass"


def test_mlxlink_outputs_collected_by_hand_are_judged_by_cable(tmp_path: Path) -> None:
    """Without ibdiagnet's cable info, ``mlxlink -m`` per HCA port (mlxlink-<node>-<dev>.txt)."""
    design, plan = _plan(IB)
    lq = tmp_path / "LQ-FABRIC"
    (lq / "finish").mkdir(parents=True)
    (lq / "start.epoch").write_text("1700000000\n")
    (lq / "finish.epoch").write_text("1700007800\n")
    node = design.nodes[0].id
    for k in range(2):
        rx = "1.886,1.989,2.281,1.976" if k == 0 else "1.886,-13.5,2.281,1.976"
        (lq / "finish" / f"mlxlink-{node}-mlx5_{k}.txt").write_text(
            f"Temperature [C]                    : 54 [-5..75]\n"
            f"Rx Power Current [dBm]             : {rx} [-10.41..6]\n"
        )
    exps = [e for e in expectations(plan) if e.metric == "lq_modules_out_of_limits"]  # type: ignore[arg-type]
    (r,) = grade(design, exps, tmp_path).results
    cable, a, b = _cable(design, node, 1)
    assert (r.status, r.measured) == ("fail", 1.0)
    assert f"cable {cable} [{a} | {b}]" in r.detail and "lane 2 RX -13.50 dBm" in r.detail
