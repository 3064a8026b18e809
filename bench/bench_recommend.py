"""``railplan recommend`` at 1,024, 16,384 and 131,072 GPUs with a 3-model shortlist: a table.

Each row runs ``python -m railplan recommend --json`` in a fresh process (start-up included)
and prints the wall time, the CPU time of the child and its workers (``os.wait4`` on the
child counts the workers it waited for), how many candidates the search bounded, evaluated and
pruned by bound, and the answer. Targets (issue 26): under 10 s at 16k and under 60 s at 131k
on the project's 2-core machine.

    python bench/bench_recommend.py                  # every row
    python bench/bench_recommend.py --only 16k --workers 2
    python bench/bench_recommend.py --repeat 3       # median wall and cpu, min-max spread

With ``--repeat N`` each row runs N times; ``wall s`` and ``cpu s`` are the medians and
``spread`` the fastest and slowest wall times (the machine is shared: the CPU time moves less
than the wall time under load).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SHORTLIST = ("qm9700", "sn5600", "cx864e-n")
ROWS = (("1k", 1024), ("16k", 16384), ("131k", 131072))
TARGET_S = {"16k": 10.0, "131k": 60.0}


def run(gpus: int, workers: int) -> tuple[float, float, dict]:
    argv = [
        sys.executable,
        "-m",
        "railplan",
        "recommend",
        "--gpus",
        str(gpus),
        "--node",
        "dgx-h100",
        "--json",
        "--workers",
        str(workers),
    ]
    for s in SHORTLIST:
        argv += ["--switch", s]
    start = time.perf_counter()
    before = os.times()
    proc = subprocess.run(argv, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"recommend {gpus} failed: {proc.stderr.decode()[-400:]}")
    return wall, cpu, json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="rows to run, e.g. 1k,16k (default: all)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    print(f"shortlist {', '.join(SHORTLIST)}; dgx-h100; {args.workers} worker(s)")
    print(
        f"{'GPUs':>8} {'wall s':>8} {'spread':>13} {'cpu s':>7} {'target':>7} {'cands':>6} "
        f"{'evald':>6} {'pruned':>6} {'load':>5}  answer"
    )
    for label, gpus in ROWS:
        if args.only and label not in args.only.split(","):
            continue
        load = os.getloadavg()[0]  # the machine is shared: the 1-minute load when the row starts
        runs = [run(gpus, args.workers) for _ in range(max(1, args.repeat))]
        walls = [r[0] for r in runs]
        wall = statistics.median(walls)
        cpu = statistics.median(r[1] for r in runs)
        spread = f"{min(walls):.1f}-{max(walls):.1f}"
        data = runs[0][2]
        s = data["search"]
        rec = data["recommended"]
        answer = f"{rec['design']} ${rec['totals']['cost_usd']:,.0f}" if rec else "none meets"
        target = f"{TARGET_S[label]:.0f}" if label in TARGET_S else "-"
        print(
            f"{gpus:>8,} {wall:>8.1f} {spread:>13} {cpu:>7.1f} {target:>7} {s['candidates']:>6} "
            f"{s['evaluated']:>6} {s['pruned']:>6} {load:>5.1f}  {answer}"
        )


if __name__ == "__main__":
    main()
