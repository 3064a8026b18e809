"""A throwaway Slurm controller on 127.0.0.1: munged and slurmctld in a temp folder, then stopped.

Debian's ``munge``, ``slurmctld`` and ``slurm-client`` (22.05 on Debian 12) are enough: the
design's nodes are ``State=CLOUD`` nodes with ``ResumeProgram=/bin/true``, so no slurmd runs and
the controller still allocates them (the jobs wait in CONFIGURING, their node lists set by the
topology plugin). Ports are chosen free, state and sockets live in the temp folder, and both
daemons run in the foreground as children of the test, stopped when it ends.
"""

from __future__ import annotations

import getpass
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from railplan.render.hostlist import compress

TOOLS = ("munged", "slurmctld", "scontrol", "sbatch", "squeue")
MISSING = [t for t in TOOLS if shutil.which(t) is None]
NEEDS_SLURM = pytest.mark.skipif(
    bool(MISSING),
    reason=f"{', '.join(MISSING)} not installed (Debian: apt-get install slurmctld slurm-client "
    "munge; .ci/run installs them as root)",
)


def _free_ports(count: int) -> list[int]:
    held, ports = [], []
    for _ in range(count):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        held.append(s)
        ports.append(s.getsockname()[1])
    for s in held:
        s.close()
    return ports


@dataclass
class Slurm:
    """A running controller: run its clients with ``SLURM_CONF`` set."""

    folder: Path
    env: dict[str, str]

    def run(self, *argv: str, check: bool = True) -> str:
        done = subprocess.run(
            argv, env=self.env, capture_output=True, text=True, timeout=60, check=False
        )
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv)} failed: {done.stderr or done.stdout}")
        return done.stdout

    def topology(self) -> list[dict[str, object]]:
        """``scontrol show topology``, one dict per switch: name, level, nodes, switches."""
        out = []
        for line in self.run("scontrol", "show", "topology").splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            if "SwitchName" not in fields:
                continue
            out.append(
                {
                    "name": fields["SwitchName"],
                    "level": int(fields["Level"]),
                    "nodes": self.hostnames(fields.get("Nodes", "")),
                    "switches": self.hostnames(fields.get("Switches", "")),
                }
            )
        return out

    def hostnames(self, expression: str) -> list[str]:
        """Slurm's own expansion of a hostlist expression."""
        if not expression or expression == "(null)":
            return []
        return self.run("scontrol", "show", "hostnames", expression).split()

    def submit(self, nodes: int) -> str:
        out = self.run("sbatch", "--parsable", "-N", str(nodes), "-o", "/dev/null", "--wrap=true")
        return out.strip().split(";")[0]

    def allocation(self, job: str, wait_s: float = 20.0) -> list[str]:
        """The nodes the controller gave ``job`` (it waits in CONFIGURING on CLOUD nodes)."""
        end = time.monotonic() + wait_s
        while time.monotonic() < end:
            out = self.run("squeue", "-h", "-j", job, "-o", "%N").strip()
            if out and out != "(null)":
                return self.hostnames(out)
            time.sleep(0.2)
        raise AssertionError(f"job {job} got no nodes in {wait_s} s: {self.log()[-2000:]}")

    def log(self) -> str:
        path = self.folder / "slurmctld.log"
        return path.read_text(errors="replace") if path.exists() else ""


def slurm_conf(folder: Path, nodes: Sequence[str], plugin: str = "topology/tree") -> str:
    ctld, slurmd = _free_ports(2)
    user = getpass.getuser()
    return "\n".join(
        [
            "ClusterName=railplan",
            "SlurmctldHost=localhost(127.0.0.1)",
            f"SlurmctldPort={ctld}",
            f"SlurmdPort={slurmd}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={folder}/munge/munge.socket",
            f"StateSaveLocation={folder}/state",
            f"SlurmdSpoolDir={folder}/spool",
            f"SlurmctldPidFile={folder}/slurmctld.pid",
            f"SlurmctldLogFile={folder}/slurmctld.log",
            f"SlurmUser={user}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SelectType=select/cons_tres",
            f"TopologyPlugin={plugin}",
            "SchedulerType=sched/backfill",
            "SchedulerParameters=batch_sched_delay=0,sched_min_interval=0",
            "MpiDefault=none",
            "JobCompType=jobcomp/none",
            "AccountingStorageType=accounting_storage/none",
            "MailProg=/bin/true",
            # CLOUD nodes: allocated without a slurmd; "resumed" by a program that does nothing
            "SuspendProgram=/bin/true",
            "ResumeProgram=/bin/true",
            "SuspendTime=3600",
            "ResumeTimeout=3600",
            f"NodeName={compress(nodes)} CPUs=1 State=CLOUD",
            "PartitionName=all Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@contextmanager
def slurmctld(folder: Path, nodes: Sequence[str], topology_conf: str) -> Iterator[Slurm]:
    """munged and slurmctld with ``topology_conf``; both stopped when the block ends."""
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    for sub in ("munge", "state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
        (folder / sub).chmod(0o700)
    key = folder / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    (folder / "slurm.conf").write_text(slurm_conf(folder, nodes))
    (folder / "topology.conf").write_text(topology_conf)
    env = dict(os.environ, SLURM_CONF=str(folder / "slurm.conf"))
    m = folder / "munge"
    munged = subprocess.Popen(
        ["munged", "--foreground", "--force", f"--socket={m}/munge.socket",
         f"--key-file={key}", f"--pid-file={m}/munged.pid", f"--log-file={m}/munged.log",
         f"--seed-file={m}/seed"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    ctld: subprocess.Popen[bytes] | None = None
    try:
        _wait(lambda: (m / "munge.socket").exists(), "munged", m / "munged.log")
        ctld = subprocess.Popen(
            ["slurmctld", "-D", "-c", "-i"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        slurm = Slurm(folder, env)

        def up() -> bool:
            assert ctld is not None
            if ctld.poll() is not None:
                raise AssertionError(f"slurmctld exited: {slurm.log()[-3000:]}")
            ping = subprocess.run(
                ["scontrol", "ping"], env=env, capture_output=True, text=True, timeout=20
            )
            return " is UP" in ping.stdout

        _wait(up, "slurmctld", folder / "slurmctld.log")
        yield slurm
    finally:
        if ctld is not None:
            _stop(ctld)  # SIGTERM: slurmctld saves its state and exits
        _stop(munged)


def _wait(ready: object, what: str, log: Path, timeout_s: float = 30.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if ready():  # type: ignore[operator]
            return
        time.sleep(0.1)
    text = log.read_text(errors="replace")[-2000:] if log.exists() else "(no log)"
    raise AssertionError(f"{what} did not start in {timeout_s} s: {text}")
