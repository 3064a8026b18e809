"""Plan, check and write designs of every family at growing sizes; print time and peak memory.

Each case runs in a fresh subprocess so peak RSS belongs to that case alone.
Usage: python bench/bench_plan.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (kind, topology, gpus, node, switch). 128x400G switches hold 8,192 GPUs in two tiers and
# 524,288 in three; the Matrix cases use 200G dual-port nodes (256 x 200G: up to 32,768 GPUs).
CASES = [
    ("plan", "roft", 1024, "dgx-h100", "cx864e-n"),
    ("plan", "roft", 8192, "dgx-h100", "cx864e-n"),
    ("plan", "roft", 32768, "dgx-h100", "cx864e-n"),
    ("plan", "roft", 131072, "dgx-h100", "cx864e-n"),
    ("plan", "matrix", 8192, "h20-4x2x200g", "cx864e-n"),
    ("plan", "matrix", 32768, "h20-4x2x200g", "cx864e-n"),
    ("plan", "fat-tree", 8192, "dgx-h100", "cx864e-n"),
    ("plan", "fat-tree", 32768, "dgx-h100", "cx864e-n"),
    ("compare", "all", 32768, "h20-4x2x200g", "cx864e-n"),
    ("compare+traffic", "all", 32768, "h20-4x2x200g", "cx864e-n"),
]
QUICK = {1024, 8192}


def run_one(kind: str, topology: str, gpus: int, node: str, switch: str) -> dict[str, object]:
    import railplan
    from railplan.design import design_to_json

    fabric = {"topology": "roft" if topology == "all" else topology, "switches": [switch]}
    spec = railplan.spec_from_dict(
        {"name": f"bench-{gpus}", "cluster": {"gpus": gpus, "node": node}, "fabric": fabric}
    )
    t0 = time.perf_counter()
    if kind.startswith("compare"):
        from railplan.pipeline.compare import compare
        from railplan.traffic.summary import summary_for_compare

        rows = compare(spec)
        if kind == "compare+traffic":
            for row in rows:
                if row.design is not None:
                    summary_for_compare(row.design)
        total = time.perf_counter() - t0
        ok = all(railplan.check(r.design) == [] for r in rows if r.design is not None)
        designs = [r.design for r in rows if r.design is not None]
        return {
            "case": kind,
            "topology": "+".join(r.family for r in rows if r.design is not None),
            "gpus": gpus,
            "switch": switch,
            "tiers": "-",
            "switches": "/".join(str(len(d.switches)) for d in designs),
            "links": "/".join(str(len(d.links)) for d in designs),
            "plan_s": round(total, 2),
            "check_s": "-",
            "write_s": "-",
            "total_s": round(total, 2),
            "json_mb": "-",
            "ok": ok,
            "peak_mib": _peak(),
        }
    design = railplan.plan(spec)  # plan() runs check() on its result
    t1 = time.perf_counter()
    problems = railplan.check(design)
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "design.json"
        out.write_text(design_to_json(design))
        size_mb = out.stat().st_size / 1e6
    t3 = time.perf_counter()
    return {
        "case": kind,
        "topology": topology,
        "gpus": gpus,
        "switch": switch,
        "tiers": design.sizing.tiers,
        "switches": len(design.switches),
        "links": len(design.links),
        "plan_s": round(t1 - t0, 2),
        "check_s": round(t2 - t1, 2),
        "write_s": round(t3 - t2, 2),
        "total_s": round(t3 - t0, 2),
        "json_mb": round(size_mb, 1),
        "ok": problems == [],
        "peak_mib": _peak(),
    }


def _peak() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="only the 1k and 8k cases")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        kind, topology, gpus, node, switch = json.loads(args.one)
        print(json.dumps(run_one(kind, topology, gpus, node, switch)))
        return
    cols = [
        "case",
        "topology",
        "gpus",
        "switch",
        "tiers",
        "switches",
        "links",
        "plan_s",
        "check_s",
        "write_s",
        "total_s",
        "json_mb",
        "peak_mib",
        "ok",
    ]
    print(" | ".join(cols))
    print(" | ".join("---" for _ in cols))
    for case in CASES:
        if args.quick and case[2] not in QUICK:
            continue
        out = subprocess.run(
            [sys.executable, __file__, "--one", json.dumps(case)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        row = json.loads(out)
        print(" | ".join(str(row[c]) for c in cols), flush=True)


if __name__ == "__main__":
    main()
