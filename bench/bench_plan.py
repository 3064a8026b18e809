"""Plan, check and write ROFT designs at growing sizes; print wall time and peak memory per size.

Each size runs in a fresh subprocess so peak RSS belongs to that size alone.
Usage: python bench/bench_plan.py [--sizes 1024,8192,32768,131072] [--topology roft]
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

# 128x400G switches: 2 tiers hold 8,192 GPUs, 3 tiers 524,288 (R^3/4 NIC ports).
DEFAULT_SWITCH = "cx864e-n"


def run_one(gpus: int, topology: str, switch: str) -> dict[str, object]:
    import railplan
    from railplan.model import design_to_json

    spec = railplan.spec_from_dict(
        {"name": f"bench-{gpus}", "cluster": {"gpus": gpus, "node": "dgx-h100"},
         "fabric": {"topology": topology, "switches": [switch]}}
    )
    t0 = time.perf_counter()
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
        "gpus": gpus, "topology": topology, "switch": switch, "tiers": design.sizing.tiers,
        "switches": len(design.switches), "links": len(design.links),
        "plan_s": round(t1 - t0, 2), "check_s": round(t2 - t1, 2), "write_s": round(t3 - t2, 2),
        "total_s": round(t3 - t0, 2), "json_mb": round(size_mb, 1), "ok": problems == [],
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,8192,32768,131072")
    ap.add_argument("--topology", default="roft")
    ap.add_argument("--switch", default=DEFAULT_SWITCH)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.topology, args.switch)))
        return
    cols = ["gpus", "topology", "switch", "tiers", "switches", "links", "plan_s", "check_s",
            "write_s", "total_s", "json_mb", "peak_mib", "ok"]
    print(" | ".join(cols))
    print(" | ".join("---" for _ in cols))
    for size in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(size), "--topology", args.topology,
             "--switch", args.switch],
            capture_output=True, text=True, check=True,
        ).stdout
        row = json.loads(out)
        print(" | ".join(str(row[c]) for c in cols), flush=True)


if __name__ == "__main__":
    main()
