"""The whole build stage by stage at growing sizes: which stages grow faster than the links.

Each size runs ``railplan.pipeline.build`` once in a fresh process (DGX H100 nodes; qm9700,
two planes, ROFT unless --switch and --planes say otherwise) and times the stages by the build's own progress messages: topology, floor,
placement, tray routing, media and cabling, the laid-out check and the bill. The last columns
divide each stage's time at the largest size by its time at the one before: a stage linear in
links grows by the ratio of the link counts (2 for doubled GPUs), a quadratic one by 4.

    python bench/bench_stages.py                        # 32k, 65k, 131k GPUs
    python bench/bench_stages.py --gpus 16384 32768
    python bench/bench_stages.py --gpus 131072 --switch cx864e-n --planes 1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

#: the stage a progress message starts (the message prefix), in build order
STAGES = (
    ("planning the topology", "topology"),
    ("placing switches and cabling", "floor"),
    ("layout:", "placement"),
    ("routing every cable", "tray routing"),
    ("choosing media and cabling", "media and cabling"),
    ("checking the laid-out design", "check"),
    ("billing", "bill"),
)

CHILD = r"""
import json, sys, time
from railplan.catalog import load_catalog
from railplan.pipeline.build import build
from railplan.spec import spec_from_dict
gpus, switch, planes = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
spec = spec_from_dict({"cluster": {"gpus": gpus, "node": "dgx-h100"},
                       "fabric": {"switches": [switch], "planes": planes, "topology": "roft"}})
catalog = load_catalog()
marks = []
t0 = time.perf_counter()
built = build(spec, catalog, progress=lambda m: marks.append((time.perf_counter() - t0, m)))
marks.append((time.perf_counter() - t0, "end"))
print(json.dumps({"marks": marks, "links": len(built.design.links)}))
"""


def stage_times(gpus: int, switch: str = "qm9700", planes: int = 2) -> tuple[dict[str, float], int]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(gpus), switch, str(planes)],
        capture_output=True,
        text=True,
        check=True,
    )
    data = json.loads(out.stdout.strip().splitlines()[-1])
    marks = data["marks"]
    times: dict[str, float] = {}
    for i, (t, msg) in enumerate(marks[:-1]):
        name = next((n for prefix, n in STAGES if msg.startswith(prefix)), None)
        if name is not None:
            nxt = next(
                (
                    t2
                    for t2, m2 in marks[i + 1 :]
                    if m2 == "end" or any(m2.startswith(p) for p, _ in STAGES)
                ),
                t,
            )
            times[name] = times.get(name, 0.0) + nxt - t
    times["total"] = marks[-1][0]
    return times, int(data["links"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[32768, 65536, 131072])
    parser.add_argument("--switch", default="qm9700", help="the one switch model (catalog id)")
    parser.add_argument("--planes", type=int, default=2)
    args = parser.parse_args()
    rows = [(g, *stage_times(g, args.switch, args.planes)) for g in args.gpus]
    names = [n for _, n in STAGES] + ["total"]
    head = "| stage | " + " | ".join(f"{g:,} GPUs s" for g, _, _ in rows)
    growth = len(rows) >= 2
    if growth:
        head += f" | x from {rows[-2][0]:,} to {rows[-1][0]:,} |"
    print(head if head.endswith("|") else head + " |")
    print("|---|" + "---:|" * (len(rows) + int(growth)))
    for name in names:
        cells = [f"{t.get(name, 0.0):.2f}" for _, t, _ in rows]
        line = f"| {name} | " + " | ".join(cells)
        if growth:
            before, after = rows[-2][1].get(name, 0.0), rows[-1][1].get(name, 0.0)
            line += f" | {after / before:.1f}" if before > 0 else " | -"
        print(line + " |")
    links = " | ".join(f"{n:,}" for _, _, n in rows)
    extra = f" | x{rows[-1][2] / rows[-2][2]:.1f}" if growth else ""
    print(f"| links | {links}{extra} |")


if __name__ == "__main__":
    main()
