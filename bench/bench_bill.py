"""Plan, lay out, cable and bill whole fabrics (``pipeline.build.build``); time and peak memory.

Each case runs in a fresh subprocess so its peak RSS is its own. The default cases are the
issue's (target: the 32,768-GPU Matrix with layout and bill under 60 s); ``--sweep`` walks
every family over sizes up to its maximum on 51.2T switches at 200G (odd bundles and
one-link-per-pair meshes included) and prints one row per size, failures with their reason.
Prints tables; never gates CI.

Usage: python bench/bench_bill.py [--sweep] [--step GPUS]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

H20 = "h20-4x2x200g"
CASES = [
    ("matrix", 32768, H20, "cx864e-n"),
    ("roft", 20480, H20, "cx864e-n"),
    ("fat-tree", 16384, H20, "cx864e-n"),
    ("matrix", 5120, H20, "cx864e-n"),
    ("roft", 1016, "dgx-h100", "qm9700"),
]
#: largest size each family reaches on cx864e-n with 200G dual-port nodes (1:1)
MAXIMA = {"matrix": 32768, "roft": 65536, "fat-tree": 65536, "rail-only": 2048}


def run_one(family: str, gpus: int, node: str, switch: str) -> dict[str, object]:
    from railplan.catalog import load_catalog
    from railplan.errors import RailplanError
    from railplan.pipeline.build import build
    from railplan.spec import spec_from_dict

    catalog = load_catalog()
    spec = spec_from_dict(
        {
            "cluster": {"gpus": gpus, "node": node},
            "fabric": {"topology": family, "switches": [switch]},
        }
    )
    t0 = time.perf_counter()
    try:
        built = build(spec, catalog)
    except RailplanError as exc:
        return {"family": family, "gpus": gpus, "switch": switch, "ok": f"no: {exc}"[:90]}
    total = time.perf_counter() - t0
    d = built.design
    assert built.bom is not None
    t = built.bom.totals
    return {
        "family": family,
        "gpus": gpus,
        "switch": switch,
        "switches": len(d.switches),
        "links": len(d.links),
        "plant_links": t.plant_links,
        "panels": f"{t.panels} ({t.panel_units} U)",
        "cost": f"{t.cost_usd / 1e6:.1f} M$",
        "total_s": round(total, 1),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "ok": "yes",
    }


def sweep_cases(step: int) -> list[tuple[str, int, str, str]]:
    out = []
    for family, top in MAXIMA.items():
        sizes = sorted({*range(step, top + 1, step), top})
        out += [(family, g, H20, "cx864e-n") for g in sizes]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true", help="every family over sizes to its maximum")
    ap.add_argument("--step", type=int, default=2560, help="GPU step of the sweep")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(*json.loads(args.one))))
        return
    cols = ["family", "gpus", "switch", "switches", "links", "plant_links", "panels", "cost",
            "total_s", "peak_mib", "ok"]  # fmt: skip
    print(" | ".join(cols))
    print(" | ".join("---" for _ in cols))
    for case in sweep_cases(args.step) if args.sweep else CASES:
        out = subprocess.run(
            [sys.executable, __file__, "--one", json.dumps(case)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        row = json.loads(out)
        print(" | ".join(str(row.get(c, "")) for c in cols), flush=True)


if __name__ == "__main__":
    main()
