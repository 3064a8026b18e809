"""Judge one nccl-tests run against the plan's predicted curve, on the sizes the run used.

The plan's NCCL checks carry the performance model's curve (``testplan.perf_model``: alpha,
bus bandwidth at the analyzer's worst share, bus factor). A run passes when its "Avg bus
bandwidth" reaches nccl-tests' own rule, 0.9 x the mean prediction over the sizes it ran
(src/common.cu averages the busbw of every size), and every size reaches ``PER_SIZE_FLOOR`` of
its own prediction; the detail names the sizes that did not.
"""

from __future__ import annotations

from collections.abc import Sequence

from railplan.testplan.perf_model import NCCL_TESTS_FACTOR, PER_SIZE_FLOOR, curve_busbw


def size_text(n: int) -> str:
    """``1G``, ``512M``, ``8K``, ``100B``: nccl-tests' sizes in powers of 1024."""
    for unit, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def judge_curve(
    curve: Sequence[float],
    rows: Sequence[tuple[int, float]],
    average: float,
    sizes: Sequence[int] = (),
) -> tuple[str, str]:
    """("pass" | "fail" | "error", detail) for a run with ``rows`` (size, busbw GB/s) and the
    ``average`` it printed over ``sizes`` (default: the rows' sizes; a published run may give
    a few sizes' figures and the average of a longer sweep)."""
    if not rows:
        return "error", "no message sizes to judge"
    predicted = [curve_busbw(curve, s) for s, _ in rows]
    over = list(sizes) or [s for s, _ in rows]
    mean = sum(curve_busbw(curve, s) for s in over) / len(over)
    floor = NCCL_TESTS_FACTOR * mean
    slow = [
        f"{size_text(s)} {bw:.1f} < {PER_SIZE_FLOOR:g} x {p:.1f}"
        for (s, bw), p in zip(rows, predicted, strict=True)
        if bw < PER_SIZE_FLOOR * p - 1e-9
    ]
    detail = (
        f"{len(over)} sizes {size_text(over[0])}-{size_text(over[-1])}: avg "
        f"{average:.2f} GB/s vs {NCCL_TESTS_FACTOR:g} x predicted {mean:.2f} = {floor:.2f}"
    )
    if slow:
        detail += f"; {len(slow)} size(s) below their prediction: " + ", ".join(slow[:4])
    return ("fail" if average < floor - 1e-9 or slow else "pass"), detail
