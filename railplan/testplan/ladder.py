"""The scale ladder: all-reduce, all-gather, reduce-scatter and all-to-all on ever larger sets.

Rungs, smallest first: one node, a pair, each rail alone (``NCCL_TESTS_SPLIT``), one scalable
unit, one pod, the whole fabric; a rung whose node set equals a smaller rung's is left out. Each
run's expectation is the performance model's curve for its collective and node count
(``perf_model.nccl_curve``) averaged over the plan's message sizes, times the collision
analyzer's share for the same node set (ring, all-to-all, or the pair alone), as the NCCL
section derives its own. The one-node rung is inside the node (NVLink or xGMI), which the model
does not predict: it must reach at least what the pair rung expects of the same collective, since
a node slower inside than over its NICs caps every rung above it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from railplan.testplan.context import PlanContext
from railplan.testplan.model import PlanTest, Section
from railplan.testplan.nccl import ALLTOALL_NODES, nccl_test
from railplan.testplan.prediction import Prediction

COLLECTIVES = (("all_reduce", "AR"), ("all_gather", "AG"), ("reduce_scatter", "RS"),
               ("alltoall", "A2A"))  # fmt: skip
RUNGS = ("node", "pair", "rail", "su", "pod", "fabric")


def rung_nodes(
    ctx: PlanContext, reps: Sequence[tuple[str, str, str]]
) -> list[tuple[str, list[str]]]:
    """(rung, its nodes) for every rung this design has, smallest first."""
    nodes = ctx.design.nodes
    if not nodes:
        return []
    first = nodes[0]
    out: list[tuple[str, list[str]]] = [("node", [first.id])]
    every = [n.id for n in nodes]
    if reps:
        out.append(("pair", [reps[0][1], reps[0][2]]))
    if len(every) >= 2:
        out.append(("rail", every))
    su = [n.id for n in nodes if n.su == first.su and n.pod == first.pod]
    pod = [n.id for n in nodes if n.pod == first.pod]
    if 2 < len(su) < len(every):
        out.append(("su", su))
    if len(su) < len(pod) < len(every):
        out.append(("pod", pod))
    if len(every) > 2:
        out.append(("fabric", every))
    return out


def ladder_section(ctx: PlanContext, reps: Sequence[tuple[str, str, str]]) -> Section:
    """Every rung x every collective, each with its expectation."""
    fab = ctx.fabric
    g = ctx.design.shape.gpus
    far = max((fab.switch_hops(c) for c, _, _ in reps), default=1)
    rungs = rung_nodes(ctx, reps)
    tests: list[PlanTest] = []
    pair_tests: dict[str, PlanTest] = {}
    for rung, members in rungs:
        if rung == "node":
            continue
        hops = _hops(ctx, members, far)
        for op, tag in COLLECTIVES:
            job = members[:ALLTOALL_NODES] if op == "alltoall" and rung != "pair" else members
            pred = _prediction(ctx, rung, op, job)
            split = f"MOD {g}" if rung == "rail" else None
            title = f"{rung} rung: {op} on {_who(rung, job)}"
            t = nccl_test(ctx, f"LAD-{rung.upper()}-{tag}", op, title, job, pred, split=split,
                          kind=f"ladder_{op}", hops=hops)  # fmt: skip
            tests.append(t)
            if rung == "pair":
                pair_tests[op] = t
    node = [m for r, m in rungs if r == "node"]
    if node and pair_tests:
        head = []
        for op, tag in COLLECTIVES:
            floor = pair_tests[op].checks[0]
            check = replace(
                floor,
                reason=f"one node ({g} GPUs inside it): the model predicts the network, not the "
                f"node's own links, so the rung must reach at least the pair rung's {op} "
                f"expectation (a node slower inside than over its NICs caps every rung above); "
                f"pair rung: {floor.reason}",
                curve=(),
            )
            title = f"node rung: {op} inside {node[0][0]}"
            head.append(nccl_test(ctx, f"LAD-NODE-{tag}", op, title, node[0], _alone(),
                                  kind=f"ladder_{op}", check=check))  # fmt: skip
        tests = head + tests
    intro = (
        "The scale ladder, smallest first: "
        + ", ".join(f"{r} ({len(m)} node{'s' if len(m) > 1 else ''})" for r, m in rungs)
        + ". Each rung runs all_reduce_perf, all_gather_perf, reduce_scatter_perf and "
        "alltoall_perf over the plan's message sizes and passes on its own 'Avg bus bandwidth' "
        "(nccl-tests' 0.9 x NCCL_TESTS_MIN_BW rule, every size against its own prediction). "
        "The expectation is the performance model's curve for that collective and node count "
        "times the collision analyzer's share for that node set; the rail rung runs each rail's "
        "communicator alone. The first rung that fails names the scale where the fault is: the "
        "node, a pair's path, one rail, an SU's leaves, a pod's spines, or the core."
    )
    return Section("ladder", "Scale ladder", intro, tuple(tests))


def _alone() -> Prediction:
    return Prediction(1.0, 1.0, "inside one node")


def _who(rung: str, job: Sequence[str]) -> str:
    if rung == "pair":
        return f"{job[0]} + {job[1]}"
    if rung == "rail":
        return f"each rail of {len(job)} nodes alone"
    return f"{len(job)} nodes"


def _hops(ctx: PlanContext, members: Sequence[str], far: int) -> int:
    """Switches the farthest flow of a rung crosses (pairs from the rung's first node)."""
    if len(members) == len(ctx.design.nodes):
        return far
    fab = ctx.fabric
    u = members[0]
    return max((fab.switch_hops(fab.pair_class(u, v)) for v in members[1:]), default=1)


def _prediction(ctx: PlanContext, rung: str, op: str, job: Sequence[str]) -> Prediction:
    """The analyzer's share for this rung's pattern on its own node set."""
    p = ctx.predictor
    if rung == "pair":
        return p.pairs([(job[0], job[1])])[0]
    every = len(job) == len(ctx.design.nodes)
    if op == "alltoall":
        return p.pattern("alltoall") if every else p.pattern("alltoall", nodes=list(job))
    return p.pattern("ring") if every else p.pattern("ring", order=list(job))


__all__ = ["COLLECTIVES", "RUNGS", "ladder_section", "rung_nodes"]
