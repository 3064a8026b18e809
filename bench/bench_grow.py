"""Benchmark growth: the four growth cases of docs/growth.md, their moves, bounds and times.

Run: ``python bench/bench_grow.py``. Each case plans both sizes (laid out and billed) and
computes the change; the table prints links added, cables moved, the proved lower bound and
gap, what is bought, and the wall time of the growth step alone (planning excluded). Never
gates CI.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from railplan.catalog import load_catalog
from railplan.change.grow import grow, grow_phases
from railplan.pipeline.build import build
from railplan.spec import load_spec, spec_from_dict, spec_to_dict

ROOT = Path(__file__).resolve().parent.parent


def _spec(gpus: int) -> Any:
    raw = spec_to_dict(load_spec(ROOT / "examples" / "h100-1k.yaml"))
    raw["cluster"]["gpus"], raw["name"] = gpus, f"h100-{gpus}"
    return spec_from_dict(raw)


def main() -> None:
    catalog = load_catalog()
    rows = []
    t = time.perf_counter()
    phased = grow_phases(_spec(1024), catalog, [("su2", 512), ("su4", 1024)])
    rows.append(("2 SU cut from 4 SU -> 4 SU", phased.steps[0], time.perf_counter() - t))
    for small, big in ((512, 1024), (2048, 8192)):
        a, b = build(_spec(small), catalog).design, build(_spec(big), catalog).design
        t = time.perf_counter()
        g = grow(a, b, catalog)
        rows.append((f"{small} alone -> {big}", g, time.perf_counter() - t))
    t = time.perf_counter()
    phased = grow_phases(_spec(8192), catalog, [("p1", 2048), ("p2", 8192)])
    rows.append(("2048 cut from 8192 -> 8192", phased.steps[0], time.perf_counter() - t))
    print(
        f"{'growth':34} {'added':>7} {'moved':>6} {'bound':>6} {'gap':>4} {'bought USD':>14} {'s':>6}"
    )
    for name, g, secs in rows:
        print(
            f"{name:34} {len(g.change.added):7d} {g.moved:6d} {g.lower_bound:6d} {g.gap:4d} "
            f"{g.change.cost_usd:14,.0f} {secs:6.1f}"
        )


if __name__ == "__main__":
    main()
