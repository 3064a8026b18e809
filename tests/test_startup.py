"""Start-up: what a command loads, read from ``sys.modules`` in a fresh interpreter (not timed).

``railplan --help``, ``--version`` and ``plan --no-layout`` load none of OR-Tools (which pulls
pandas), SciPy, reportlab or Textual; a full ``plan`` loads OR-Tools only when the placement
needs CP-SAT, and SciPy only for a design large enough to repay it. The numbers live in bench/bench_job.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("ortools", "pandas", "scipy", "reportlab", "textual")
PROBE = """
import contextlib, io, json, sys
from railplan.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
loaded = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"code": code, "loaded": loaded, "out": out.getvalue()}))
"""


def loaded_by(*argv: str) -> tuple[int, set[str], str]:
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    )
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
    )
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    return data["code"], set(data["loaded"]), data["out"]


@pytest.mark.parametrize(
    "argv",
    [
        ("--help",),
        ("--version",),
        ("plan", "--help"),
        ("plan", "examples/h100-1k.yaml", "--no-layout", "--json"),
    ],
)
def test_light_commands_load_no_heavy_library(argv):
    code, loaded, out = loaded_by(*argv)
    assert code == 0
    assert not loaded & set(HEAVY), f"railplan {' '.join(argv)} loaded {loaded & set(HEAVY)}"
    if argv == ("--version",):
        from railplan.version import __version__

        assert out.strip() == f"railplan {__version__}"
    if argv[-1] == "--json":
        assert json.loads(out)["switches"]["total"] == 48


def test_help_loads_no_library_code_at_all():
    _, loaded, out = loaded_by("--help")
    assert not loaded & {"numpy", "pydantic", "yaml", "networkx", "shapely", "rich"}
    for command in ("plan", "compare", "cables", "analyze", "sheets", "testplan", "tui"):
        assert f"  {command} " in out


def test_a_small_full_job_needs_no_cp_sat():
    # 2,048 GPUs: the search's answer is proven within the default gap by the lower bound
    code, loaded, out = loaded_by(
        "plan",
        "--gpus",
        "2048",
        "--node",
        "dgx-h100",
        "--switch",
        "qm9700",
        "--topology",
        "roft",
        "--json",
    )
    assert code == 0 and json.loads(out)["solver"]["placement"]["method"] == "flow and swaps"
    # nor scipy: the cage groups of a design under 20,000 links are walked, not scipy's
    assert not loaded & {"pandas", "scipy", "reportlab", "textual"}


def test_light_constants_match_the_library():
    from railplan.cli.cmd_sheets import LABEL_STOCKS
    from railplan.cli.common import OBJECTIVES
    from railplan.physical.costers import OBJECTIVES as LIBRARY_OBJECTIVES
    from railplan.render.pdf_labels import LABEL_GRIDS

    assert OBJECTIVES == LIBRARY_OBJECTIVES
    assert set(LABEL_STOCKS) == set(LABEL_GRIDS)


def test_the_facade_loads_its_names_on_use():
    import railplan

    for name in railplan.__all__:
        assert getattr(railplan, name) is not None
    assert set(railplan.__all__) <= set(dir(railplan))
    with pytest.raises(AttributeError):
        _ = railplan.no_such_name
