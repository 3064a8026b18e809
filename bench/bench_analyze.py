"""Benchmark the collision analyzer: wall time and peak memory of big pair tests and all-to-all.

Run: ``python bench/bench_analyze.py`` (``--quick`` for small sizes). Each case runs in its own
process so that its peak resident memory is its own. Targets (issue 5): pairs over every node
pair of a 1,024-node (8k GPU) per-rack fat-tree and of a ROFT under 60 s each; all-to-all on
4k GPUs under 60 s. Never gates CI.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

NODE = "hgx-h100-8x400g"
CASES: list[dict[str, Any]] = [
    {"topology": "fat-tree", "gpus": 8192, "pattern": "pairs"},
    {"topology": "roft", "gpus": 8192, "pattern": "pairs"},
    {"topology": "matrix", "gpus": 8192, "pattern": "pairs", "node": "h20-4x2x200g"},
    {"topology": "roft", "gpus": 4096, "pattern": "alltoall"},
    {"topology": "matrix", "gpus": 4096, "pattern": "alltoall", "node": "h20-4x2x200g"},
    {"topology": "roft", "gpus": 4096, "pattern": "alltoall", "node": "h20-4x2x200g"},
    {"topology": "matrix", "gpus": 8192, "pattern": "pd", "node": "h20-4x2x200g"},
    {"topology": "fat-tree", "gpus": 4096, "pattern": "alltoall"},
    {"topology": "fat-tree", "gpus": 4096, "pattern": "alltoall", "routing": "adaptive"},
    {"topology": "fat-tree", "gpus": 32768, "pattern": "compare-summary"},
]
QUICK = [
    {"topology": "fat-tree", "gpus": 1024, "pattern": "pairs"},
    {"topology": "roft", "gpus": 1024, "pattern": "alltoall"},
]


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    from railplan.pipeline.plan import plan
    from railplan.spec import spec_from_dict
    from railplan.traffic.collisions import analyze
    from railplan.traffic.summary import summary_for_compare

    spec = {
        "cluster": {"gpus": case["gpus"], "node": case.get("node", NODE)},
        "fabric": {"topology": case["topology"]},
    }
    t0 = time.perf_counter()
    design = plan(spec_from_dict(spec))
    t1 = time.perf_counter()
    out: dict[str, Any] = {"nodes": len(design.nodes), "plan_s": round(t1 - t0, 1)}
    if case["pattern"] == "compare-summary":
        s = summary_for_compare(design)
        out.update(
            routing=s["routing"], flows=0, result=f"pairs full {s['pairs']['fraction_full']}"
        )
    else:
        r = analyze(design, case["pattern"], routing=case.get("routing"))
        out.update(
            routing=r.routing,
            flows=r.flows,
            result=f"full {r.fraction_full:.3f} mean {r.bandwidth['mean']:.3f}"
            + (f" coll {r.collective_fraction:.3f}" if r.collective_fraction is not None else ""),
        )
    out["wall_s"] = round(time.perf_counter() - t1, 1)
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes only")
    parser.add_argument("--case", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cases = QUICK if args.quick else CASES
    if args.case is not None:
        print(json.dumps(run_case(cases[args.case])))
        return
    head = f"{'size':>22} {'pattern':>15} {'routing':>9} {'flows':>10} {'wall s':>7} "
    head += f"{'peak MiB':>8}  result"
    print(head)
    for k, case in enumerate(cases):
        cmd = [sys.executable, __file__, "--case", str(k)] + (["--quick"] if args.quick else [])
        res = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        size = f"{case['topology']} {case['gpus']} GPU"
        print(
            f"{size:>22} {case['pattern']:>15} {res['routing']:>9} {res['flows']:>10} "
            f"{res['wall_s']:>7} {res['peak_mib']:>8}  {res['result']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
