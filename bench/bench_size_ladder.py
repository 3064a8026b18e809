"""The whole job at doubling sizes, fabric by fabric: is any size slower than the next one up?

Each cell is one ``railplan.pipeline.build`` (topology, layout, placement, cabling, check and
bill) in a fresh process, its wall time from the interpreter's start (imports included, as a
user waits for them), with how the placement ended: ``K`` the search kicked its answer
(``solve/placement/kicks.py``), ``J`` CP-SAT's joint model ran, ``C`` CP-SAT was imported
(about a third of a second of the job on its own). A cell marked ``!`` is slower than the next
size up (issue 34: small jobs never slower than the next size up).

    python bench/bench_size_ladder.py                 # 512 to 16,384 GPUs, nine fabrics
    python bench/bench_size_ladder.py --gpus 1024 2048 4096 --fabrics qm9700:2 qm9700:8
    python bench/bench_size_ladder.py --repeat 3      # the median of three runs a cell
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import sys, time, json
t0 = time.perf_counter()
from railplan.catalog import load_catalog
from railplan.errors import RailplanError
from railplan.pipeline.build import build
from railplan.spec import spec_from_dict
gpus, switch, planes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
spec = spec_from_dict({"cluster": {"gpus": gpus, "node": "dgx-h100"},
                       "fabric": {"switches": [switch], "planes": planes, "topology": "roft"}})
try:
    built = build(spec, load_catalog())
except RailplanError as exc:
    print(json.dumps({"error": str(exc)[:80]}))
    raise SystemExit
method = built.placement.method if built.placement is not None else ""
print(json.dumps({"s": time.perf_counter() - t0, "method": method,
                  "cpsat": "ortools.sat.python.cp_model" in sys.modules}))
"""

FABRICS = (
    "qm9700:1",
    "qm9700:2",
    "qm9700:4",
    "qm9700:8",
    "cx864e-n:1",
    "sn5600:1",
    "sn5600:2",
    "cx732q-n:1",
)


def run(gpus: int, switch: str, planes: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(gpus), switch, str(planes)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[512, 1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--fabrics", nargs="+", default=list(FABRICS), help="switch:planes")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print("| fabric | " + " | ".join(f"{g:,} GPUs s" for g in args.gpus) + " |")
    print("|---|" + "---:|" * len(args.gpus))
    for fabric in args.fabrics:
        switch, planes = fabric.split(":")
        cells: list[tuple[float | None, str]] = []
        for gpus in args.gpus:
            runs = [run(gpus, switch, int(planes)) for _ in range(args.repeat)]
            if "error" in runs[0]:
                cells.append((None, "refused"))
                continue
            method, cpsat = str(runs[0]["method"]), bool(runs[0]["cpsat"])
            marks = ("K" if "kicks" in method else "") + ("J" if "joint" in method else "")
            marks += "C" if cpsat else ""
            cells.append((statistics.median(float(str(r["s"])) for r in runs), marks))
        text = []
        for i, (seconds, marks) in enumerate(cells):
            if seconds is None:
                text.append(marks)
                continue
            later = [s for s, _ in cells[i + 1 : i + 2] if s is not None]
            slower = "!" if later and seconds > later[0] else ""
            text.append(f"{seconds:.2f}{' ' + marks if marks else ''}{slower}")
        print(f"| {switch}, {planes} plane(s) | " + " | ".join(text) + " |")


if __name__ == "__main__":
    main()
