"""The whole build stage by stage at growing sizes: which stages grow faster than the links.

Each size runs ``railplan.pipeline.build`` once in a fresh process (DGX H100 nodes; qm9700,
two planes, ROFT unless --switch and --planes say otherwise) and times the stages by the build's own progress messages: topology, floor,
placement, tray routing, media and cabling, the laid-out check and the bill. The last columns
divide each stage's time at the largest size by its time at the one before: a stage linear in
links grows by the ratio of the link counts (2 for doubled GPUs), a quadratic one by 4.

The fibre plant is work of another kind that appears only once racks stand far enough apart
(none at 65k, 9,136 links at 131k): its share of the media stage (``build_plant``, retries
included) and of the check (``check_plant``) is timed on its own and shown under those stages,
with the plant's link count, so each stage can be read without it.

    python bench/bench_stages.py                        # 32k, 65k, 131k GPUs
    python bench/bench_stages.py --gpus 16384 32768
    python bench/bench_stages.py --gpus 131072 --switch cx864e-n --planes 1
    python bench/bench_stages.py --gpus 131072 262144 --planes 2 4   # one plane count a size
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
import railplan.physical.cabling as cabling, railplan.validate.cables as checks
spent = {"plant": 0.0, "plant check": 0.0}
def timed(name, f):
    def run(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            spent[name] += time.perf_counter() - t
    return run
cabling.build_plant = timed("plant", cabling.build_plant)
checks.check_plant = timed("plant check", checks.check_plant)
marks = []
t0 = time.perf_counter()
built = build(spec, catalog, progress=lambda m: marks.append((time.perf_counter() - t0, m)))
marks.append((time.perf_counter() - t0, "end"))
plant = len({s.link_id for s in built.design.segments})
print(json.dumps({"marks": marks, "links": len(built.design.links), "spent": spent,
                  "plant links": plant}))
"""


def stage_times(
    gpus: int, switch: str = "qm9700", planes: int = 2
) -> tuple[dict[str, float], int, int]:
    """Seconds per stage (the plant's share as "plant" and "plant check"), links, plant links."""
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
    times.update(data["spent"])
    return times, int(data["links"]), int(data["plant links"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, nargs="+", default=[32768, 65536, 131072])
    parser.add_argument("--switch", default="qm9700", help="the one switch model (catalog id)")
    parser.add_argument(
        "--planes",
        type=int,
        nargs="+",
        default=[2],
        help="planes: one for all sizes, or one a size",
    )
    args = parser.parse_args()
    planes = args.planes * len(args.gpus) if len(args.planes) == 1 else args.planes
    if len(planes) != len(args.gpus):
        parser.error("--planes takes one count, or one per --gpus size")
    rows = [(g, *stage_times(g, args.switch, p)) for g, p in zip(args.gpus, planes, strict=True)]
    names: list[str] = []
    for _, name in STAGES:
        names.append(name)
        if name == "media and cabling":
            names.append("plant")
        if name == "check":
            names.append("plant check")
    names.append("total")
    label = {"plant": "  of which the fibre plant", "plant check": "  of which the fibre plant"}
    head = "| stage | " + " | ".join(
        f"{g:,} GPUs ({p} planes) s" for (g, *_), p in zip(rows, planes, strict=True)
    )
    growth = len(rows) >= 2
    if growth:
        head += f" | x from {rows[-2][0]:,} to {rows[-1][0]:,} |"
    print(head if head.endswith("|") else head + " |")
    print("|---|" + "---:|" * (len(rows) + int(growth)))
    for name in names:
        cells = [f"{t.get(name, 0.0):.2f}" for _, t, _, _ in rows]
        line = f"| {label.get(name, name)} | " + " | ".join(cells)
        if growth:
            before, after = rows[-2][1].get(name, 0.0), rows[-1][1].get(name, 0.0)
            # a stage under 10 ms at the smaller size (the plant where there is none) has no
            # growth worth a ratio
            line += f" | {after / before:.1f}" if before >= 0.01 else " | -"
        print(line + " |")
    for title, numbers in (
        ("links", [links for _, _, links, _ in rows]),
        ("fibre-plant links", [plant for _, _, _, plant in rows]),
    ):
        counts = " | ".join(f"{n:,}" for n in numbers)
        first, last = (numbers[-2], numbers[-1]) if growth else (0, 0)
        extra = (f" | x{last / first:.1f}" if first else " | -") if growth else ""
        print(f"| {title} | {counts}{extra} |")


if __name__ == "__main__":
    main()
