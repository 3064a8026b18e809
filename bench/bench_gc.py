"""What the collector pause and the quick exit of a console run save, on one job, same outputs.

A big job builds millions of small acyclic objects; CPython's cyclic collector, run every 700
new objects and now and then over every object alive, finds nothing to free among them
(``railplan/gc_pause.py``). After the output is written the heap would be freed object by
object before the process ends (``cli/app.py``: ``_exit_now``). Each row runs the job in a
fresh process, ``--repeat`` times (median wall, CPU and peak RSS):

- *as shipped*;
- *collector on*: ``gc.disable`` made a no-op, so the pause does nothing;
- *heap freed at exit*: ``os._exit`` replaced by ``sys.exit``;
- *both*: the code as it was before either.

Every row's stdout must be the same bytes, or the bench says so.

    python bench/bench_gc.py                       # 131,072 GPUs, qm9700, 2 planes
    python bench/bench_gc.py --gpus 16384 --repeat 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEEP_COLLECTING = "import gc; gc.disable = lambda: None\n"
FREE_AT_EXIT = "import os, sys; os._exit = sys.exit\n"
RUN = "import sys\nfrom railplan.cli.app import main\nsys.argv[0] = 'railplan'\nmain()\n"
VARIANTS = (
    ("as shipped", ""),
    ("collector on", KEEP_COLLECTING),
    ("heap freed at exit", FREE_AT_EXIT),
    ("both (before)", KEEP_COLLECTING + FREE_AT_EXIT),
)


def run_once(prelude: str, argv: list[str]) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak RSS (MiB) and the sha256 of stdout of one run."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", prelude + RUN, *argv],
            stdout=out,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        digest = hashlib.sha256(out.read()).hexdigest()[:12] if code == 0 else f"exit {code}"
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, digest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=131072)
    ap.add_argument("--switch", default="qm9700")
    ap.add_argument("--planes", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs per row (median reported)")
    args = ap.parse_args()
    argv = ["plan", "--gpus", str(args.gpus), "--node", "dgx-h100", "--switch", args.switch]
    argv += ["--planes", str(args.planes), "--json"]
    print(f"railplan {' '.join(argv)}; load average at start {os.getloadavg()[0]:.2f}")
    print(f"medians of {args.repeat}, each run in a fresh process")
    print("| variant | wall s | CPU s | peak MiB | stdout sha256 |")
    print("|---|---:|---:|---:|---|")
    digests = set()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory() as cache:
        os.environ["PYTHONPYCACHEPREFIX"] = cache
        # compile the bytecode once, outside the rows (a small job imports what a big one does)
        run_once("", ["plan", str(ROOT / "examples" / "h100-1k.yaml"), "--json"])
        for label, prelude in VARIANTS:
            runs = [run_once(prelude, argv) for _ in range(args.repeat)]
            digests.add(runs[0][3])
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            rss = statistics.median(r[2] for r in runs)
            print(f"| {label} | {wall:.2f} | {cpu:.2f} | {rss:,.0f} | {runs[0][3]} |", flush=True)
    print("outputs identical" if len(digests) == 1 else f"OUTPUTS DIFFER: {sorted(digests)}")
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
