"""Benchmark the printable handouts: cabling sheets, labels, test plan (PDF, data, scripts).

Run: ``python bench/bench_docs.py`` (``--quick`` for the 1k-GPU case only). Targets: sheets +
labels + test plan for a 1k-GPU design under 20 s, for a 16k-GPU design under 60 s. The
design is planned and laid out first (first-fit placement; not part of the docs time). Each
case also reads the sheets back and checks that the cable tables list every cable once.
Never gates CI.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = [("1k GPUs", "h100-1k", 20.0), ("16k GPUs", "h100-16k-3tier", 60.0)]
SHOWN = re.compile(rb"\((C\d{5,})\)\s*Tj")


def listed_once(pdf: bytes, cables: list[str]) -> bool:
    """Cable ids shown in the 'Cable tables' section are exactly the schedule's, once each."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    top = [(o.title, reader.get_destination_page_number(o)) for o in reader.outline
           if not isinstance(o, list)]  # fmt: skip
    names = [t for t, _ in top]
    first = top[names.index("Cable tables")][1]
    last = top[names.index("Cable tables") + 1][1]
    seen: Counter[str] = Counter()
    for i in range(first, last):
        seen.update(m.decode() for m in SHOWN.findall(reader.pages[i].get_contents().get_data()))
    return seen == Counter(cables)


def run(example: str) -> dict[str, Any]:
    from railplan.catalog import load_catalog
    from railplan.physical.bom import bom
    from railplan.pipeline.layout import complete
    from railplan.pipeline.plan import plan
    from railplan.render.pdf_labels import render_labels
    from railplan.render.pdf_sheets import render_sheets
    from railplan.render.pdf_testplan import render_testplan
    from railplan.render.scripts import render_scripts
    from railplan.render.testplan_data import plan_to_json, plan_to_yaml
    from railplan.spec import load_spec
    from railplan.testplan import build_testplan, design_hash

    catalog = load_catalog()
    spec = load_spec(ROOT / "examples" / f"{example}.yaml")
    t0 = time.perf_counter()
    design, _ = complete(plan(spec, catalog), spec, catalog, method="naive")
    out: dict[str, Any] = {"gpus": design.gpus, "cables": len(design.cables)}
    out["layout_s"] = time.perf_counter() - t0
    t = time.perf_counter()
    cpu = time.process_time()
    digest = design_hash(design)
    sheets, out["sheets_pages"] = render_sheets(design, bom(design, catalog), "bench", digest)
    out["sheets_s"] = time.perf_counter() - t
    t = time.perf_counter()
    _, out["labels_pages"] = render_labels(design, "avery-l7654", "bench", digest)
    out["labels_s"] = time.perf_counter() - t
    t = time.perf_counter()
    tp = build_testplan(design, catalog)
    out["plan_s"] = time.perf_counter() - t
    t = time.perf_counter()
    _, out["testplan_pages"] = render_testplan(tp)
    plan_to_yaml(tp)
    plan_to_json(tp)
    render_scripts(tp, design)
    out["testplan_s"] = time.perf_counter() - t
    out["docs_s"] = out["sheets_s"] + out["labels_s"] + out["plan_s"] + out["testplan_s"]
    out["docs_cpu_s"] = time.process_time() - cpu
    out["once"] = listed_once(sheets, [c.id for c in design.cables])
    out["pairs"] = tp.coverage.pairs
    out["covered"] = f"{tp.coverage.covered_links}/{tp.coverage.inter_switch_links}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 1k-GPU case")
    args = parser.parse_args()
    cases = CASES[:1] if args.quick else CASES
    head = (f"{'case':9} {'cables':>7} {'layout s':>8} {'sheets':>13} {'labels':>13} "
            f"{'plan s':>7} {'test plan':>13} {'docs s':>7} {'target':>7} {'links':>12} "
            f"{'once':>5}")  # fmt: skip
    print(head)
    print("-" * len(head))
    for label, example, target in cases:
        r = run(example)
        ok = "ok" if r["docs_s"] < target else "SLOW"
        print(
            f"{label:9} {r['cables']:>7,} {r['layout_s']:>8.1f} "
            f"{r['sheets_pages']:>5}p {r['sheets_s']:>5.1f}s {r['labels_pages']:>5}p "
            f"{r['labels_s']:>5.1f}s {r['plan_s']:>7.1f} {r['testplan_pages']:>5}p "
            f"{r['testplan_s']:>5.1f}s {r['docs_s']:>7.1f} {target:>5.0f}s {ok:>2} "
            f"{r['covered']:>12} {'yes' if r['once'] else 'NO':>5}",
            flush=True,
        )
        # the machine is shared: the load beside the numbers says how far to trust them
        print(f"{'':9} docs CPU {r['docs_cpu_s']:.1f} s; load average "
              f"{os.getloadavg()[0]:.1f} after this case", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
