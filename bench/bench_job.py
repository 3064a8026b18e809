"""The whole job through the CLI, start-up included: wall time, peak memory and the placement's answer.

Every row runs ``python -m railplan ...`` in a fresh process, ``--repeat`` times (default 3), and
prints the median wall time, the median CPU time (user + system) and the median peak RSS of that
child (``os.wait4``). CPU time shows what contention on a shared machine adds to the wall time.
Children cache bytecode under a temporary ``PYTHONPYCACHEPREFIX`` (an installed package has its
bytecode compiled; the first run of each row warms it and is not counted). Plan rows also print
the placement's estimated cost, the first-fit estimate it is compared with and the proven gap,
read from ``--json``. Targets are the ones the README's Performance section lists. A fixed
pure-Python workload (``REFERENCE``) is timed before and after the rows, so tables taken in
different hours can be compared (the machine's speed drifts).

    python bench/bench_job.py                 # every row, medians of 3
    python bench/bench_job.py --only 131k     # rows whose label contains "131k"
    python bench/bench_job.py --repeat 1 --quick   # the rows under 20 s
    python bench/bench_job.py --before ../old-checkout   # before and after, runs interleaved
    python bench/bench_job.py --only sheets --spread     # with each row's fastest and slowest

With ``--before DIR`` each row also runs the railplan in DIR (another checkout, e.g. a
``git worktree`` of the commit a change started from), the two taking turns run by run, so a
machine that speeds up or slows down over the hour moves both columns alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
PYCACHE = Path(tempfile.gettempdir()) / "railplan-bench-pycache"


@dataclass(frozen=True)
class Row:
    label: str
    argv: tuple[str, ...]
    target_s: float
    target_mib: float = 0.0
    quick: bool = True


Q131 = ("--gpus", "131072", "--node", "dgx-h100")
#: the rows time the planner: without --topology, ``plan`` first runs the advisor (``recommend``,
#: seconds at 2k) to pick the family
ROFT = ("--topology", "roft")
ROWS = (
    Row("railplan --help", ("--help",), 0.3),
    Row("railplan --version", ("--version",), 0.3),
    Row("topology only, 1k", ("plan", str(EX / "h100-1k.yaml"), "--no-layout", "--json"), 0.3),
    Row("full job, 1k", ("plan", str(EX / "h100-1k.yaml"), "--json"), 1.5),
    Row(
        "full job, 2k",
        ("plan", "--gpus", "2048", "--node", "dgx-h100", "--switch", "qm9700", *ROFT, "--json"),
        0.5,
    ),
    Row("full job, 16k", ("plan", str(EX / "h100-16k-3tier.yaml"), "--json"), 20.0),
    Row(
        "full job, 131k qm9700 2 planes",
        ("plan", *Q131, "--switch", "qm9700", "--planes", "2", *ROFT, "--json"),
        20.0,
        2048.0,
        quick=False,
    ),
    Row(
        "full job, 131k cx864e-n",
        ("plan", *Q131, "--switch", "cx864e-n", *ROFT, "--json"),
        20.0,
        2048.0,
        quick=False,
    ),
    Row(
        "plan -o, 131k qm9700 2 planes",
        ("plan", *Q131, "--switch", "qm9700", "--planes", "2", *ROFT, "-o", "{out}"),
        8.0,
        1536.0,
        quick=False,
    ),
    Row(
        "plan -o, 131k cx864e-n",
        ("plan", *Q131, "--switch", "cx864e-n", *ROFT, "-o", "{out}"),
        8.0,
        1536.0,
        quick=False,
    ),
    Row(
        "sheets, 16k",
        ("sheets", str(EX / "h100-16k-3tier.yaml"), "-o", "{out}"),
        15.0,
        quick=False,
    ),
    Row(
        "testplan, 16k",
        ("testplan", str(EX / "h100-16k-3tier.yaml"), "-o", "{out}"),
        60.0,
        quick=False,
    ),
)


def run_once(argv: tuple[str, ...], tree: Path = ROOT) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak RSS (MiB) and stdout of ``python -m railplan ARGV`` run
    from the checkout ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryFile() as out:
        args = [a.replace("{out}", tmp) for a in argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "railplan", *args],
            stdout=out,
            stderr=subprocess.DEVNULL,
            cwd=tree,
            env=env,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        cpu = usage.ru_utime + usage.ru_stime
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode() if proc.returncode == 0 else f"exit {proc.returncode}"
        return wall, cpu, usage.ru_maxrss / 1024, text


#: a fixed pure-Python workload (tuples, strings, a big dict, a sort: what the job is made of),
#: timed in a fresh process before and after the rows: this machine's speed drifts by up to
#: two times over a day, CPU time included, so a table is read against its own reference
REFERENCE = (
    "d = {}\n"
    "for i in range(500_000):\n"
    "    d[(f'dev{i % 5000}', i)] = (i, str(i))\n"
    "k = sorted(d, key=lambda t: t[1] % 977)\n"
)


def reference_s(repeat: int = 3) -> float:
    """Median CPU seconds of ``REFERENCE`` in a fresh process."""
    times = []
    for _ in range(repeat):
        proc = subprocess.Popen([sys.executable, "-c", REFERENCE])
        _, _, usage = os.wait4(proc.pid, 0)
        times.append(usage.ru_utime + usage.ru_stime)
    return statistics.median(times)


def placement_figures(stdout: str) -> str:
    """``estimate / first-fit / gap`` from a plan --json, or '' for other commands."""
    try:
        report = json.loads(stdout)["solver"]["placement"]
    except (ValueError, KeyError):
        return ""
    est, naive, gap = report["objective_usd"], report["naive_objective_usd"], report["gap"]
    first_fit = f"${naive:,.0f}"
    if any("first fit would leave" in n for n in report.get("notes", [])):
        first_fit = "cannot be cabled"  # links beyond every part's reach: the figure is no price
    return f"${est:,.0f} / {first_fit} / {gap:.2%} ({report['method']}, {report['status']})"


def medians(runs: list[tuple[float, float, float, str]]) -> tuple[float, float, float]:
    return (
        statistics.median(r[0] for r in runs),
        statistics.median(r[1] for r in runs),
        statistics.median(r[2] for r in runs),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per row (median reported)")
    ap.add_argument("--only", help="only rows whose label contains this text")
    ap.add_argument("--quick", action="store_true", help="skip the 131k and handout rows")
    ap.add_argument("--before", type=Path, help="another checkout to run beside this one")
    ap.add_argument(
        "--spread", action="store_true", help="also print each row's fastest and slowest wall s"
    )
    args = ap.parse_args()
    trees = [args.before.resolve(), ROOT] if args.before else [ROOT]
    load = os.getloadavg()[0]
    print(f"load average at start {load:.2f}; medians of {args.repeat}; python -m railplan")
    print(f"machine speed: the reference workload takes {reference_s():.2f} CPU s at start")
    if args.before:
        print(f"before: {trees[0]}; after: {ROOT}")
        print(
            "| work | target | before: wall s (CPU s) | after: wall s (CPU s) | "
            "peak MiB before -> after | placement estimate / first-fit / gap (after) |"
        )
        print("|---|---|---:|---:|---:|---|")
    else:
        print(
            "| work | target | wall s | CPU s | peak MiB | placement estimate / first-fit / gap |"
        )
        print("|---|---:|---:|---:|---:|---|")
    for row in ROWS:
        if args.only and args.only not in row.label:
            continue
        if args.quick and not row.quick:
            continue
        if row.quick:
            for tree in trees:
                run_once(row.argv, tree)  # warm the bytecode cache
        runs: dict[Path, list[tuple[float, float, float, str]]] = {t: [] for t in trees}
        for i in range(args.repeat):
            for tree in trees if i % 2 == 0 else trees[::-1]:
                runs[tree].append(run_once(row.argv, tree))
        target = f"< {row.target_s:g} s" + (
            f", {row.target_mib / 1024:g} GiB" if row.target_mib else ""
        )
        failed = [t for t in trees if runs[t][0][3].startswith("exit ")]
        if failed:
            print(f"| {row.label} | {target} | fails in {failed[0]}: {runs[failed[0]][0][3]} |")
            continue
        after = runs[ROOT]
        wall, cpu, rss = medians(after)
        if args.spread:
            for tree in trees:
                walls = sorted(r[0] for r in runs[tree])
                cpus = sorted(r[1] for r in runs[tree])
                print(f"  {row.label}, {tree}: wall {walls[0]:.2f}-{walls[-1]:.2f} s, "
                      f"CPU {cpus[0]:.2f}-{cpus[-1]:.2f} s", flush=True)  # fmt: skip
        figures = placement_figures(after[0][3])
        if args.before:
            bw, bc, brss = medians(runs[trees[0]])
            print(
                f"| {row.label} | {target} | {bw:.2f} ({bc:.2f}) | {wall:.2f} ({cpu:.2f}) | "
                f"{brss:,.0f} -> {rss:,.0f} | {figures} |",
                flush=True,
            )
        else:
            print(
                f"| {row.label} | {target} | {wall:.2f} | {cpu:.2f} | {rss:,.0f} | {figures} |",
                flush=True,
            )
    print(f"load average at end {os.getloadavg()[0]:.2f}")
    print(f"machine speed: the reference workload takes {reference_s():.2f} CPU s at end")


if __name__ == "__main__":
    main()
