"""DCGM diagnostics per phase: -r 1 with the node checks, -r 3 with the burn-in (``--dcgm``).

The plan names the level per phase; ``05_dcgm.sh LEVEL`` runs the level's rows against a
stand-in dcgmi on a PATH the test builds (result table rows ``| <test> | Pass|Fail ... |``),
fails a node whose table has a Fail, says "not measured" without dcgmi (an AMD node, or DCGM
not installed), and the grader counts the same Fail rows.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache

import pytest

from railplan.catalog import load_catalog
from railplan.testplan import TestPlanOptions, build_testplan
from tests.conftest import write_scripts
from tests.test_testplan import cabled

#: stand-in result table in the layout dcgmi diag prints (one row per test: name, result)
PASS = """+---------------------------+------------------------------------------------+
| Diagnostic                | Result                                         |
+===========================+================================================+
|-----  Deployment  --------+------------------------------------------------|
| Software                  | Pass                                           |
+-----  Hardware  ----------+------------------------------------------------+
| GPU Memory                | Pass                                           |
| PCIe                      | Pass                                           |
"""
FAIL = PASS.replace(
    "| PCIe                      | Pass    ", "| PCIe                      | Fail - GPU: 3"
)


@cache
def _plan(burnin_s: int = 60):
    design = cabled("seed000-2node")
    options = TestPlanOptions(dcgm=True, burnin_s=burnin_s)
    return design, build_testplan(design, load_catalog(), options)


def test_dcgm_level_per_phase():
    _, plan = _plan()
    ids = [t.id for t in plan.section("dcgm").tests]
    assert ids == ["DCGM-R1-node0001", "DCGM-R1-node0002", "DCGM-R3-node0001", "DCGM-R3-node0002"]
    assert all(t.checks[0].metric == "dcgm_failed_tests" for t in plan.section("dcgm").tests)
    _, no_burn = _plan(0)
    assert {t.id.split("-")[1] for t in no_burn.section("dcgm").tests} == {"R1"}


@pytest.mark.parametrize("table, word", [(PASS, "OK"), (FAIL, "FAIL"), (None, "OK")])
def test_dcgm_step_and_grader(table, word, tmp_path):
    from railplan.field.measure import Measure
    from railplan.field.names import NameMap
    from railplan.testplan.expectation import expectations

    design, plan = _plan()
    folder = tmp_path / "scripts"
    write_scripts(plan, design, folder)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tools = {"ssh": '#!/usr/bin/env bash\nwhile [[ "$1" == -* ]]; do shift; done\nshift\n'
                    'exec bash -c "$*"\n'}  # fmt: skip
    if table is not None:
        tools["dcgmi"] = f"#!/usr/bin/env bash\ncat <<'EOF'\n{table}EOF\n"
    for tool, text in tools.items():
        (bin_dir / tool).write_text(text)
        (bin_dir / tool).chmod(0o755)
    for tool in ("bash", "awk", "grep", "cat", "mkdir", "tee", "date", "tail", "wc", "dirname"):
        if (found := shutil.which(tool)) is not None:
            (bin_dir / tool).symlink_to(found)
    env = {"PATH": str(bin_dir), "SSH": str(bin_dir / "ssh"), "HOME": str(tmp_path),
           "RESULTS": str(tmp_path / "results")}  # fmt: skip
    done = subprocess.run(["bash", str(folder / "05_dcgm.sh"), "1"], env=env,
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0, done.stderr[-1500:]
    lines = (tmp_path / "results" / "summary" / "verdicts.txt").read_text().splitlines()
    status = {ln.split()[0]: ln for ln in lines}
    assert set(status) == {"DCGM-R1-node0001", "DCGM-R1-node0002"}  # level 1 rows only
    assert all(ln.split()[1] == word for ln in status.values()), lines
    exp = next(e for e in expectations(plan) if e.test_id == "DCGM-R1-node0001")
    path = tmp_path / "results" / "DCGM-R1-node0001" / "dcgm.txt"
    value, detail, state = Measure(design, NameMap(design))(exp, [path])
    if table is None:
        assert value is None and state == "missing" and "not measured" in detail
        assert "not measured: dcgmi not installed" in status["DCGM-R1-node0001"]
    else:
        assert value == (1.0 if table is FAIL else 0.0) and state == ""
        assert ("PCIe: Fail - GPU: 3" in detail) == (table is FAIL)
