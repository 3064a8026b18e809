"""The cabling sheets and labels PDFs alone: time per document and the bytes, before and after.

Each example is laid out once (``railplan sheets --design-out``, in this checkout); every run
then loads that design.json in a fresh process and draws the sheets and the labels in turn,
timing each (wall and CPU seconds of the process, worker threads included) and hashing the
PDF. With ``--before DIR`` the railplan in DIR (another checkout) draws the same designs, the
two taking turns run by run, and the last column says whether both gave the same bytes.

    python bench/bench_sheets.py                        # the four examples, medians of 3
    python bench/bench_sheets.py --only 16k --before ../old-checkout
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ("seed003-matrix", "h100-1k", "matrix-4k", "h100-16k-3tier")

#: run in a fresh process: draw sheets and labels of one design.json, print times and hashes
DRAW = r"""
import gc, hashlib, json, sys, time
from pathlib import Path
from railplan.catalog import load_catalog
from railplan.physical.bom import bom
from railplan.pipeline.source import read_design
from railplan.render.pdf_labels import render_labels
from railplan.render.pdf_sheets import render_sheets
from railplan.testplan import design_hash
gc.disable()  # as a console run has it
design = read_design(Path(sys.argv[1]))
digest = design_hash(design)
bill = bom(design, load_catalog())
out = {}
for name, draw in (("sheets", lambda: render_sheets(design, bill, "bench", digest)),
                   ("labels", lambda: render_labels(design, "avery-l7654", "bench", digest))):
    wall, cpu = time.perf_counter(), time.process_time()
    pdf, pages = draw()
    out[name] = (time.perf_counter() - wall, time.process_time() - cpu, pages,
                 hashlib.sha256(pdf).hexdigest())
print(json.dumps(out))
"""


def draw(tree: Path, design: Path) -> dict[str, list[Any]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", DRAW, str(design)], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    result: dict[str, list[Any]] = json.loads(proc.stdout)
    return result


def laid_out(example: str, folder: Path) -> Path:
    design = folder / f"{example}.design.json"
    subprocess.run([sys.executable, "-m", "railplan", "sheets", f"examples/{example}.yaml",
                    "-o", str(folder / example), "--labels", "none", "--design-out",
                    str(design)], cwd=ROOT, check=True, capture_output=True)  # fmt: skip
    return design


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per tree (median reported)")
    ap.add_argument("--only", help="only examples whose name contains this text")
    ap.add_argument("--before", type=Path, help="another checkout to run beside this one")
    args = ap.parse_args()
    trees = [args.before.resolve(), ROOT] if args.before else [ROOT]
    print(f"load average at start {os.getloadavg()[0]:.2f}; medians of {args.repeat}")
    cols = " | ".join(f"{doc} {t}: wall s (CPU s) [wall range]" for t in
                      (("before", "after") if args.before else ("",)) for doc in ("sheets", "labels"))  # fmt: skip
    print(f"| design | pages | {cols} | same bytes |")
    print("|---|---:|" + "---:|" * (2 * len(trees)) + "---|")
    with tempfile.TemporaryDirectory() as tmp:
        for example in EXAMPLES:
            if args.only and args.only not in example:
                continue
            design = laid_out(example, Path(tmp))
            runs: dict[Path, list[dict[str, list[Any]]]] = {t: [] for t in trees}
            for i in range(args.repeat):
                for tree in trees if i % 2 == 0 else trees[::-1]:
                    runs[tree].append(draw(tree, design))
            cells = []
            for tree in trees:
                for doc in ("sheets", "labels"):
                    walls = sorted(float(r[doc][0]) for r in runs[tree])
                    cpu = statistics.median(float(r[doc][1]) for r in runs[tree])
                    cells.append(f"{statistics.median(walls):.2f} ({cpu:.2f}) "
                                 f"[{walls[0]:.2f}-{walls[-1]:.2f}]")  # fmt: skip
            hashes = {
                (doc, r[doc][3]) for t in trees for r in runs[t] for doc in ("sheets", "labels")
            }
            pages = runs[ROOT][0]
            same = "yes" if len(hashes) == 2 else "NO"
            print(f"| {example} | {pages['sheets'][2]} + {pages['labels'][2]} | "
                  f"{' | '.join(cells)} | {same} |", flush=True)  # fmt: skip
    print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
