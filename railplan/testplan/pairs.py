"""Pair tests: two-node all-reduce on the chosen pairs, round by round."""

from __future__ import annotations

from railplan.testplan.context import PlanContext
from railplan.testplan.coverage import ChosenPairs
from railplan.testplan.model import Section
from railplan.testplan.nccl import nccl_test


def pairs_section(ctx: PlanContext, chosen: ChosenPairs) -> Section:
    """One two-node all-reduce per chosen pair, ordered by round."""
    fab = ctx.fabric
    order = sorted(range(len(chosen.pairs)), key=lambda i: (chosen.rounds[i], i))
    ordered = [chosen.pairs[i] for i in order]
    predicted = ctx.predictor.pairs(ordered)
    tests = []
    for n, (i, pred) in enumerate(zip(order, predicted, strict=True), start=1):
        u, v = chosen.pairs[i]
        r = chosen.rounds[i]
        title = f"round {r}: {u} + {v} ({fab.pair_class(u, v)})"
        refs = tuple(fab.element_ref(e) for e in sorted(chosen.groups[i]))
        tests.append(nccl_test(ctx, f"PAIR-{n:04d}", "all_reduce", title, (u, v), pred,
                                refs=refs, rnd=r, kind="pair"))  # fmt: skip
    c = chosen.coverage
    intro = (
        f"Two-node ring all-reduce on {c.pairs} node pairs in {c.rounds} round(s). The pairs of "
        "a round share no node and no link, so they run together and each behaves as if alone. "
        f"CP-SAT chose the fewest pairs that give every node {chosen.partners} partner(s) and "
        "cross every switch-to-switch link it can. A node slow with every partner is a node "
        "fault (ACS, GPUDirect); slow with only some partners, a fabric or routing fault."
    )
    return Section("pairs", "Pair tests", intro, tuple(tests))
