"""Fabric-level checks on InfiniBand: ibdiagnet -r (credit loops), --ft on a fat-tree.

The plan asks for ``ibdiagnet -r`` (and ``--ft`` where the fabric is a fat-tree); the generated
step runs against a stand-in ibdiagnet on a PATH the test controls (so an ibdiagnet installed
on this machine never answers), passes a clean log, fails one with an ``-E-`` line and says
"not measured" when ibdiagnet is absent; the grader counts the same errors.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

from railplan.catalog import load_catalog
from railplan.testplan import build_testplan
from tests.conftest import write_scripts
from tests.test_testplan import cabled

#: stand-in logs: ibdiagnet marks information -I- and errors -E-; the error lines are the
#: ibdiagnet User Manual's own Fat-Tree validation example
CLEAN = """-I- Routing Validation
-I- Credit Loop Check finished successfully
-I- Fat-Tree topology detection finished successfully
"""
LOOP = CLEAN + (
    "-E- Fat-Tree topology validation finished with errors\n"
    "-E- Invalid link between connectivity group 7 (GUID: 0x0002c90000000024 port: 16) and "
    "group 6 (GUID: 0x0002c900000001a0 port: 21)\n"
)


@cache
def _plan(name: str):
    design = cabled(name)
    return design, build_testplan(design, load_catalog())


def test_fat_tree_gets_ft_and_roce_gets_no_ibdiagnet_test():
    _, plan = _plan("superpod-h100-4su")
    test = plan.section("fabric").tests[0]
    assert test.command[0].startswith("ibdiagnet -r --ft ")
    assert [c.metric for c in test.checks] == ["ib_diag_errors"]
    _, roce = _plan("seed000-2node")  # Ethernet: no ibdiagnet, the firmware test only
    assert [t.id for t in roce.section("fabric").tests] == ["FW-FABRIC"]


def _fabric_step(tmp_path: Path, log: str | None) -> tuple[str, Path]:

    design, plan = _plan("basepod-8node")
    folder = tmp_path / "scripts"
    write_scripts(plan, design, folder)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ssh = '#!/usr/bin/env bash\nwhile [[ "$1" == -* ]]; do shift; done\nshift\nexec bash -c "$*"\n'
    tools = {"ssh": ssh}
    if log is not None:
        tools["ibdiagnet"] = (
            '#!/usr/bin/env bash\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done\n'
            f'mkdir -p "$out"\ncat > "$out/ibdiagnet2.log" <<\'EOF\'\n{log}EOF\n'
        )
    for tool, text in tools.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    base = tmp_path / "base"
    base.mkdir()
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "tee", "date", "tail", "dirname"):
        if (found := shutil.which(tool)) is not None:
            (base / tool).symlink_to(found)
    env = {"PATH": f"{bin_dir}:{base}", "SSH": str(bin_dir / "ssh"), "HOME": str(tmp_path),
           "RESULTS": str(tmp_path / "results")}  # fmt: skip
    done = subprocess.run(["bash", str(folder / "15_fabric.sh")], env=env, capture_output=True,
                          text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr[-1500:]
    verdict = (tmp_path / "results" / "summary" / "verdicts.txt").read_text().strip()
    return verdict, tmp_path / "results" / "FABRIC-IB" / "ibdiagnet2.log"


@pytest.mark.parametrize(
    "log, word, text",
    [
        (CLEAN, "OK", "no errors"),
        (LOOP, "FAIL", "2 error(s): -E- Fat-Tree topology validation finished with errors"),
        (None, "OK", "not measured: ibdiagnet not installed"),
    ],
)
def test_fabric_step_judges_ibdiagnet(log, word, text, tmp_path):
    verdict, path = _fabric_step(tmp_path, log)
    assert verdict.split()[:2] == ["FABRIC-IB", word] and text in verdict, verdict
    from railplan.field.measure import Measure
    from railplan.field.names import NameMap
    from railplan.testplan.expectation import expectations

    design, plan = _plan("basepod-8node")
    exp = next(e for e in expectations(plan) if e.test_id == "FABRIC-IB")
    value, detail, status = Measure(design, NameMap(design))(exp, [path])
    if log is None:
        assert value is None and status == "missing" and "not measured" in detail
    else:
        assert value == (0.0 if log == CLEAN else 2.0) and status == ""
        assert exp.passes(value) == (log == CLEAN)
        if log == LOOP:
            assert "Invalid link between connectivity group 7" in detail
    if shutil.which("shellcheck"):
        folder = tmp_path / "scripts"
        check = subprocess.run(["shellcheck", "-x", "15_fabric.sh"], cwd=folder,
                               capture_output=True, text=True)  # fmt: skip
        assert check.returncode == 0, check.stdout
