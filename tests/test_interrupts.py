"""Ctrl-C and SIGTERM end a run cleanly at any point (also after CP-SAT replaced the handler),
internal errors exit 70 without a traceback, and multi-file outputs are written as a set."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from railplan.errors import OutputError
from railplan.render import atomic
from railplan.render.atomic import TEMP_PREFIX, discard_temporaries, sweep, write_atomic, write_set
from tests.conftest import EXAMPLES, ROOT

cli_app = importlib.import_module(
    "railplan.cli.app"
)  # the module (railplan.cli.app is the Typer app)

#: runs the console entry point with two hooks: report when CP-SAT placement has run, and
#: stall while the output set is half staged, so the test can interrupt at that moment
DRIVER = """
import signal, sys, time
import railplan.pipeline.layout as layout
import railplan.render.atomic as atomic

solve = layout.place_switches
def placed(*args, **kwargs):
    result = solve(*args, **kwargs)
    print(f"PLACED {result.report.method}", file=sys.stderr, flush=True)
    return result
layout.place_switches = placed

write = atomic._write_file
def stall(path, data, *mode):
    write(path, data, *mode)
    print("STAGED", file=sys.stderr, flush=True)
    time.sleep(120)
atomic._write_file = stall

from railplan.cli import main
sys.argv = ["railplan", *sys.argv[1:]]
main()
"""


def interrupted_run(tmp_path: Path, signum: int) -> tuple[subprocess.CompletedProcess[str], Path]:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("RAILPLAN_DEBUG", None)
    proc = subprocess.Popen(
        # a zero gap limit and a budget make the placement finish with the joint CP-SAT
        # model; at 1,024 GPUs the placements are few enough to be priced whole without
        # CP-SAT, so 2,048
        [
            sys.executable,
            str(driver),
            "plan",
            str(EXAMPLES / "h100-1k.yaml"),
            "--set",
            "cluster.gpus=2048",
            "--set",
            "layout.placement.relative_gap_limit=0",
            "--time-limit",
            "0.5",
            "-o",
            str(out),
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = []
    deadline = time.monotonic() + 240
    for line in proc.stderr:  # wait until placement ran and the set is half written
        seen.append(line)
        if line.startswith("STAGED") or time.monotonic() > deadline:
            break
    assert any(line.startswith("PLACED") for line in seen), seen
    assert "cp-sat" in "".join(seen).lower(), seen
    leftovers = list(tmp_path.glob(f"{TEMP_PREFIX}*"))
    assert leftovers, "the run should be in the middle of writing its output set"
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, stdout, "".join(seen) + stderr
    ), out


@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")],
)
def test_signal_after_placement_exits_cleanly_without_temp_files(tmp_path, signum, code, word):
    """CP-SAT resets SIGINT to the default action when it returns; the run must still end with
    its own exit code and message, and remove the half-written set."""
    done, out = interrupted_run(tmp_path, signum)
    assert done.returncode == code, done.stderr[-2000:]
    assert f"railplan: {word}" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()
    assert list(tmp_path.glob(f"{TEMP_PREFIX}*")) == []


def test_an_internal_error_exits_70_without_a_traceback(monkeypatch, capsys) -> None:
    import railplan.design.summary as summary  # cmd_plan imports it when the command runs

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.delenv("RAILPLAN_DEBUG", raising=False)
    monkeypatch.setattr(summary, "plan_summary", broken)
    code = cli_app._run(["plan", str(EXAMPLES / "seed000-2node.yaml"), "--no-layout"])
    err = capsys.readouterr().err
    assert code == cli_app.EXIT_INTERNAL == 70
    assert "railplan: internal error: ZeroDivisionError" in err and "please report" in err
    assert "Traceback" not in err
    monkeypatch.setenv("RAILPLAN_DEBUG", "1")  # and tests (the cli fixture) see the exception
    with pytest.raises(ZeroDivisionError):
        cli_app._run(["plan", str(EXAMPLES / "seed000-2node.yaml"), "--no-layout"])


def test_error_lines_are_clipped_but_keep_their_end(capsys) -> None:
    cli_app.error("x" * 100_000 + " use 104 or 96")
    err = capsys.readouterr().err
    assert len(err) < 1000 and err.rstrip().endswith("use 104 or 96")


# -- writing files -------------------------------------------------------------------------


def test_a_new_folder_appears_whole(tmp_path: Path) -> None:
    target = tmp_path / "a" / "set"
    write_set(target, {"design.json": "{}", "spec.yaml": "x: 1\n", "scripts/run.sh": "#!"})
    assert sorted(p.name for p in target.iterdir()) == ["design.json", "scripts", "spec.yaml"]
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["set"]


def test_an_existing_folder_gets_the_new_set_and_a_fresh_scripts_folder(tmp_path: Path) -> None:
    write_set(tmp_path, {"t.pdf": b"old", "scripts/old.sh": "old", "scripts/data/x.tsv": "a"})
    (tmp_path / "mine.txt").write_text("kept")
    mode = lambda rel: 0o755 if rel.endswith(".sh") else 0  # noqa: E731
    write_set(tmp_path, {"t.pdf": b"new", "scripts/run.sh": "#!/bin/sh\n"}, mode=mode)
    assert (tmp_path / "t.pdf").read_bytes() == b"new"
    assert sorted(p.name for p in (tmp_path / "scripts").iterdir()) == ["run.sh"]
    assert os.access(tmp_path / "scripts" / "run.sh", os.X_OK)
    assert (tmp_path / "mine.txt").read_text() == "kept"
    assert not list(tmp_path.glob(f"{TEMP_PREFIX}*"))


def test_temp_files_of_dead_runs_are_swept_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(dead.stdout)
    (tmp_path / f"{TEMP_PREFIX}{dead_pid}-0badf00d-design.json").write_text("half")
    (tmp_path / f"{TEMP_PREFIX}{dead_pid}-0badf00d-set").mkdir()
    live = tmp_path / f"{TEMP_PREFIX}{os.getpid()}-12345678-x"
    live.write_text("mine")
    write_atomic(tmp_path / "out.csv", "a\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == [live.name, "out.csv"]
    assert sweep(tmp_path) == []


def test_discard_removes_what_an_interrupt_leaves(tmp_path: Path, monkeypatch) -> None:
    staged: list[Path] = []

    def stop(path: Path, data: object, *mode: int) -> None:
        staged.append(path)
        path.write_text("half")
        discard_temporaries()  # what the signal thread does
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic, "_write_file", stop)
    with pytest.raises(KeyboardInterrupt):
        write_set(tmp_path / "new", {"a.txt": "1", "b.txt": "2"})
    assert staged and list(tmp_path.iterdir()) == []


def test_a_file_in_the_way_is_an_output_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        write_set(blocker, {"a.txt": "1"})
    with pytest.raises(OutputError, match="it is a folder"):
        write_atomic(tmp_path, "x")
    with pytest.raises(OutputError, match="outside its folder"):
        write_set(tmp_path / "s", {"../escape.txt": "x"})
