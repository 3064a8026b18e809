"""TUI refresh benchmark: an 8k-GPU compare recomputed live while keys keep arriving.

With "compare all" selected, types the last digit of the GPU count (App.run_test, 100x32) and
times from that keystroke: every family's counts on screen, every first-fit bill in (cheapest
marked), every solved bill in, every stage done. Meanwhile it presses cursor keys every 50 ms
and times each one (and ten of them before, with nothing running), and a 5 ms timer records the longest stall of the UI's event loop. The
"thread" rows run the same library calls in a worker thread instead of child processes.

    python bench/bench_tui.py                      # 1,024 and 8,192 GPUs, both runners
    python bench/bench_tui.py --gpus 8192 --runners processes --placement first-fit
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass, field

import railplan
from railplan.tui.app import RailplanApp
from railplan.tui.compute import Outcome
from railplan.tui.runner import InlineRunner, ProcessRunner

SIZE = (100, 32)


@dataclass
class Run:
    runner: str
    gpus: int
    placement: str
    families: int = 0
    counts_s: float = 0.0
    first_bill_s: float = 0.0
    solved_s: float = 0.0
    done_s: float = 0.0
    key_ms: list[float] = field(default_factory=list)
    idle_key_ms: list[float] = field(default_factory=list)
    stall_ms: float = 0.0


def _billed(out: Outcome, solved: bool) -> bool:
    feasible = [r for r in out.rows if r.summary is not None]
    return all((r.placement == "solved" if solved else r.placement) or r.warning for r in feasible)


async def one(gpus: int, switch: str, runner: str, placement: str, debounce: float) -> Run:
    """Time one compare refresh of ``gpus`` GPUs from the keystroke that completes the count."""
    digits = str(gpus)
    spec = railplan.spec_from_dict(
        {"cluster": {"gpus": 8, "node": "dgx-h100"}, "fabric": {"switches": [switch]}}
    )
    app = RailplanApp(
        spec,
        debounce=debounce,
        runner=ProcessRunner() if runner == "processes" else InlineRunner(),
        placement=placement,
    )
    run = Run(runner, gpus, placement)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f6")  # compare all, on an 8-GPU cluster
        while not (app.outcome and app.outcome.done and app.shown == app.generation):
            await pilot.pause(0.05)
        app.query_one("#f-gpus").focus()
        await pilot.press("end", "backspace", *digits[:-1])  # not a whole node: no work starts
        while app.shown != app.generation:
            await pilot.pause(0.05)
        for i in range(10):  # the same keys with nothing running: the baseline
            k0 = time.perf_counter()
            await pilot.press("left" if i % 2 else "right")
            run.idle_key_ms.append((time.perf_counter() - k0) * 1000)
            await pilot.pause(0.05)
        last, stall = time.perf_counter(), 0.0

        def tick() -> None:
            nonlocal last, stall
            now = time.perf_counter()
            stall, last = max(stall, now - last), now

        timer = app.set_interval(0.005, tick)
        t0 = time.perf_counter()
        await pilot.press("end", digits[-1])
        gen = app.generation
        while True:
            out, now = app.outcome, time.perf_counter() - t0
            mine = out is not None and app.shown == gen
            if mine and out is not None and out.rows and not run.counts_s:
                run.counts_s = now
                run.families = sum(r.summary is not None for r in out.rows)
            if mine and out is not None and not run.first_bill_s and _billed(out, False):
                run.first_bill_s = now
            if mine and out is not None and not run.solved_s and _billed(out, True):
                run.solved_s = now
            if mine and out is not None and out.done:
                run.done_s = now
                break
            k0 = time.perf_counter()
            await pilot.press("left" if len(run.key_ms) % 2 else "right")
            run.key_ms.append((time.perf_counter() - k0) * 1000)
            await pilot.pause(0.05)
        timer.stop()
        run.stall_ms = stall * 1000
        assert app.outcome is not None and app.outcome.summary is not None, app.outcome.error
    return run


def table(runs: list[Run], debounce: float) -> str:
    lines = [
        "| runner | GPUs | placement | families | counts s | first-fit bills s | solved bills s "
        "| all done s | key p50 ms | key max ms | idle key p50 ms | loop stall max ms |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in runs:
        keys = r.key_ms or [0.0]
        solved = f"{r.solved_s:.2f}" if r.placement == "solve" else "-"
        lines.append(
            f"| {r.runner} | {r.gpus:,} | {r.placement} | {r.families} | {r.counts_s:.2f} | "
            f"{r.first_bill_s:.2f} | {solved} | {r.done_s:.2f} | "
            f"{statistics.median(keys):.0f} | {max(keys):.0f} | "
            f"{statistics.median(r.idle_key_ms or [0.0]):.0f} | {r.stall_ms:.0f} |"
        )
    lines.append(f"\nTimes from the keystroke, including the {debounce * 1000:.0f} ms debounce.")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--gpus", type=int, nargs="*", default=[1024, 8192])
    parser.add_argument("--switch", default="cx864e-n", help="switch model (128x400G default)")
    parser.add_argument("--runners", nargs="*", default=["processes", "thread"])
    parser.add_argument("--placement", nargs="*", default=["first-fit", "solve"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--debounce", type=float, default=0.2)
    args = parser.parse_args(argv)
    runs = [
        asyncio.run(one(gpus, args.switch, runner, placement, args.debounce))
        for gpus in args.gpus
        for placement in args.placement
        for runner in args.runners
        for _ in range(args.runs)
    ]
    print(table(runs, args.debounce))


if __name__ == "__main__":
    main()
