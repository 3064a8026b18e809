"""NCCL collectives: nccl-tests runs per path class, per rail and across all nodes."""

from __future__ import annotations

from collections.abc import Sequence

from railplan.testplan.context import PlanContext
from railplan.testplan.expected import GDR_CHECK, NCCL_MIN_BW_FACTOR, nccl_check
from railplan.testplan.model import Check, PlanTest, Section
from railplan.testplan.perf_model import sweep
from railplan.testplan.prediction import Prediction

#: all-to-all expectations span at most this many nodes (a job on the first nodes)
ALLTOALL_NODES = 128
#: the nccl-tests (and rccl-tests) binary of each collective
BINARIES = {
    "all_reduce": "all_reduce_perf",
    "all_gather": "all_gather_perf",
    "reduce_scatter": "reduce_scatter_perf",
    "alltoall": "alltoall_perf",
}


def binary_of(kind: str) -> str:
    """The binary of a test kind (``nccl_all_gather``, ``ladder_alltoall``, ``pair`` ...)."""
    return next((b for op, b in BINARIES.items() if op in kind), "all_reduce_perf")


def nccl_test(
    ctx: PlanContext,
    tid: str,
    op: str,
    title: str,
    nodes: Sequence[str],
    pred: Prediction,
    split: str | None = None,
    refs: tuple[str, ...] = (),
    rnd: int = 0,
    kind: str | None = None,
    hops: int = 1,
    check: Check | None = None,
) -> PlanTest:
    """One nccl-tests run under mpirun: the env it needs, its bus-bandwidth check and GDR
    (``check``: a bus-bandwidth check derived elsewhere, e.g. a one-node ladder rung's)."""
    o = ctx.options
    sizes = sweep(o.nccl_min_bytes, o.nccl_max_bytes)
    g = ctx.design.shape.gpus
    if check is None:
        check = nccl_check(ctx.rates, g, op, len(nodes), pred, bool(split), sizes, hops)
    env = [("NCCL_DEBUG", "INFO"), ("NCCL_IB_HCA", ctx.hca_list())]
    if ctx.roce:
        env.append(("NCCL_IB_GID_INDEX", str(ctx.options.gid_index)))
    if len(nodes) == 2:
        env.append(("NCCL_ALGO", "Ring"))
    if split:
        env.append(split_env(ctx, split))
    # nccl-tests fails below 0.9 x NCCL_TESTS_MIN_BW: set it so that point is our threshold
    env.append(("NCCL_TESTS_MIN_BW", f"{check.threshold / NCCL_MIN_BW_FACTOR:.2f}"))
    hosts = (
        f"-H {','.join(f'{n}:{g}' for n in nodes)}" if len(nodes) <= 4 else "--hostfile $HOSTFILE"
    )
    binary = BINARIES[op]
    command = (
        f"mpirun -np {g * len(nodes)} {hosts} --bind-to numa "
        + " ".join(f"-x {k}={v}" if " " not in v else f'-x {k}="{v}"' for k, v in env)
        + f" {binary} -b {o.nccl_min_bytes} -e {o.nccl_max_bytes} -f 2 -g 1"
    )
    return PlanTest(
        id=tid,
        kind=kind or f"nccl_{op}",
        title=title,
        nodes=tuple(nodes),
        command=(command,),
        checks=(check, GDR_CHECK) if len(nodes) > 1 else (check,),
        env=tuple(env),
        refs=refs,
        devices=ctx.devices,
        round=rnd,
    )


def nccl_section(ctx: PlanContext, reps: list[tuple[str, str, str]]) -> Section:
    """Two-node runs per path class, all-reduce per rail and across all nodes, all-to-all."""
    fab, tests = ctx.fabric, []
    preds = ctx.predictor.pairs([(u, v) for _, u, v in reps])
    for (cls, u, v), pred in zip(reps, preds, strict=True):
        refs = tuple(fab.element_ref(e) for e in sorted(fab.pair_elements(u, v)))
        for op, tag in (("all_reduce", "AR"), ("alltoall", "A2A")):
            title = f"{op} {u} + {v} ({cls}), NCCL_ALGO=Ring"
            tests.append(nccl_test(ctx, f"NCCL-{tag}-2N-{cls}", op, title, (u, v), pred, refs=refs,
                                   hops=fab.switch_hops(cls)))  # fmt: skip
    nodes = [n.id for n in ctx.design.nodes]
    g = ctx.design.shape.gpus
    far = max((fab.switch_hops(c) for c, _, _ in reps), default=1)
    if len(nodes) >= 2:
        ring = ctx.predictor.pattern("ring")
        title = f"all_reduce on each rail alone (NCCL_TESTS_SPLIT=MOD {g}), {len(nodes)} nodes"
        tests.append(
            nccl_test(
                ctx, "NCCL-AR-RAILS", "all_reduce", title, nodes, ring, split=f"MOD {g}", hops=far
            )
        )
    if len(nodes) > 2:
        title = f"all_reduce across all {len(nodes)} nodes"
        tests.append(nccl_test(ctx, "NCCL-AR-ALL", "all_reduce", title, nodes, ring, hops=far))
        job = nodes[:ALLTOALL_NODES]
        a2a = ctx.predictor.pattern("alltoall", nodes=job)
        who = f"all {len(job)} nodes" if len(job) == len(nodes) else f"the first {len(job)} nodes"
        tests.append(
            nccl_test(
                ctx,
                f"NCCL-A2A-{len(job)}N",
                "alltoall",
                f"alltoall across {who}",
                job,
                a2a,
                hops=far,
            )
        )
    intro = (
        "nccl-tests all_reduce_perf and alltoall_perf. Two-node runs use NCCL_ALGO=Ring (Tree on "
        "two nodes mostly measures NVLink); the log must show NET/IB/<n>/GDRDMA on every "
        "inter-node channel. Bus bandwidth = algbw x 2(n-1)/n for all-reduce and x (n-1)/n for "
        "all-to-all (nccl-tests doc/PERFORMANCE.md), printed in GB/s (bytes). Across nodes a "
        "collective over every GPU is bounded by the node's aggregate NIC rate (NIC ports x line "
        "rate / 8), not by one NIC. A run passes on nccl-tests' own rule: its 'Avg bus "
        "bandwidth' (mean over the message sizes) at least 0.9 x NCCL_TESTS_MIN_BW, which the "
        "command sets so that this point is the plan's threshold."
    )
    if ctx.rates.gpu_vendor == "amd":
        intro += " " + RCCL_NOTE
    return Section("nccl", "NCCL collectives", intro, tuple(tests))


#: AMD GPUs: the same runs with ROCm's RCCL and rccl-tests
RCCL_NOTE = (
    "AMD GPUs: the collective library is RCCL (ROCm's NCCL, which reads the same NCCL_* "
    "settings and logs NET/IB/<n>/GDRDMA the same way) and the binaries are rccl-tests' "
    "all_reduce_perf and alltoall_perf (ROCm/rccl-tests, built into rccl-tests/build; the "
    "scripts look in /opt/rccl-tests/build unless NCCL_TESTS says otherwise). rccl-tests "
    "judges 'Avg bus bandwidth' against NCCL_TESTS_MIN_BW as nccl-tests does and splits the "
    "ranks by NCCL_TESTS_SPLIT_MASK (rank & mask, src/common.cu) instead of NCCL_TESTS_SPLIT."
)


def split_env(ctx: PlanContext, split: str) -> tuple[str, str]:
    """nccl-tests' ``NCCL_TESTS_SPLIT=MOD g``; on AMD, rccl-tests' ``NCCL_TESTS_SPLIT_MASK``
    (color = rank & mask: the same split as MOD g when g is a power of two)."""
    g = ctx.design.shape.gpus
    if ctx.rates.gpu_vendor == "amd" and split == f"MOD {g}" and g & (g - 1) == 0:
        return ("NCCL_TESTS_SPLIT_MASK", f"0x{g - 1:x}")
    return ("NCCL_TESTS_SPLIT", split)
