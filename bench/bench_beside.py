"""The work after the layout of a big job, alone and beside a forked child: the two-core floor.

``plan -o`` writes design.json in the parent while a forked child checks and bills the laid-out
design (``cli/finish_beside.py``). This bench lays one design out once, in-process, then times
each way of doing that remaining work, ``--repeat`` times interleaved (median, fastest and
slowest):

- *write alone*: design.json and spec.yaml encoded and written, no child, and of it the
  encoding of the two big row lists (cables and links);
- *check and bill alone*: ``pipeline.build.finish`` in a forked child while the parent waits
  (always in a child, as ``plan -o`` runs it, so no run warms the parent's caches for the next);
- *write beside a sleeping child*: the cost of the child's copy-on-write pages alone (the
  parent's reference counts land on pages the child still shares);
- *write beside the check and bill*: what ``plan -o`` does, with the child's own time.

    python bench/bench_beside.py                                  # 131,072 GPUs, qm9700, 2 planes
    python bench/bench_beside.py --switch cx864e-n --planes 1 --repeat 5
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from railplan.catalog import load_catalog
from railplan.design.io import _BLOCK_ROWS, _rows_text, design_json_chunks
from railplan.pipeline.build import Build, build, finish, settled
from railplan.render.atomic import write_set
from railplan.spec import Spec, spec_from_dict, spec_to_yaml


def beside(child: Callable[[], None], parent: Callable[[], None]) -> tuple[float, float]:
    """Seconds of ``parent`` while a forked child runs ``child``, and the child's own seconds."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: time its work, send the seconds, leave without cleanup
        os.close(read_fd)
        t0 = time.perf_counter()
        child()
        os.write(write_fd, repr(time.perf_counter() - t0).encode())
        os._exit(0)
    os.close(write_fd)
    mine = timed(parent)
    with os.fdopen(read_fd, "rb") as pipe:
        theirs = float(pipe.read() or "nan")
    os.waitpid(pid, 0)
    return mine, theirs


def timed(work: Callable[[], None]) -> float:
    t0 = time.perf_counter()
    work()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=131072)
    ap.add_argument("--switch", default="qm9700")
    ap.add_argument("--planes", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gc.disable()  # as the console run has it (cli/app.py)
    spec: Spec = spec_from_dict(
        {
            "cluster": {"gpus": args.gpus, "node": "dgx-h100"},
            "fabric": {"switches": [args.switch], "planes": args.planes, "topology": "roft"},
        }
    )
    built: Build = settled(build(spec, load_catalog(), deferred=True))
    out = Path(tempfile.mkdtemp(prefix="bench-beside-"))

    def write() -> None:
        shutil.rmtree(out / "o", ignore_errors=True)
        files = {"design.json": design_json_chunks(built.design), "spec.yaml": spec_to_yaml(spec)}
        write_set(out / "o", files)

    def encode(rows: tuple[Any, ...]) -> Callable[[], None]:
        """design.json's text of one row list, block by block as the writer makes it."""

        def work() -> None:
            for at in range(0, len(rows), _BLOCK_ROWS):
                _rows_text(rows[at : at + _BLOCK_ROWS])

        return work

    def check_and_bill() -> None:
        finish(built, bill=True)

    samples: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        rows = {
            "write alone": timed(write),
            f"  of it: encode the cables ({len(built.design.cables):,})": timed(
                encode(built.design.cables)
            ),
            f"  of it: encode the links ({len(built.design.links):,})": timed(
                encode(built.design.links)
            ),
            "check and bill alone": beside(check_and_bill, lambda: None)[1],
            "write beside a sleeping child": beside(lambda: time.sleep(5), write)[0],
        }
        rows["write beside the check and bill"], rows["  the child's check and bill"] = beside(
            check_and_bill, write
        )
        for name, seconds in rows.items():
            samples.setdefault(name, []).append(seconds)
    shutil.rmtree(out, ignore_errors=True)
    print(f"{args.gpus:,} GPUs, {args.switch}, {args.planes} plane(s); {args.repeat} runs each")
    print("| work | median s | range s |\n|---|---:|---|")
    for name, values in samples.items():
        print(f"| {name} | {statistics.median(values):.2f} | {min(values):.2f}-{max(values):.2f} |")


if __name__ == "__main__":
    main()
