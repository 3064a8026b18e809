"""Hostile names never run as commands in the generated scripts (they run as root on every node).

Two layers, each tested on its own: every name that reaches a script must match a strict
pattern, so a hostile one is refused (exit 2 from the CLI); and with that check switched off,
the quoting alone keeps every hostile name inert: the scripts still pass ``bash -n`` and a run
against stand-in ssh, mpirun, srun and node tools (an ssh that honours ``-oProxyCommand`` as
OpenSSH does, and runs the remote command in a shell) creates no marker file.
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
from pathlib import Path

import pytest

from railplan.catalog import load_catalog
from railplan.design import Design
from railplan.errors import DesignFileError
from railplan.render import scripts
from railplan.render.scripts import executable, render_scripts
from railplan.render.shell import shell_word
from railplan.testplan import TestPlanOptions as Options
from railplan.testplan import build_testplan
from tests.test_testplan import cabled

FIELDS = ("design", "revision", "node", "switch", "device")


def payloads(marker: Path) -> list[str]:
    m = str(marker)
    return [
        f"x$(touch {m})",
        f"x`touch {m}`",
        f"x;touch {m}",
        f"x\ntouch {m}\n",
        f"-oProxyCommand=touch {m}",
        f"x'$(touch {m})'",
        f'x"$(touch {m})"',
        f"x|touch {m}|",
        f"x\ttouch {m}",
        f"x && touch {m} #",
    ]


def rename(design: Design, old: str, new: str) -> Design:
    """The design with device ``old`` called ``new`` everywhere it is referenced."""

    def swap(v: str) -> str:
        return new if v == old else v

    return dataclasses.replace(
        design,
        nodes=tuple(dataclasses.replace(n, id=swap(n.id)) for n in design.nodes),
        switches=tuple(dataclasses.replace(s, id=swap(s.id)) for s in design.switches),
        links=tuple(
            dataclasses.replace(lk, a_device=swap(lk.a_device), b_device=swap(lk.b_device))
            for lk in design.links
        ),
        placements=tuple(dataclasses.replace(p, device=swap(p.device)) for p in design.placements),
    )


def hostile_plan(values: dict[str, str]):  # type: ignore[no-untyped-def]
    """(plan, design) of the seed 000 testbed with the given fields set to hostile values."""
    design = cabled("seed000-2node")
    if "design" in values:
        design = dataclasses.replace(design, name=values["design"])
    if "node" in values:
        design = rename(design, design.nodes[0].id, values["node"])
    if "switch" in values:
        design = rename(design, design.switches[0].id, values["switch"])
    devices = [f"mlx5_{k}" for k in range(design.shape.ports)]
    if "device" in values:
        devices[1] = values["device"]
    options = Options(devices=tuple(devices), revision=values.get("revision", "draft"))
    return build_testplan(design, load_catalog(), options), design


@pytest.mark.parametrize("field", FIELDS)
def test_a_hostile_name_in_any_field_is_refused(tmp_path: Path, field: str) -> None:
    for value in [*payloads(tmp_path / "PWNED"), "a/b", "..", "-x", ""]:
        plan, design = hostile_plan({field: value})
        with pytest.raises(DesignFileError, match="cannot go into a script"):
            render_scripts(plan, design)


def test_shell_word_gives_exactly_one_inert_word(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    values = [*payloads(marker), "", "plain-1.2", "a b", "'", "\\", "$'x'", "é ü", "\x1b[2J"]
    for value in values:
        word = shell_word(value)
        assert "\n" not in word and "\r" not in word
        line = f"printf '%s\\0' {word}  # {word}\n"
        done = subprocess.run(["bash", "-c", line], capture_output=True)
        assert done.stdout == value.encode() + b"\0", (value, word)
    assert shell_word("mlx5_0") == "mlx5_0" and shell_word("B rc1") == "'B rc1'"
    assert not marker.exists()


STAND_INS = {
    # OpenSSH reads options until "--" or the first non-option (the host); -oProxyCommand=CMD
    # runs CMD locally. The remote command is run by a shell, as sshd does.
    "ssh": r"""#!/usr/bin/env bash
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -o) opt="$2"; shift 2 ;;
    -o*) opt="${1#-o}"; shift ;;
    -[lpiFJ]) shift 2; continue ;;
    -*) shift; continue ;;
    *) break ;;
  esac
  case "$opt" in [Pp]roxy[Cc]ommand=*) sh -c "${opt#*=}" ;; esac
done
shift
cd "$NODE_DIR" && exec bash -c "$*"
""",
    # srun: options, then the program and its arguments run directly (no shell)
    "srun": r"""#!/usr/bin/env bash
while [ $# -gt 0 ]; do
  case "$1" in
    -[Nnwc]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
export SLURMD_NODENAME=node0001
exec "$@"
""",
    "sudo": '#!/bin/sh\n[ "$1" = -n ] && shift\nexec "$@"\n',
    "timeout": '#!/bin/sh\nshift\nexec "$@"\n',
    "mpirun": "#!/bin/sh\necho '# Avg bus bandwidth    : 1'\n",
}
QUIET = ("lspci", "lsmod", "ibstat", "ibv_devinfo", "mlnx_qos", "ib_write_bw", "ib_write_lat",
         "lldpcli", "show", "ibnetdiscover", "iblinkinfo", "all_reduce_perf", "alltoall_perf",
         "sbatch")  # fmt: skip


def sandbox(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tools = {**STAND_INS, **{name: "#!/bin/sh\nexit 0\n" for name in QUIET}}
    for name, text in tools.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    (tmp_path / "node").mkdir()
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "NODE_DIR": str(tmp_path / "node"),
        "RESULTS": str(tmp_path / "results"),
        "NCCL_TESTS": str(bin_dir),
        "SERVER_WAIT": "0",
        "SLURM_JOB_NUM_NODES": "2",
        "SYSFS": str(tmp_path / "sys"),
    }


def write(files: dict[str, str], folder: Path) -> list[Path]:
    out = []
    for rel, text in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        if executable(rel):
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
            out.append(path)
    return out


@pytest.mark.parametrize("turn", range(len(payloads(Path("x")))))
def test_quoting_alone_keeps_hostile_names_inert(tmp_path: Path, monkeypatch, turn: int) -> None:
    """Validation off: each payload in turn lands in a different field; nothing runs."""
    monkeypatch.setattr(scripts, "unsafe_names", lambda *_a: [])
    marker = tmp_path / "PWNED"
    kinds = payloads(marker)
    values = {field: kinds[(turn + i) % len(kinds)] for i, field in enumerate(FIELDS)}
    plan, design = hostile_plan(values)
    folder = tmp_path / "scripts"
    runnable = write(render_scripts(plan, design), folder)
    assert {p.name for p in runnable} >= {"run_all.sh", "lib.sh", "00_node_checks.sh"}
    for path in runnable:
        done = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert done.returncode == 0, f"{path.name}: {done.stderr}"
    env = sandbox(tmp_path)
    steps = [folder / "run_all.sh", *sorted((folder / "slurm").glob("*.sbatch"))]
    for step in steps:
        env["RAILPLAN_SCRIPTS"] = str(folder)
        subprocess.run(["bash", str(step)], env=env, cwd=tmp_path, capture_output=True, timeout=120)
        assert not marker.exists(), f"{step.name} ran a command from {values}"


def test_cli_refuses_hostile_names_and_writes_nothing(cli, tmp_path: Path) -> None:
    """A design.json whose node id holds a / or an ssh option: exit 2, no folder created."""
    import json

    from tests.test_design_file import base, rename_node

    for bad in ("a/b", "-oProxyCommand=touch x", "../../etc"):
        data = json.loads(json.dumps(base()))
        rename_node(data, bad)
        path = tmp_path / "design.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        out = tmp_path / "out"
        result = cli("testplan", path, "-o", out)
        assert result.code == 2 and "nodes[0].id: not a safe name" in result.err
        assert not out.exists() and not (tmp_path / "a").exists()
