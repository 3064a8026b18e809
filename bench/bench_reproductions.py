"""Each reproduction of issue 35 timed and weighed: seconds and peak RSS of its run, against the
issue's bounds (refused in under 1 s and under 200 MB).

    python bench/bench_reproductions.py [--repeat N]

The cases are tests/fixtures/issue35/reproductions.json, built as
tests/test_hostile_reproductions.py builds them (large inputs generated here, never kept).
Each case runs once in this process first (every module it imports is then loaded), then as
``railplan ARGS`` in a forked child (as ``bench/fuzz.py`` does): those seconds are the
command's own work, and the peak RSS is the child's, the memory it shares with this process
included. The bounds are checked on these. The "whole run" column is a fresh ``python -m
railplan ARGS`` process, interpreter start-up and imports included (the "baseline" row: a run
that only prints the version). Exit 1 if a case is not refused or is over a bound.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MAX_SECONDS = 1.0
MAX_RSS = 200 * 1024 * 1024


def whole_run(argv: list[str]) -> float:
    """Seconds of a fresh ``python -m railplan ARGS`` process (its peak RSS is not shown:
    Linux keeps ``ru_maxrss`` across fork and exec, so it would be this process's)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "railplan", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    os.wait4(proc.pid, 0)
    proc.returncode = 0  # reaped above
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (the best is shown)")
    args = parser.parse_args()
    from fuzz import run_case, warm

    from railplan.cli.app import _load_commands
    from tests.test_hostile_reproductions import CASES, needle, prepare

    _load_commands()
    warm()
    from railplan.cli.app import _run

    print(
        "| reproduction | issue | outcome | seconds | peak RSS MiB | whole run s "
        "| refusal (first line) |"
    )
    print("|---|---|---|---:|---:|---:|---|")
    _, base_rss, base_s, _ = run_case(["--version"], 60)
    wall = whole_run(["--version"])
    print(
        f"| baseline (railplan --version) | | ok | {base_s:.3f} | {base_rss / 2**20:.0f} "
        f"| {wall:.2f} | |"
    )
    failed = []
    for case in CASES:
        with tempfile.TemporaryDirectory() as folder:
            with (
                contextlib.redirect_stdout(io.StringIO()),
                contextlib.redirect_stderr(io.StringIO()),
            ):
                argv, _path = prepare(case, Path(folder))
                _run(argv)  # warm: the modules this command imports, loaded once
            runs = [run_case(argv, 60) for _ in range(args.repeat)]
            wall = whole_run(argv)
        outcome, rss, seconds, err = min(runs, key=lambda r: r[2])
        first = err.strip().splitlines()[0] if err.strip() else ""
        ok = outcome == "refused" and needle(case) in err
        if not ok or seconds >= MAX_SECONDS or rss >= MAX_RSS:
            failed.append(case["id"])
        shown = first.removeprefix("railplan: error: ").replace(folder, "TMP").replace("|", "\\|")
        print(
            f"| {case['id']} | {case['issue']} | {outcome if ok else outcome + ' (!)'} | "
            f"{seconds:.3f} | {rss / 2**20:.0f} | {wall:.2f} | "
            f"{shown[:100]} |",
            flush=True,
        )
    print(f"\n{len(CASES)} reproductions, bounds {MAX_SECONDS:g} s and {MAX_RSS // 2**20} MB: "
          + (f"over or not refused: {', '.join(failed)}" if failed else "all within"))  # fmt: skip
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
