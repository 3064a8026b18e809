"""Every input the fuzz campaign kept (tests/fixtures/fuzz/*/case.json) replayed: it must now
run cleanly or be refused with one sentence per line, never a traceback."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT

CASES = sorted((ROOT / "tests" / "fixtures" / "fuzz").glob("*/case.json"))


@pytest.mark.skipif(not CASES, reason="the fuzz campaign has kept no failing input")
@pytest.mark.parametrize("case", CASES, ids=[c.parent.name for c in CASES])
def test_a_kept_input_no_longer_fails(cli, tmp_path: Path, case: Path) -> None:
    recorded = json.loads(case.read_text(encoding="utf-8"))
    inputs = [p for p in case.parent.iterdir() if p.name != "case.json"]
    for p in inputs:
        shutil.copy(p, tmp_path / p.name)
    if "results_file" in recorded:  # a mutated file of the field example's results/
        results = tmp_path / "results"
        shutil.copytree(ROOT / recorded["results_base"], results)
        (results / recorded["results_file"]).write_bytes(inputs[0].read_bytes())
        recorded["argv"] = [
            str(results) if i and recorded["argv"][i - 1] == "--results" else a
            for i, a in enumerate(recorded["argv"])
        ]
    argv = []
    for arg in recorded["argv"]:
        matches = [p for p in inputs if p.suffix == Path(arg).suffix]
        repo = next((arg.index(f"/{d}/") for d in ("examples", "designs") if f"/{d}/" in arg), -1)
        if repo >= 0 and not arg.startswith(str(tmp_path)):  # a file of the tree the run used
            argv.append(str(ROOT / arg[repo + 1 :]))
        elif "/" in arg and matches and ROOT not in Path(arg).parents:
            argv.append(str(tmp_path / matches[0].name))
        else:
            argv.append(arg.replace(str(Path(arg).parent), str(tmp_path)) if "/tmp" in arg else arg)
    result = cli(*argv)
    assert result.code in (0, 1, 2), result.err
    assert "Traceback" not in result.err
