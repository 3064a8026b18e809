"""Generated scripts: bash -n and shellcheck clean, tables match the plan, and a run against
stand-in tools leaves results that railplan.field.grade reads and passes."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from railplan.field.grade import grade
from railplan.render.scripts import executable, render_scripts
from railplan.testplan import expectations
from tests.test_testplan import cabled, example_plan

NAMES = ["seed000-2node", "seed001-64gpu", "seed003-matrix", "fat-tree-1k"]


def write(name: str, root: Path) -> Path:
    out = root / name
    for rel, text in render_scripts(example_plan(name), cabled(name)).items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if executable(rel):
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return out


def scripts_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".sh", ".sbatch"))


@pytest.mark.parametrize("name", NAMES)
def test_bash_syntax(name: str, tmp_path: Path) -> None:
    folder = write(name, tmp_path)
    files = scripts_in(folder)
    assert {p.name for p in files} >= {"run_all.sh", "lib.sh", "30_pairs.sh", "submit.sh"}
    for path in files:
        done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{path.name}: {done.stderr}"


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
@pytest.mark.parametrize("name", NAMES)
def test_shellcheck_clean(name: str, tmp_path: Path) -> None:
    folder = write(name, tmp_path)
    files = [str(p.relative_to(folder)) for p in scripts_in(folder)]
    done = subprocess.run(
        ["shellcheck", "-x", "--severity=style", *files], cwd=folder, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[:3000]


def test_tables_match_the_plan(tmp_path: Path) -> None:
    tp = example_plan("seed001-64gpu")
    folder = write("seed001-64gpu", tmp_path)

    def rows(table: str) -> list[list[str]]:
        lines = (folder / "data" / table).read_text().splitlines()[1:]
        return [line.split("\t") for line in lines if line]

    assert [r[0] for r in rows("rdma.tsv")] == [t.id for t in tp.section("rdma").tests]
    assert [r[0] for r in rows("pairs.tsv")] == [t.id for t in tp.section("pairs").tests]
    assert [r[0] for r in rows("nccl.tsv")] == [t.id for t in tp.section("nccl").tests]
    assert [r[1] for r in rows("nodes.tsv")] == [n.id for n in cabled("seed001-64gpu").nodes]
    pair = rows("pairs.tsv")[0]
    assert "NCCL_ALGO=Ring" in pair[3] and "NCCL_TESTS_MIN_BW=" in pair[3]
    hosts = (folder / "hosts").read_text().split("\n")
    assert hosts[0] == "node0001 slots=8"


FAKES = {
    "ssh": """#!/usr/bin/env bash
while [[ "$1" == -* ]]; do if [[ "$1" == -o || "$1" == -l ]]; then shift 2; else shift; fi; done
shift
exec bash -c "$*"
""",
    "lspci": "#!/bin/sh\nprintf '00:01.0 PCI bridge: x\\n\\t\\tACSCtl:\\tSrcValid- TransBlk-\\n'\n"
    "printf '18:00.0 Ethernet controller: x\\n\\t\\tLnkCap:\\tPort #0, Speed 32GT/s, Width x16\\n'\n"
    "printf '\\t\\tLnkSta:\\tSpeed 32GT/s, Width x16\\n'\n",
    "sudo": '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n',
    "lsmod": "#!/bin/sh\nprintf 'Module Size Used by\\nnvidia_peermem 16384 0\\n'\n",
    "ibstat": """#!/bin/sh
printf "CA '%s'\\n\\tNumber of ports: 1\\n\\tPort 1:\\n\\t\\tState: Active\\n\\t\\tRate: 400\\n" "$1"
""",
    "ibv_devinfo": """#!/bin/sh
printf "hca_id:\\t%s\\n\\tport:\\t1\\n\\t\\t\\tstate:\\t\\t\\tPORT_ACTIVE (4)\\n\\t\\t\\tactive_mtu:\\t\\t4096 (5)\\n" "$2"
""",
    # the rows of an 8-GPU node whose NIC k sits on GPU k's PCIe switch (layout of the capture in
    # NVIDIA/nccl issue #1264), NICs named by the NIC Legend; TOPO_FAR moves one NIC away
    "nvidia-smi": """#!/bin/bash
far="${TOPO_FAR:-}"
printf '\\t'; for g in 0 1 2 3 4 5 6 7; do printf 'GPU%s\\t' $g; done
for k in 0 1 2 3 4 5 6 7; do printf 'NIC%s\\t' $k; done; printf 'CPU Affinity\\tNUMA Affinity\\n'
for g in 0 1 2 3 4 5 6 7; do
  printf 'GPU%s' $g
  for h in 0 1 2 3 4 5 6 7; do [ $g = $h ] && printf '\\t X ' || printf '\\tNV18'; done
  for k in 0 1 2 3 4 5 6 7; do
    if [ $g = $k ] && [ "$far" != $k ]; then printf '\\tPIX'; else printf '\\tSYS'; fi
  done
  printf '\\t0-55\\t0\\n'
done
printf '\\nNIC Legend:\\n\\n'
for k in 0 1 2 3 4 5 6 7; do printf '  NIC%s: mlx5_%s\\n' $k $k; done
""",
    "mlnx_qos": "#!/bin/sh\necho 'enabled 0 0 0 1 0 0 0 0'\n",
    # a clean port: no uncorrectable symbol, a few corrected bits (mlx5 counter names)
    "ethtool": """#!/bin/sh
[ "$1" = -i ] && { printf 'driver: mlx5_core\\nfirmware-version: 28.39.1002\\n'; exit 0; }
[ "$1" = -S ] || { echo "Active FEC encoding: RS"; exit 0; }
printf 'NIC statistics:\\n     rx_crc_errors_phy: 0\\n     rx_pcs_symbol_err_phy: 0\\n'
printf '     rx_corrected_bits_phy: 1200\\n'
""",
    # SONiC show interfaces counters fec-stats with no uncorrectable codeword
    "show": """#!/bin/sh
[ "$1" = version ] && { printf 'SONiC Software Version: SONiC.202311.1\\nHwSKU: Mellanox-SN2700\\n'; exit 0; }
echo '    IFACE    STATE    FEC_CORR    FEC_UNCORR    FEC_SYMBOL_ERR'
echo '---------  -------  ----------  ------------  ----------------'
echo 'Ethernet0        U     130,402             0                 0'
""",
    "timeout": '#!/bin/sh\nshift\nexec "$@"\n',
    "ib_write_bw": """#!/bin/sh
for a in "$@"; do last=$a; done
case "$last" in node*) ;; *) exit 0;; esac
echo ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
echo ' 65536      4000000          392.10             391.96               0.747602'
""",
    "ib_write_lat": """#!/bin/sh
for a in "$@"; do last=$a; done
case "$last" in node*) ;; *) exit 0;; esac
echo ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]'
echo ' 2       10000          2.40           5.10         2.51               2.52           0.03            2.60                   4.90'
""",
    "mpirun": """#!/bin/bash
bw=369.92
[[ "$*" == *alltoall_perf* ]] && bw=79.40
echo "node0001:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"
echo "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong"
echo "  8589934592    2147483648     float     sum      -1   371000   23.15   $bw      0   371100   23.15   $bw      0"
echo "# Out of bounds values : 0 OK"
echo "# Avg bus bandwidth    : $bw"
""",
}


def test_run_against_stand_in_tools_and_grade(tmp_path: Path) -> None:
    """The seed 000 plan run end to end with tools that answer like the seed's testbed did."""
    name = "seed000-2node"
    folder = write(name, tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool, text in FAKES.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    sysfs = tmp_path / "sys"
    for k in range(8):
        ib = sysfs / "class" / "infiniband" / f"mlx5_{k}"
        (ib / "ports" / "1" / "gid_attrs" / "types").mkdir(parents=True)
        (ib / "ports" / "1" / "gid_attrs" / "types" / "3").write_text("RoCE v2\n")
        (ib / "device" / "net" / f"eth{k}").mkdir(parents=True)
        ecn = sysfs / "class" / "net" / f"eth{k}" / "ecn" / "roce_np" / "enable"
        ecn.mkdir(parents=True)
        (ecn / "3").write_text("1\n")
    results = tmp_path / "results"
    env = {
        "SYSFS": str(sysfs),
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SSH": str(bin_dir / "ssh"),
        "MPIRUN": str(bin_dir / "mpirun"),
        "NCCL_TESTS": str(bin_dir),
        "RESULTS": str(results),
        "SERVER_WAIT": "0",
    }
    env["LQ_TMP"] = str(tmp_path / "lq")
    steps = ("00_node_checks.sh", "16_firmware.sh", "50_link_quality.sh start", "20_rdma.sh", "30_pairs.sh",
             "40_nccl.sh", "50_link_quality.sh finish")  # fmt: skip
    for step in steps:
        script, *args = step.split()
        done = subprocess.run(
            [str(folder / script), *args], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, f"{step}: {done.stderr[-2000:]}"
        for stamp in [*tmp_path.rglob("start.epoch")] if step.endswith("start") else []:
            stamp.write_text(f"{int(stamp.read_text()) - 3600}\n")  # the soak, without the wait
    verdicts = (results / "summary" / "verdicts.txt").read_text()
    assert "PAIR-0001" in verdicts and "BW-same-leaf-nic7" in verdicts
    tp = example_plan(name)
    report = grade(cabled(name), expectations(tp), results)
    by_status: dict[str, set[str]] = {}
    for r in report.results:
        by_status.setdefault(r.status, set()).add(r.test_id)
    graded = {t.id for t in tp.tests() if t.kind != "cabling"}
    assert graded <= by_status.get("pass", set()) | by_status.get("skipped", set())
    bad = [(r.test_id, r.metric, r.detail) for r in report.results if r.status in ("fail", "error")]
    assert not bad


def test_cli_testplan_writes_pdf_data_and_scripts(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.test_testplan import ROOT

    spec = ROOT / "examples" / "seed000-2node.yaml"
    r = cli("testplan", spec, "-o", tmp_path, "--naive", "--gid-index", "5")
    assert r.code == 0, r.err
    for name in ("testplan.pdf", "testplan.yaml", "testplan.json", "testplan.txt"):
        assert (tmp_path / name).stat().st_size > 0
    run_all = tmp_path / "scripts" / "run_all.sh"
    assert os.access(run_all, os.X_OK)
    assert "GID_INDEX=5" in (tmp_path / "scripts" / "lib.sh").read_text()
    assert "coverage:" in r.err
