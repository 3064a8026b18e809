"""Generated scripts run in parallel without a mistake: distinct perftest ports per server in a
round, every probe reaching the device the plan names, and verdicts as strict as the plan in
every runner (ssh/mpirun and Slurm)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from railplan.testplan.rdma import PERFTEST_PORT
from tests.test_scripts import FAKES, write
from tests.test_testplan import example_params, example_plan

#: stand-in perftest: a server binds FAKE_NET/<host>-<port> (a second server on the same port
#: fails as ib_write_bw does); a client connects to <peer>-<port> and reports the device it met
PERFTEST = r"""#!/usr/bin/env bash
tool="${0##*/}"
dev=""
port=18515
peer=""
while [ $# -gt 0 ]; do
  case "$1" in
    -d) dev="$2"; shift 2 ;;
    -p) port="$2"; shift 2 ;;
    -x | -D | -n | -q) shift 2 ;;
    -*) shift ;;
    *) peer="$1"; shift ;;
  esac
done
host="${FAKE_HOST:?}"
if [ -z "$peer" ]; then
  key="$FAKE_NET/$host-$port"
  if ! mkdir "$key" 2> /dev/null; then
    echo "Couldn't listen to port $port"
    exit 1
  fi
  echo "$dev" > "$key/dev.tmp" && mv "$key/dev.tmp" "$key/dev"
  for _ in $(seq 400); do [ -e "$key/done" ] && break; sleep 0.01; done
  rm -rf "$key"
  exit 0
fi
key="$FAKE_NET/$peer-$port"
for _ in $(seq 400); do [ -e "$key/dev" ] && break; sleep 0.01; done
if [ ! -e "$key/dev" ]; then
  echo "Couldn't connect to $peer:$port"
  exit 1
fi
sdev="$(cat "$key/dev")"
sleep "${FAKE_RUN_S:-0.2}"  # the measurement: the server holds its port until the client is done
touch "$key/done"
echo "# reached $peer:$sdev from $host:$dev on port $port"
if [ "$tool" = ib_write_lat ]; then
  echo ' #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]'
  echo ' 2       10000          2.40           5.10         2.51               2.52'
else
  echo ' #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]'
  echo ' 65536      4000000          392.10             391.96               0.747602'
fi
"""
SSH = """#!/usr/bin/env bash
while [[ "$1" == -* ]]; do if [[ "$1" == -o || "$1" == -l ]]; then shift 2; else shift; fi; done
export FAKE_HOST="$1"
shift
exec bash -c "$*"
"""
SRUN = """#!/usr/bin/env bash
hosts=""
while [[ "$1" == -* ]]; do
  case "$1" in
    -w) hosts="$2"; shift 2 ;;
    -N | -n) shift 2 ;;
    *) shift ;;
  esac
done
if [ -z "$hosts" ] && [ "$1" = bash ]; then  # one task per node of the allocation
  for h in $(awk 'NF { print $1 }' "$FAKE_HOSTS"); do
    SLURMD_NODENAME="$h" FAKE_HOST="$h" "$@"
  done
  exit 0
fi
FAKE_HOST="${hosts%%,*}" exec "$@"
"""


@pytest.mark.parametrize("name", example_params())
def test_no_node_runs_two_servers_on_one_port_in_a_round(name: str) -> None:
    plan = example_plan(name)
    rdma = plan.section("rdma").tests
    assert rdma
    concurrent = Counter((t.round, t.nodes[0], t.tcp_port) for t in rdma if t.round > 0)
    assert not [k for k, n in concurrent.items() if n > 1]
    for t in rdma:
        assert t.tcp_port >= PERFTEST_PORT
        server, client = t.command
        assert server.endswith(f"-p {t.tcp_port}") and f"-p {t.tcp_port} " in client
        assert t.round > 0 or t.tcp_port == PERFTEST_PORT


def _bin(tmp_path: Path, extra: dict[str, str]) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool, text in {**FAKES, "ib_write_bw": PERFTEST, "ib_write_lat": PERFTEST, **extra}.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    return bin_dir


def _sysfs(root: Path) -> Path:
    """A /sys where every mlx5 device has a RoCE v2 GID 3 and ECN on priority 3."""
    for k in range(8):
        ib = root / "class" / "infiniband" / f"mlx5_{k}"
        (ib / "ports" / "1" / "gid_attrs" / "types").mkdir(parents=True, exist_ok=True)
        (ib / "ports" / "1" / "gid_attrs" / "types" / "3").write_text("RoCE v2\n")
        (ib / "device" / "net" / f"eth{k}").mkdir(parents=True, exist_ok=True)
        ecn = root / "class" / "net" / f"eth{k}" / "ecn" / "roce_np" / "enable"
        ecn.mkdir(parents=True, exist_ok=True)
        (ecn / "3").write_text("1\n")
    return root


def _env(tmp_path: Path, bin_dir: Path, folder: Path) -> dict[str, str]:
    (tmp_path / "net").mkdir(exist_ok=True)
    return {
        **os.environ,
        "SYSFS": str(_sysfs(tmp_path / "sys")),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SSH": str(bin_dir / "ssh"),
        "MPIRUN": str(bin_dir / "mpirun"),
        "NCCL_TESTS": str(bin_dir),
        "RESULTS": str(tmp_path / "results"),
        "SERVER_WAIT": "0",
        "FAKE_NET": str(tmp_path / "net"),
        "FAKE_HOSTS": str(folder / "hosts"),
        "RAILPLAN_SCRIPTS": str(folder),
        "SLURM_JOB_NUM_NODES": str(len((folder / "hosts").read_text().split("\n")) - 1),
    }


@pytest.mark.parametrize("runner", ["ssh", "slurm"])
@pytest.mark.parametrize("name", ["seed003-roft", "seed003-matrix"])
def test_parallel_rounds_reach_the_intended_devices(name: str, runner: str, tmp_path: Path) -> None:
    """seed003-roft: rail-crossing probes with four servers on one node in one round;
    seed003-matrix: bonded NICs (one bond device per NIC, -q 2). Every probe meets the server
    device the plan names, on its own port, and passes."""
    plan = example_plan(name)
    probes = [t for t in plan.section("rdma").tests if t.round > 0]
    if name == "seed003-roft":
        assert max(Counter((t.round, t.nodes[0]) for t in probes).values()) >= 4
    else:
        assert all(" -q 2 " in t.command[1] for t in plan.section("rdma").tests if "BW" in t.id)
    folder = write(name, tmp_path)
    bin_dir = _bin(tmp_path, {"ssh": SSH, "srun": SRUN})
    script = folder / ("20_rdma.sh" if runner == "ssh" else "slurm/20_rdma.sbatch")
    done = subprocess.run(
        ["bash", str(script)], env=_env(tmp_path, bin_dir, folder), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = tmp_path / "results"
    for t in plan.section("rdma").tests:
        out = (results / f"{t.id}.txt").read_text()
        server, client = t.nodes
        sdev, cdev = t.devices
        assert f"# reached {server}:{sdev} from {client}:{cdev} on port {t.tcp_port}" in out, t.id
    verdicts = (results / "summary" / "verdicts.txt").read_text().splitlines()
    status = {line.split()[0]: line.split()[1] for line in verdicts}
    assert status == {t.id: "OK" for t in plan.section("rdma").tests}


# -- verdicts as strict as the plan --------------------------------------------------------------

IBSTAT_200 = FAKES["ibstat"].replace("Rate: 400", "Rate: 200")
MTU_1024 = FAKES["ibv_devinfo"].replace("active_mtu:\\t\\t4096 (5)", "active_mtu:\\t\\t1024 (3)")
LSPCI_DENIED = "#!/bin/sh\nprintf '00:01.0 PCI bridge: x\\n\\tCapabilities: <access denied>\\n'\n"
TOPO_FAR_3 = FAKES["nvidia-smi"].replace("${TOPO_FAR:-}", "3")
NOT_ROOT = {"id": "#!/bin/sh\necho 1000\n", "sudo": "#!/bin/sh\nexit 1\n"}


@pytest.mark.parametrize(
    "fakes, missing, problem",
    [
        ({}, (), ""),
        ({"ibstat": IBSTAT_200}, (), "0 of 8 ports at 400 Gb/s"),
        ({"ibv_devinfo": MTU_1024}, (), "0 of 8 ports at active MTU 4096"),
        ({"lspci": LSPCI_DENIED}, (), "<access denied>: ACS not measured"),
        (NOT_ROOT, (), "sudo -n refused: ACS not measured"),
        (
            {"nvidia-smi": TOPO_FAR_3},
            (),
            "7 of 8 NICs at PIX/PXB from their GPU (nvidia-smi topo -m: mlx5_3=SYS@GPU3)",
        ),
    ],
)
def test_node_probe_fails_what_it_cannot_measure(
    fakes: dict[str, str], missing: tuple[str, ...], problem: str, tmp_path: Path
) -> None:
    folder = write("seed001-64gpu", tmp_path)
    bin_dir = _bin(tmp_path, fakes)
    for tool in missing:
        (bin_dir / tool).unlink()
    env = {**_env(tmp_path, bin_dir, folder), "PATH": f"{bin_dir}:/usr/bin:/bin"}
    devices = [f"mlx5_{k}" for k in range(8)]
    done = subprocess.run(
        ["bash", str(folder / "node_probe.sh"), str(tmp_path / "probe"), "-1", "3", "400", "4096",
         *devices],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    last = done.stdout.strip().splitlines()[-1]
    if not problem:
        assert (
            last.startswith("VERDICT OK ")
            and "ports_mtu=8/8 ports_at_rate=8/8 nics_near_gpu=8/8" in last
        )
    else:
        assert last.startswith("VERDICT FAIL ") and problem in last, last


@pytest.mark.parametrize(
    "missing, figure, note",
    [
        (("ibstat",), "ports_active=nm", "ports_active, ports_at_rate (ibstat not installed)"),
        (("nvidia-smi",), "nics_near_gpu=nm", "nics_near_gpu (nvidia-smi not installed)"),
        (
            ("lspci",),
            "pcie_below_nominal=nm",
            "acs_srcvalid_on, pcie_below_nominal (lspci not installed)",
        ),
    ],
)
def test_node_probe_says_not_measured_for_a_missing_tool(
    missing: tuple[str, ...], figure: str, note: str, tmp_path: Path
) -> None:
    """A tool that is not installed: its check is "not measured", the node is not failed for it,
    its file says so (the grader reports the check missing), the other checks still count."""
    folder = write("seed001-64gpu", tmp_path)
    bin_dir = _bin(tmp_path, {})
    for tool in missing:
        (bin_dir / tool).unlink()
    env = {**_env(tmp_path, bin_dir, folder), "PATH": f"{bin_dir}:{_base_tools(tmp_path)}"}
    devices = [f"mlx5_{k}" for k in range(8)]
    probe = tmp_path / "probe"
    done = subprocess.run(
        ["bash", str(folder / "node_probe.sh"), str(probe), "-1", "3", "400", "4096", *devices],
        env=env, capture_output=True, text=True,
    )  # fmt: skip
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("VERDICT OK ") and figure in last and f"not measured: {note}" in last
    assert "nvidia_peermem=1" in last
    written = {p.name: p.read_text() for p in probe.iterdir()}
    assert sum(t.startswith("railplan: not measured:") for t in written.values()) == 1


def _base_tools(tmp_path: Path) -> Path:
    """Only the shell's own tools, so that no tool installed on this machine stands in."""
    base = tmp_path / "base"
    base.mkdir()
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "readlink", "id", "tail", "sort", "wc"):
        if (found := shutil.which(tool)) is not None:
            (base / tool).symlink_to(found)
    return base


def _nccl_log(gdr_channels: int, channels: int, avg: float | None) -> str:
    lines = [
        f"n1:1:1 [0] NCCL INFO Channel {c:02d}/0 : 0[0] -> 8[0] [send] via NET/IB/{c}"
        + ("/GDRDMA" if c < gdr_channels else "")
        for c in range(channels)
    ]
    lines.append("n1:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read")
    if avg is not None:
        lines.append(f"# Avg bus bandwidth    : {avg} ")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "log, code, status, word",
    [
        (_nccl_log(4, 4, 369.92), 0, "OK", "GDRDMA on 4/4 NET channels"),
        (_nccl_log(3, 4, 369.92), 0, "FAIL", "GDRDMA on 3/4 NET channels"),
        (_nccl_log(4, 4, 185.0), 0, "FAIL", "185.0 GB/s (pass >= 333.04)"),
        (_nccl_log(4, 4, 369.92), 1, "FAIL", "exit 1"),
        (_nccl_log(0, 0, 369.92), 0, "FAIL", "GDRDMA on 0/0"),
        (_nccl_log(4, 4, None), 0, "FAIL", "not measured"),
    ],
)
def test_nccl_verdict_is_nccl_tests_rule_and_gdrdma_on_every_channel(
    log: str, code: int, status: str, word: str, tmp_path: Path
) -> None:
    folder = write("seed000-2node", tmp_path)
    (tmp_path / "nccl.log").write_text(log)
    env = _env(tmp_path, _bin(tmp_path, {}), folder)
    script = (
        f'HERE="{folder}"; . "{folder}/lib.sh"; judge_nccl T 333.04 "{tmp_path}/nccl.log" {code}'
    )
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.split()[1] == status and word in line, line


def test_slurm_variant_records_verdicts_for_every_step(tmp_path: Path) -> None:
    """Node checks, RDMA, pairs and NCCL under (stand-in) srun: one verdict per test, all OK,
    and a node the allocation never ran on fails instead of vanishing."""
    name = "seed001-64gpu"
    plan = example_plan(name)
    folder = write(name, tmp_path)
    nccl = FAKES["mpirun"]
    bin_dir = _bin(tmp_path, {"ssh": SSH, "srun": SRUN, "all_reduce_perf": nccl,
                              "alltoall_perf": nccl.replace("bw=369.92", "bw=79.40")})  # fmt: skip
    env = _env(tmp_path, bin_dir, folder)
    hosts = (folder / "hosts").read_text().splitlines()
    env["FAKE_HOSTS"] = str(tmp_path / "alloc")
    (tmp_path / "alloc").write_text("\n".join(hosts[:-1]) + "\n")  # the last node never runs
    env["LQ_TMP"] = str(tmp_path / "lq")
    steps = ("00_node_checks", "50_link_quality start", "20_rdma", "30_pairs", "40_nccl",
             "50_link_quality finish")  # fmt: skip
    for step in steps:
        job, *args = step.split()
        done = subprocess.run(
            ["bash", str(folder / "slurm" / f"{job}.sbatch"), *args], env=env,
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, f"{step}: {done.stderr[-2000:]}"
        for stamp in [*tmp_path.rglob("start.epoch")] if step.endswith("start") else []:
            stamp.write_text(f"{int(stamp.read_text()) - 3600}\n")  # the soak, without the wait
    lines = (tmp_path / "results" / "summary" / "verdicts.txt").read_text().splitlines()
    status = {line.split()[0]: line.split()[1] for line in lines}
    # the cabling and firmware steps run from the control host (bash), not as Slurm jobs
    graded = [t.id for t in plan.tests() if t.kind not in ("cabling", "firmware")]
    assert sorted(status) == sorted(graded)
    lost = f"NODE-{hosts[-1].split()[0]}"
    assert status.pop(lost) == "FAIL"
    assert set(status.values()) == {"OK"}, [k for k, v in status.items() if v != "OK"]
