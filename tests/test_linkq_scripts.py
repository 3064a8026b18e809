"""The link-quality script step under stand-in tools: start and finish around a soak, a verdict
per test in the ssh and Slurm runners, loud failures when a tool is missing, and results that
``grade`` reads."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from railplan.field.grade import grade
from railplan.testplan import expectations
from tests.test_linkq import dump_row, module_text
from tests.test_scripts import write
from tests.test_scripts_parallel import SRUN, SSH, _bin, _env
from tests.test_testplan import cabled, example_plan

#: ethtool: each -S call adds 1,000 corrected bits; FAKE_BAD=<host>:<netdev> adds an
#: uncorrectable symbol per call on that port
ETHTOOL = r"""#!/usr/bin/env bash
if [ "$1" = --show-fec ]; then
  printf 'FEC parameters for %s:\nConfigured FEC encodings: Auto\nActive FEC encoding: RS\n' "$2"
  exit 0
fi
if [ "$1" = -m ]; then  # the module: lane 2 dark on the port FAKE_DARK=<host>:<netdev> names
  if [ "${FAKE_DARK:-}" = "$FAKE_HOST:$2" ]; then cat "$FAKE_NET/module-dark.txt"
  else cat "$FAKE_NET/module-ok.txt"; fi
  exit 0
fi
[ "$1" = -S ] || exit 1
state="$FAKE_NET/ethtool-$FAKE_HOST-$2"
n=$(( $(cat "$state" 2> /dev/null || echo 0) + 1 ))
echo "$n" > "$state"
pcs=0
[ "${FAKE_BAD:-}" = "$FAKE_HOST:$2" ] && pcs=$n
printf 'NIC statistics:\n     rx_crc_errors_phy: 0\n     rx_symbol_err_phy: 0\n'
printf '     rx_pcs_symbol_err_phy: %s\n     rx_corrected_bits_phy: %s\n' "$pcs" $((n * 1000))
"""
#: SONiC show: FEC_UNCORR of Ethernet8 grows per call on the switch FAKE_BAD names
SHOW = r"""#!/usr/bin/env bash
state="$FAKE_NET/show-$FAKE_HOST"
n=$(( $(cat "$state" 2> /dev/null || echo 0) + 1 ))
echo "$n" > "$state"
bad=0
[ "${FAKE_BAD:-}" = "$FAKE_HOST:Ethernet8" ] && bad=$n
echo '    IFACE    STATE    FEC_CORR    FEC_UNCORR    FEC_SYMBOL_ERR'
echo '---------  -------  ----------  ------------  ----------------'
printf 'Ethernet0        U     1%s,402             0                 0\n' "$n"
printf 'Ethernet8        U     1%s,317             %s                 0\n' "$n" "$bad"
"""


def _ibdiagnet(rows: list[str]) -> str:
    body = "\\n".join(r.replace("'", "") for r in rows)
    return (
        "#!/usr/bin/env bash\n"
        'out=""; phy=0\n'
        'while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2 ;; --get_phy_info) phy=1; shift ;;'
        " *) shift ;; esac; done\n"
        'mkdir -p "$out"; echo "ibdiagnet run" > "$out/ibdiagnet2.log"\n'
        f'[ "$phy" = 1 ] && printf \'{body}\\n\' > "$out/ibdiagnet2.net_dump_ext"\n'
        "exit 0\n"
    )


def _backdate(*roots: Path) -> None:
    """The soak: move every start snapshot 130 minutes back instead of waiting (InfiniBand
    judges BER after 125 minutes up)."""
    for root in roots:
        for stamp in root.rglob("start.epoch"):
            stamp.write_text(f"{int(time.time()) - 7800}\n")


def path_without(tool: str, path: str, shim: Path) -> str:
    """``path`` with ``tool`` hidden: every folder that holds it is replaced by ``shim``, a
    folder of links to that folder's other programs. The test's stand-ins decide, not what
    happens to be installed (``.ci/run`` installs Debian's ibutils to prove it)."""
    shim.mkdir(parents=True, exist_ok=True)
    out: list[str] = []
    for d in path.split(os.pathsep):
        if not d or not (Path(d) / tool).exists():
            out.append(d)
            continue
        for entry in Path(d).iterdir():
            link = shim / entry.name
            if entry.name != tool and not link.exists():
                link.symlink_to(entry)
        if str(shim) not in out:
            out.append(str(shim))
    return os.pathsep.join(out)


def _run(folder: Path, runner: str, phase: str, env: dict[str, str]) -> None:
    script = folder / ("50_link_quality.sh" if runner == "ssh" else "slurm/50_link_quality.sbatch")
    done = subprocess.run(["bash", str(script), phase], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def _verdicts(results: Path) -> dict[str, str]:
    lines = (results / "summary" / "verdicts.txt").read_text().splitlines()
    return {line.split()[0]: line for line in lines}  # the last verdict of each test


@pytest.mark.parametrize("runner", ["ssh", "slurm"])
def test_ethernet_start_soak_finish_grades_clean_and_names_a_bad_port(
    runner: str, tmp_path: Path
) -> None:
    name = "seed001-64gpu"
    plan = example_plan(name)
    folder = write(name, tmp_path)
    bin_dir = _bin(tmp_path, {"ssh": SSH, "srun": SRUN, "ethtool": ETHTOOL, "show": SHOW})
    env = {**_env(tmp_path, bin_dir, folder), "LQ_TMP": str(tmp_path / "lq")}
    node = "node0002"
    switch = next(t.id[3:] for t in plan.section("linkq").tests if not t.nodes)
    env["FAKE_BAD"] = f"{node}:eth3"
    env["FAKE_DARK"] = f"{node}:eth5"
    (tmp_path / "net" / "module-ok.txt").write_text(module_text())
    (tmp_path / "net" / "module-dark.txt").write_text(module_text(rx_mw=(0.97, 0.0, 1.1, 1.1)))
    results = tmp_path / "results"
    _run(folder, runner, "start", env)
    _backdate(tmp_path / "lq", results)
    _run(folder, runner, "finish", env)
    verdicts = _verdicts(results)
    tests = {t.id for t in plan.section("linkq").tests}
    assert set(verdicts) == tests
    bad = verdicts.pop(f"LQ-{node}")
    assert bad.split()[1] == "FAIL" and "mlx5_3 rx_pcs_symbol_err_phy+1" in bad, bad
    assert "mlx5_5 module outside its alarm thresholds: lane 2 RX 0mW" in bad, bad
    assert all(v.split()[1] == "OK" and "soak=78" in v for v in verdicts.values()), verdicts
    report = grade(cabled(name), [e for e in expectations(plan) if e.kind == "linkq"], results)
    failed = {(r.test_id, r.metric) for r in report.results if r.status != "pass"}
    assert failed == {
        (f"LQ-{node}", "lq_ports_with_errors"),
        (f"LQ-{node}", "lq_modules_out_of_limits"),
    }
    detail = next(
        r.detail
        for r in report.results
        if r.metric == "lq_ports_with_errors" and r.status == "fail"
    )
    assert f"({node} nic3) rx_pcs_symbol_err_phy +1" in detail
    # a switch whose Ethernet8 loses codewords fails by name; without ethtool nothing passes
    env["FAKE_BAD"] = f"{switch}:Ethernet8"
    (bin_dir / "ethtool").unlink()
    _run(folder, runner, "start", env)
    _backdate(tmp_path / "lq", results)
    _run(folder, runner, "finish", env)
    verdicts = _verdicts(results)
    assert "FEC_UNCORR grew on Ethernet8+1" in verdicts[f"LQ-{switch}"]
    assert all("ethtool not installed" in v for k, v in verdicts.items() if k.startswith("LQ-node"))


@pytest.mark.parametrize("runner", ["ssh", "slurm"])
def test_infiniband_ibdiagnet_clear_then_read(runner: str, tmp_path: Path) -> None:
    name = "h100-1k"
    folder = write(name, tmp_path)
    rows = [
        "Ty : # : #IB : GUID : LID : Sta : PhysSta : LWA : LSA : Conn LID (#) : FEC mode : RTR : "
        "Raw BER : Effective BER : Symbol BER : Symbol Err : Effective Err : Node Desc",
        dump_row("CA", "node0001 mlx5_0", 1),
        dump_row("SW", "MF0;p0-leaf-su01-r0:MQM9700/U1", 3, sym_err=5),
    ]
    # ibqueryerrors: one switch port that went down twice since the clear
    queryerrors = (
        "#!/usr/bin/env bash\n"
        "echo 'Errors for 0xb83fd203009a1c00 \"MF0;p0-leaf-su01-r0:MQM9700/U1\"'\n"
        "echo '   GUID 0xb83fd203009a1c00 port 3: [LinkDownedCounter == 2 (2.000 )]'\n"
    )
    bin_dir = _bin(tmp_path, {"ssh": SSH, "srun": SRUN, "ibdiagnet": _ibdiagnet(rows),
                              "ibqueryerrors": queryerrors})  # fmt: skip
    env = {**_env(tmp_path, bin_dir, folder), "LQ_TMP": str(tmp_path / "lq")}
    results = tmp_path / "results"
    _run(folder, runner, "start", env)
    assert (tmp_path / "lq" / "start" / "ibdiagnet2.log").is_file()
    started = _verdicts(results)["LQ-FABRIC"]
    assert started.split()[1] == "OK" and "counters cleared from node0001" in started
    _backdate(results)
    _run(folder, runner, "finish", env)
    line = _verdicts(results)["LQ-FABRIC"]
    assert line.split()[1] == "FAIL" and "ports=2 over_ber=0 with_symbol_errors=1" in line, line
    assert "link_downs=1" in line, line
    assert "MF0;p0-leaf-su01-r0:MQM9700/U1/3" in line
    (bin_dir / "ibdiagnet").unlink()
    # a real ibdiagnet (Debian's ibutils, MLNX_OFED) on this machine must not stand in
    _run(
        folder,
        runner,
        "finish",
        {**env, "PATH": path_without("ibdiagnet", env["PATH"], tmp_path / "shim")},
    )
    assert "ibdiagnet not installed" in _verdicts(results)["LQ-FABRIC"]
